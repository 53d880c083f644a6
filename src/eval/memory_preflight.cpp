#include "omn/eval/memory_preflight.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "omn/errors.h"

namespace omn::eval {

namespace {

std::int64_t parameterCount(const model::ModelConfig& c) {
  const std::int64_t d = c.d_model, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
  const std::int64_t layer = d * q + 2 * d * kv + q * d + 3 * d * c.ffn_hidden + 4 * d + 2 * c.head_dim;
  return c.vocab_size * d * (c.tied_output ? 1 : 2) + c.n_layers * layer + d;
}

std::string gib(std::int64_t bytes) {
  char b[32];
  const double x = static_cast<double>(bytes);
  if (bytes >= std::int64_t{1} << 30)
    std::snprintf(b, sizeof b, "%.1f GiB", x / static_cast<double>(std::int64_t{1} << 30));
  else
    std::snprintf(b, sizeof b, "%.0f MiB", std::max(1.0, x / static_cast<double>(1 << 20)));
  return b;
}

// a cgroup v2 limit less what the group holds and cannot give back: its usage counts the page cache
// (the checkpoint just hashed, files read before), which the kernel reclaims as MemAvailable does;
// -1 when there is no limit
std::int64_t cgroupRoom() {
  std::ifstream max_f("/sys/fs/cgroup/memory.max"), cur_f("/sys/fs/cgroup/memory.current"), stat_f("/sys/fs/cgroup/memory.stat");
  std::string max_s;
  std::int64_t cur = 0;
  if (!(max_f >> max_s) || max_s == "max" || !(cur_f >> cur)) return -1;
  std::int64_t file_cache = 0;
  std::string key;
  for (std::int64_t v = 0; stat_f >> key >> v;)
    if (key == "active_file" || key == "inactive_file") file_cache += v;
  const std::int64_t lim = std::strtoll(max_s.c_str(), nullptr, 10);
  return lim > 0 ? std::max<std::int64_t>(0, lim - std::max<std::int64_t>(0, cur - file_cache)) : -1;
}

}  // namespace

MemoryEstimate estimateEvalMemory(const model::ModelConfig& c, at::ScalarType dtype, model::AttentionPath path,
                                  const model::AttentionShape& shape) {
  const std::int64_t e = static_cast<std::int64_t>(c10::elementSize(dtype));
  const std::int64_t B = shape.batch, T = shape.seq_len, d = c.d_model, q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
  MemoryEstimate m;
  m.weights = parameterCount(c) * e;
  // one block's named intermediates in the working dtype (the residual, the normed input, q and its
  // normed and rotated copies, k and v and their copies repeated to the query heads, the attention
  // output, the gate, up and product of the feed-forward), the norms' float32 temporaries, the
  // rotary tables, and the final hidden states kept for the scorer (float32, twice with a reference)
  const std::int64_t per_token = e * (5 * d + 4 * q + 4 * kv + 2 * q + 3 * c.ffn_hidden) + 4 * (d + q) + 4 * 2 * c.head_dim + 8 * d + 16;
  m.activations = B * T * per_token;
  // the scores, their softmax (float32) and its working-dtype copy; the mask (bool, built from int64)
  const std::int64_t scores = model::attentionScoreBytes(path, shape);
  const std::int64_t block = std::min(T, model::attentionBlock());
  const std::int64_t mask = path == model::AttentionPath::Masked        ? B * T * T * 2
                            : path == model::AttentionPath::PerDocument ? T * T * 2
                            : path == model::AttentionPath::Blockwise   ? B * block * block * 2 + 2 * B * c.n_heads * block * c.head_dim * 4
                                                                         : 0;
  m.attention = scores / 4 * 10 + mask;
  // the head widened to float32 for its products, three float32 chunks of logits (with a reference)
  // at the scorer's default chunk (eval/scorer.cpp)
  const std::int64_t chunk = std::clamp<std::int64_t>((std::int64_t{dtype == at::kFloat ? 8 : 2} << 20) / std::max<std::int64_t>(1, c.vocab_size), 16, 1024);
  m.logits = c.vocab_size * d * 4 + 3 * chunk * c.vocab_size * 4;
  return m;
}

std::int64_t availableMemory(std::string* source) {
  if (const char* env = std::getenv("OMN_MEMORY_AVAILABLE"); env && *env) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (*end != '\0' || v <= 0)
      throw UsageError("OMN_MEMORY_AVAILABLE: expected a positive number of bytes, got \"" + std::string(env).substr(0, 40) + "\"");
    if (source) *source = "OMN_MEMORY_AVAILABLE";
    return v;
  }
  std::int64_t avail = -1;
  std::ifstream mi("/proc/meminfo");
  for (std::string line; std::getline(mi, line);)
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ls(line.substr(13));
      std::int64_t kb = 0;
      if (ls >> kb) avail = kb * 1024;
    }
  if (source) *source = "MemAvailable in /proc/meminfo";
  const std::int64_t room = cgroupRoom();
  if (room >= 0 && (avail < 0 || room < avail)) {
    avail = room;
    if (source) *source = "the cgroup's memory.max";
  }
  return avail;
}

void requireMemory(const model::ModelConfig& c, at::ScalarType dtype, model::AttentionPath path,
                   const model::AttentionShape& shape, std::int64_t available, const std::string& available_source,
                   const SizingNames& names) {
  const MemoryEstimate m = estimateEvalMemory(c, dtype, path, shape);
  if (available < 0 || m.total() <= available) return;
  std::ostringstream msg;
  msg << "a pass of " << shape.batch << (shape.batch == 1 ? " row" : " rows") << " of " << shape.seq_len << " tokens with "
      << model::attentionName(path) << " attention needs about " << gib(m.total()) << " (weights " << gib(m.weights)
      << ", activations " << gib(m.activations) << ", attention scores " << gib(m.attention) << ", logits " << gib(m.logits)
      << "); " << gib(available) << " available (" << available_source << ")";
  const bool can_block = path != model::AttentionPath::Blockwise && path != model::AttentionPath::Flash;
  const std::int64_t blockwise = estimateEvalMemory(c, dtype, model::AttentionPath::Blockwise, shape).total();
  // the largest batch below this one that fits on `p` (the estimate grows with the batch), 0 if none
  auto largestBatch = [&](model::AttentionPath p) {
    auto fits = [&](std::int64_t b) {
      model::AttentionShape smaller = shape;
      smaller.batch = b;
      return estimateEvalMemory(c, dtype, p, smaller).total() <= available;
    };
    if (shape.batch <= 1 || !fits(1)) return std::int64_t{0};
    std::int64_t lo = 1, hi = shape.batch - 1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(mid)) lo = mid; else hi = mid - 1;
    }
    return lo;
  };
  if (can_block && blockwise <= available)
    msg << ": " << names.attention << " blockwise needs about " << gib(blockwise);
  else if (const std::int64_t b = largestBatch(path); b > 0)  // on this path: named where auto chose it by size
    msg << ": " << (path == model::AttentionPath::Blockwise ? names.attention + " blockwise with " : std::string()) << names.batch << " "
        << b << " fits";
  else if (const std::int64_t bb = can_block ? largestBatch(model::AttentionPath::Blockwise) : 0; bb > 0)
    msg << ": " << names.attention << " blockwise with " << names.batch << " " << bb << " fits";
  else if (m.weights + m.logits >= available)  // what no row length changes
    msg << ": the weights and the head's logits alone do not fit";
  else
    msg << ": a shorter " << names.seq_len << " brings it within reach";
  throw UsageError(msg.str());
}

}  // namespace omn::eval
