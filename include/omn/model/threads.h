// The CPU thread count of libtorch's intra-op pool: process-wide state, so set in one place, by the
// command at the edge (eval, intervene) or by the trainer for its run, never as a side effect of
// opening a session.
#pragma once

namespace omn::model {

// The most threads a --threads flag, a manifest's /model/threads or OMP_NUM_THREADS may ask for.
inline constexpr int kMaxThreads = 4096;

// requested > 0: that many; 0: OMP_NUM_THREADS when set, else every online CPU (libtorch's own
// default here is 1: OpenBLAS's OpenMP initialisation leaves omp_get_max_threads() at 1). Returns
// the count libtorch now uses. An OMP_NUM_THREADS that is not a whole number from 1 to kMaxThreads
// is a UsageError naming it.
int useThreads(int requested);

}  // namespace omn::model
