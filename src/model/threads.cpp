#include "omn/model/threads.h"

#include <ATen/Parallel.h>

#include "omn/errors.h"
#include "omn/io/terminal_text.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <string_view>
#include <cstdlib>
#include <thread>

namespace omn::model {

int useThreads(int requested) {
  int threads = requested;
  if (threads <= 0)
    if (const char* env = std::getenv("OMP_NUM_THREADS"); env && *env) {
      // the environment is input like a flag: range-checked before narrowing (OpenMP's own
      // reading would try to allocate for 10^11 threads); a list ("4,2") is OpenMP's nesting form
      const std::string_view text(env);
      long long n = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec != std::errc() || end == text.data() || (end != text.data() + text.size() && *end != ',') || n < 1 ||
          n > kMaxThreads)
        throw UsageError("OMP_NUM_THREADS=" + io::terminalSafe(std::string(text)) + " (the thread count when --threads is 0): expected a whole number from 1 to " +
                         std::to_string(kMaxThreads));
      threads = static_cast<int>(n);
    }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  return at::get_num_threads();
}

}  // namespace omn::model
