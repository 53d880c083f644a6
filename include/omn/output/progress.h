// A progress bar on stderr with rate and ETA, shown only when stderr is a terminal and the work is
// large enough to wait for; silent otherwise (logs and CI stay clean).
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace omn::output {

class ProgressBar {
 public:
  // `unit_bytes`: the amounts are bytes (rate in MB/s); otherwise plain counts with `unit` per second.
  ProgressBar(std::string label, std::uint64_t total, bool enabled, bool unit_bytes = true, std::string unit = "");
  ~ProgressBar();
  void update(std::uint64_t done, const std::string& extra = "");  // thread-safe, throttled to ~10 Hz
  void finish();
  // nothing is shown until the work has taken this long (a quick job prints no bar at all)
  void quietFor(double seconds) { quiet_s_ = seconds; }

  static bool stderrIsTerminal();

 private:
  std::string label_, unit_;
  std::uint64_t total_;
  bool enabled_, bytes_, finished_ = false, shown_ = false;
  double quiet_s_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  std::mutex mu_;
};

}  // namespace omn::output
