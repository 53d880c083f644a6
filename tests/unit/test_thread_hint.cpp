// The busy-machine hint: said only when the default thread count meets other tasks holding the
// cores, and then it names them, the CPUs, the threads and the count that fits.
#include <gtest/gtest.h>

#include "omn/model/threads.h"

using omn::model::busyMachineHint;

TEST(BusyMachineHint, OnlyWhenTheDefaultCountMeetsABusyMachine) {
  // 2 CPUs, 2 threads by default: quiet while nothing else runs
  EXPECT_EQ(busyMachineHint(0, 2, 2, true), "");
  EXPECT_EQ(busyMachineHint(1, 2, 2, true),
            "this machine is busy (1 other task running on 2 CPUs): 2 threads will wait on each other; if it runs slowly, "
            "try --threads 1");
  EXPECT_NE(busyMachineHint(3, 2, 2, true).find("(3 other tasks running on 2 CPUs)"), std::string::npos);
  EXPECT_NE(busyMachineHint(3, 2, 2, true).find("try --threads 1"), std::string::npos);
  // asked for, a single thread, or an unreadable count: nothing to say
  EXPECT_EQ(busyMachineHint(1, 2, 2, false), "");
  EXPECT_EQ(busyMachineHint(5, 2, 1, true), "");
  EXPECT_EQ(busyMachineHint(-1, 2, 2, true), "");
  // 64 CPUs: one other task costs one core, and the hint says how many are left
  EXPECT_NE(busyMachineHint(1, 64, 64, true).find("try --threads 63"), std::string::npos);
  EXPECT_NE(busyMachineHint(10, 64, 64, true).find("try --threads 54"), std::string::npos);
}
