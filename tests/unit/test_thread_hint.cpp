// The busy-machine hint: said only when the default thread count meets other processes holding
// the cores, and then it names the load, the CPUs, the threads and the way out.
#include <gtest/gtest.h>

#include "omn/model/threads.h"

using omn::model::busyMachineHint;

TEST(BusyMachineHint, OnlyWhenTheDefaultCountMeetsABusyMachine) {
  // 2 CPUs, 2 threads by default: quiet below half a core of other load
  EXPECT_EQ(busyMachineHint(0.0, 2, 2, true), "");
  EXPECT_EQ(busyMachineHint(0.5, 2, 2, true), "");
  const std::string h = busyMachineHint(1.9, 2, 2, true);
  EXPECT_EQ(h, "this machine is busy (load average 1.90 on 2 CPUs): 2 threads will wait on each other; if it runs slowly, try --threads 1");
  // asked for, a single thread, or an unreadable load: nothing to say
  EXPECT_EQ(busyMachineHint(1.9, 2, 2, false), "");
  EXPECT_EQ(busyMachineHint(5.0, 2, 1, true), "");
  EXPECT_EQ(busyMachineHint(-1, 2, 2, true), "");
  // 16 CPUs: 3 other processes leave a core per thread only up to 16 threads on 16.5 cores
  EXPECT_EQ(busyMachineHint(0.4, 16, 16, true), "");
  EXPECT_NE(busyMachineHint(3.0, 16, 16, true), "");
}
