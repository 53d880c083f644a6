// SIGINT and SIGTERM ask a long command (intervene, train, study) to stop at its next safe point
// (a sequence boundary, a training step): the one handler, installed by the command at the edge.
// What it stops must leave everything consistent and end in Interrupted (exit 130) naming the
// command that continues it.
#pragma once
#include <atomic>
#include <csignal>
#include <functional>

namespace omn::cli {

inline std::atomic<bool>& stopRequested() {
  static std::atomic<bool> flag{false};
  return flag;
}

extern "C" inline void omnOnStopSignal(int) { stopRequested() = true; }

// Installs the handler for SIGINT and SIGTERM; returns the question the library asks at each safe point.
inline std::function<bool()> stopOnSignals() {
  std::signal(SIGINT, omnOnStopSignal);
  std::signal(SIGTERM, omnOnStopSignal);
  return [] { return stopRequested().load(); };
}

}  // namespace omn::cli
