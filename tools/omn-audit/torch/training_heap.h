// Memory settings for the training commands (train, study).
#pragma once
#include <malloc.h>

namespace omn::cli {

// Every training step frees and re-allocates the same activations and gradients (MBs each). With
// glibc's defaults each of them is an mmap/munmap pair plus page faults: half the run's CPU time
// went to the kernel, 3.1x slower (docs/PERFORMANCE.md). Keep freed memory in the heap instead;
// peak RSS stays the peak of live tensors.
inline void keepFreedMemoryInHeap() {
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  ::mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace omn::cli
