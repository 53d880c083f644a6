#include "omn/model/threads.h"

#include <fstream>
#include <limits>

#include <ATen/Parallel.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string>
#include <thread>

#include "omn/errors.h"
#include "omn/io/terminal_text.h"

namespace omn::model {

namespace {
// OMP_NUM_THREADS as OpenMP reads it -- a list "4,2" (one count per nesting level), each a whole
// number, spaces around the items and a leading '+' allowed -- range-checked before narrowing
// (libgomp would try to allocate for 10^11 threads). The first item is the count used here.
int threadsFromEnvironment(const std::string& text) {
  auto fail = [&] {
    return UsageError("OMP_NUM_THREADS=" + io::terminalSafe(text) + " (the thread count when --threads or /model/threads is 0): " +
                      "expected whole numbers from 1 to " + std::to_string(kMaxThreads) + ", separated by commas");
  };
  int first = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    item = a == std::string::npos ? "" : item.substr(a, b - a + 1);
    if (!item.empty() && item[0] == '+') item.erase(0, 1);
    long long n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || n < 1 || n > kMaxThreads) throw fail();
    if (first == 0) first = static_cast<int>(n);
    if (comma == std::string::npos) return first;
    start = comma + 1;
  }
}
}  // namespace

int useThreads(int requested) {
  int threads = requested;
  if (threads <= 0)
    if (const char* env = std::getenv("OMP_NUM_THREADS"); env && *env) threads = threadsFromEnvironment(env);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  return at::get_num_threads();
}

int otherTasksRunning() {
  std::ifstream in("/proc/stat");
  std::string key;
  long long n = -1;
  while (in >> key) {
    if (key == "procs_running" && in >> n) return n >= 1 ? static_cast<int>(n - 1) : 0;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return -1;
}

bool threadsByDefault(int requested) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  return requested <= 0 && !(env && *env);
}

}  // namespace omn::model
