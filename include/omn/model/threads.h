// The CPU thread count of libtorch's intra-op pool: process-wide state, so set in one place, by the
// command at the edge (eval, intervene) or by the trainer for its run, never as a side effect of
// opening a session.
#pragma once
#include <cstdio>
#include <string>

namespace omn::model {

// The most threads a --threads flag, a manifest's /model/threads or OMP_NUM_THREADS may ask for.
inline constexpr int kMaxThreads = 4096;

// requested > 0: that many; 0: OMP_NUM_THREADS when set, else every online CPU (libtorch's own
// default here is 1: OpenBLAS's OpenMP initialisation leaves omp_get_max_threads() at 1). Returns
// the count libtorch now uses. An OMP_NUM_THREADS that is not a whole number from 1 to kMaxThreads
// is a UsageError naming it.
int useThreads(int requested);

// The hint a command logs when the thread count it would take by default (requested 0, no
// OMP_NUM_THREADS: every CPU) meets a busy machine. libtorch's threads meet at every operation, so
// one that shares its core with another process holds up the rest (train ran 0.1 steps/s with 2
// threads on a busy 2-core machine, 0.6 with --threads 1). `others` is how many other tasks are
// running now (otherTasksRunning(): the kernel's count, not the load average, which still holds
// the last command's own run); "" when the count was asked for, is 1, or a core is free for each
// thread. It suggests the cores the others leave.
inline std::string busyMachineHint(int others, int cpus, int threads, bool by_default) {
  if (!by_default || threads <= 1 || others < 0 || others + threads <= cpus) return "";
  const int free_cores = cpus - others > 1 ? cpus - others : 1;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "this machine is busy (%d other task%s running on %d CPUs): %d threads will wait on each other; "
                "if it runs slowly, try --threads %d",
                others, others == 1 ? "" : "s", cpus, threads, free_cores);
  return buf;
}
int otherTasksRunning();  // /proc/stat's procs_running less this one; -1 where it cannot be read
bool threadsByDefault(int requested);  // requested 0 and no OMP_NUM_THREADS: useThreads takes every CPU

}  // namespace omn::model
