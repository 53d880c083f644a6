#include "mapping_guard.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "omn/errors.h"
#include "omn/io/terminal_text.h"

// Why a handler that only writes and exits. A read from a page of a file mapping that lies past
// the file's current end (someone truncated the checkpoint while it was mapped) raises SIGBUS in
// whichever thread touched it: often an OpenBLAS/OpenMP worker in the middle of a matrix product.
// Nothing can be recovered there: the weights the product was reading no longer exist, returning
// would re-run the faulting load forever, and throwing or longjmp-ing out of a signal handler
// across BLAS/OpenMP frames is undefined behaviour. Allocation, locks, stdio, spdlog and
// destructors are not async-signal-safe either. So the handler does the only safe things:
// finds the mapping in a fixed table through lock-free atomics, write(2)s one line naming the file
// and _exit(2)s with the integrity exit code (4). Nothing is flushed; the sweep's journal loses
// nothing because every record is written and synced when its condition finishes, so
// `intervene --resume` continues once the file is restored. A SIGBUS outside our mappings (or sent
// by kill) is handed back to the previous disposition.

namespace omn::io::mapping_guard {

namespace {

constexpr int kSlots = 1024;
constexpr std::size_t kPathBytes = 480;

struct Slot {
  std::atomic<const char*> begin{nullptr};  // published last, cleared first
  std::atomic<std::size_t> len{0};
  char path[kPathBytes] = {};
  std::size_t path_len = 0;
};
static_assert(std::atomic<const char*>::is_always_lock_free && std::atomic<std::size_t>::is_always_lock_free,
              "the SIGBUS handler reads the table through atomics: they must be lock-free");

Slot g_slots[kSlots];
std::mutex g_mutex;  // serialises remember/forget (never taken in the handler)
struct sigaction g_previous {};
std::atomic<bool> g_reporting{false};

void put(const char* s, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;  // nothing else can be done from here
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}
void put(const char* s) { put(s, std::strlen(s)); }
void putNumber(std::size_t v) {
  char buf[24];
  int i = sizeof buf;
  do buf[--i] = static_cast<char>('0' + v % 10), v /= 10;
  while (v > 0 && i > 0);
  put(buf + i, sizeof buf - static_cast<std::size_t>(i));
}

extern "C" void onSigbus(int sig, siginfo_t* info, void* context) {
  const char* addr = static_cast<const char*>(info->si_addr);
  const Slot* hit = nullptr;
  if (info->si_code > 0)  // raised by the kernel for a fault, not sent with kill(2)
    for (const Slot& s : g_slots) {
      const char* b = s.begin.load(std::memory_order_acquire);
      if (b && addr >= b && static_cast<std::size_t>(addr - b) < s.len.load(std::memory_order_relaxed)) {
        hit = &s;
        break;
      }
    }
  if (!hit) {  // not ours: restore whoever handled SIGBUS before and let the fault happen again
    if (g_previous.sa_flags & SA_SIGINFO) {
      if (g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
      return g_previous.sa_handler(sig);
    }
    ::sigaction(SIGBUS, &g_previous, nullptr);
    return;
  }
  if (g_reporting.exchange(true)) {  // another thread is already reporting: wait for its _exit
    for (;;) ::pause();
  }
  put("omn-audit: error: ");
  put(hit->path, hit->path_len);
  put(" changed during the run (truncated while mapped: byte ");
  putNumber(static_cast<std::size_t>(addr - hit->begin.load(std::memory_order_relaxed)));
  put(" of the ");
  putNumber(hit->len.load(std::memory_order_relaxed));
  put(" bytes mapped at the start is gone); stopped: restore the file and run again "
      "(intervene --resume keeps the conditions already journaled)\n");
  ::_exit(kExitIntegrity);
}

void install() {
  struct sigaction sa {};
  sa.sa_sigaction = onSigbus;
  sa.sa_flags = SA_SIGINFO;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

int remember(const void* begin, std::size_t len, const std::string& path) {
  std::lock_guard<std::mutex> lock(g_mutex);
  static const bool installed = (install(), true);
  (void)installed;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    if (s.begin.load(std::memory_order_relaxed)) continue;
    // escaped here, where allocating is allowed: the handler only copies these bytes out
    const std::string shown = io::terminalSafe(path, kPathBytes / 4 - 8);
    s.path_len = std::min(shown.size(), kPathBytes);
    std::memcpy(s.path, shown.data(), s.path_len);
    s.len.store(len, std::memory_order_relaxed);
    s.begin.store(static_cast<const char*>(begin), std::memory_order_release);
    return i;
  }
  return -1;
}

void forget(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_slots[slot].begin.store(nullptr, std::memory_order_release);
}

}  // namespace omn::io::mapping_guard
