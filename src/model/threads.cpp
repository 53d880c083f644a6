#include "omn/model/threads.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace omn::model {

int useThreads(int requested) {
  int threads = requested;
  if (threads <= 0)
    if (const char* env = std::getenv("OMP_NUM_THREADS")) threads = std::atoi(env);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  return at::get_num_threads();
}

}  // namespace omn::model
