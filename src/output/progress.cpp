#include "omn/output/progress.h"

#include <unistd.h>

#include <cstdio>

namespace omn::output {

ProgressBar::ProgressBar(std::string label, std::uint64_t total, bool enabled, bool unit_bytes, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), enabled_(enabled), bytes_(unit_bytes),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar::~ProgressBar() { finish(); }

bool ProgressBar::stderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

void ProgressBar::update(std::uint64_t done, const std::string& extra) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  const double secs = std::chrono::duration<double>(now - start_).count();
  if (secs < quiet_s_) return;
  last_ = now;
  shown_ = true;
  const double frac = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  const double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total_ - std::min(done, total_)) / rate : 0.0;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(frac * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kWidth, ' ');
  if (bytes_)
    std::fprintf(stderr, "\r%s [%s] %5.1f%% %7.1f MB/s ETA %4.0fs %s", label_.c_str(), bar.c_str(), 100 * frac,
                 rate / 1e6, eta, extra.c_str());
  else
    std::fprintf(stderr, "\r%s [%s] %5.1f%% %8.1f %s/s ETA %4.0fs %s", label_.c_str(), bar.c_str(), 100 * frac, rate,
                 unit_.c_str(), eta, extra.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace omn::output
