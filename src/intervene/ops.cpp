#include "omn/intervene/ops.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/model/weights.h"
#include "omn/split_mix64.h"

namespace omn::intervene {

namespace {
std::string sha256OfTensors(const std::vector<const at::Tensor*>& ts) {
  std::string bytes;
  for (const at::Tensor* t : ts) {
    const at::Tensor c = t->contiguous().cpu();
    bytes.append(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
  }
  return io::sha256Bytes(bytes.data(), bytes.size());
}
}  // namespace

GainState::GainState(const model::Transformer& model, const io::Checkpoint& ck)
    : model_(model), config_(model.config()), overlay_(model.config().n_layers) {
  if (!config_.qk_norm)
    throw UsageError(ck.path + ": the model has no Q/K gains (trained without QK-norm): intervene has no gain to change");
  std::string file_bytes;
  for (int i = 0; i < config_.n_layers; ++i)
    for (bool q : {true, false}) {
      const std::string name = config_.name(q ? "q_norm" : "k_norm", i);
      const io::TensorRef& ref = ck.index.at(name);
      // an integer gain would take every new value rounded to an integer ("constant 1.5" would be 1)
      if (!io::isFloatingPoint(ref.dtype))
        throw FormatError(ck.path + ": tensor '" + name + "': expected a floating-point gain, got " + io::dtypeName(ref.dtype) +
                          ": an intervention could not write its values");
      const std::vector<std::uint8_t> b = io::readBytes(ref);
      file_bytes.append(reinterpret_cast<const char*>(b.data()), b.size());
      (q ? stored_q_ : stored_k_).push_back(model::toTensor(ref, model::scalarType(ref.dtype), at::kCPU, /*owned=*/true));
    }
  checkpoint_digest_ = io::sha256Bytes(file_bytes.data(), file_bytes.size());
  original_digest_ = digest();
}

const at::Tensor& GainState::own(int layer, bool q) const {
  const auto& l = model_.weights().layers[static_cast<std::size_t>(layer)];
  return q ? l.q_norm : l.k_norm;
}

at::Tensor GainState::effective(const at::Tensor& stored) const {
  const at::Tensor f = stored.to(at::kFloat);
  return config_.gain_param == model::GainParametrisation::OnePlus ? f + 1.0 : f;
}

at::Tensor GainState::storedFrom(const at::Tensor& eff, const at::Tensor& like) const {
  const at::Tensor w = config_.gain_param == model::GainParametrisation::OnePlus ? eff - 1.0 : eff;
  return w.to(like.scalar_type());  // the one rounding, as param.copy_/fill_ would
}

namespace {
std::size_t slot(int layer, bool q) { return 2 * static_cast<std::size_t>(layer) + (q ? 0 : 1); }
std::string vectorName(int layer, bool q) { return "layer " + std::to_string(layer) + (q ? " Q" : " K"); }

std::string magnitude(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

// noise's ε ~ N(0, 1), one per chosen coordinate in order: Box-Muller (the cosine branch) on two
// SplitMix64 draws, u1 in (0, 1], u2 in [0, 1); the stream is permute's, seed ^ (layer << 32) ^ role.
at::Tensor normals(std::uint64_t seed, int layer, bool q, std::int64_t n) {
  SplitMix64 rng(seed ^ (static_cast<std::uint64_t>(layer) << 32) ^ (q ? 0u : 1u));
  const double two53 = 9007199254740992.0;
  std::vector<double> z(static_cast<std::size_t>(n));
  for (double& v : z) {
    const double u1 = static_cast<double>((rng.next() >> 11) + 1) / two53;
    const double u2 = static_cast<double>(rng.next() >> 11) / two53;
    v = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  return at::tensor(z, at::kDouble);
}
// A vector a step writes: its layer, its role (Q or K) and the coordinates chosen in it.
struct ChosenVector {
  int layer;
  bool q;
  at::Tensor idx;
};

// global_mean: one mean over every chosen coordinate of every targeted vector (float64)
double globalMean(const std::vector<at::Tensor>& before, const std::vector<ChosenVector>& chosen) {
  double sum = 0;
  std::int64_t n = 0;
  for (const auto& [l, q, idx] : chosen) {
    sum += before[slot(l, q)].index_select(0, idx).to(at::kDouble).sum().item<double>();
    n += idx.numel();
  }
  return sum / static_cast<double>(std::max<std::int64_t>(n, 1));
}

// Fisher-Yates with SplitMix64, one stream per vector: seed ^ (layer << 32) ^ role
at::Tensor permuted(const at::Tensor& g, std::uint64_t seed, int l, bool q) {
  SplitMix64 rng(seed ^ (static_cast<std::uint64_t>(l) << 32) ^ (q ? 0u : 1u));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(g.numel()));
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
  for (std::size_t i = perm.size(); i-- > 1;) std::swap(perm[i], perm[rng.below(i + 1)]);
  return g.index_select(0, at::tensor(perm, at::kLong));
}

// g * c / mean(g): the pattern kept, the mean set to c
at::Tensor rescaledPattern(const Step& s, const at::Tensor& g, int l, bool q) {
  const double mean = g.to(at::kDouble).mean().item<double>();
  if (!(mean != 0) || !std::isfinite(mean))
    throw UsageError("manifest: " + s.pointer + ": rescale_pattern: the gains of " + vectorName(l, q) + " have mean " +
                     std::to_string(mean) + " over the chosen coordinates: there is no magnitude to rescale");
  return (g.to(at::kDouble) * (s.value / mean)).to(at::kFloat);
}

// The step's new values for the chosen coordinates `g` of one vector, from the values as the step
// found them (`before`); `transplant` is the loaded source of a transplant step.
at::Tensor opValues(const Step& s, const std::vector<at::Tensor>& before, const ChosenVector& v, const at::Tensor& g, double global,
                    const std::vector<at::Tensor>* transplant) {
  const int l = v.layer;
  const bool q = v.q;
  const at::Tensor& idx = v.idx;
  const at::Tensor& whole = before[slot(l, q)];
  auto same = [&](const at::Tensor& src, const char* what) {
    if (src.numel() != whole.numel())
      throw UsageError("manifest: " + s.pointer + ": " + what + " between gains of different shapes (" + vectorName(l, q) + ")");
    return src.index_select(0, idx);
  };
  switch (s.op) {
    case Op::Constant: return at::full_like(g, s.value, g.options().dtype(at::kDouble));  // checked in refuseOverflow
    case Op::Scale: return g * s.value;
    case Op::VectorMean: return at::full_like(g, g.to(at::kDouble).mean().item<double>());
    case Op::GlobalMean: return at::full_like(g, global);
    case Op::Permute: return permuted(g, s.seed, l, q);
    case Op::SignFix: return s.mode == "zero" ? g.clamp_min(0) : g.abs();
    case Op::CopyLayer: return same(before[slot(s.source_layer, q)], "copy_layer");
    case Op::SwapQK: return same(before[slot(l, !q)], "swap_qk needs Q and K gains of one length:");
    case Op::RescalePattern: return rescaledPattern(s, g, l, q);
    case Op::Compensate: return q ? g * s.value : g / s.value;  // every logit q.k unchanged
    case Op::Noise: return (g.to(at::kDouble) * (1.0 + s.value * normals(s.seed, l, q, g.numel()))).to(at::kFloat);
    case Op::Bypass: break;  // handled by applyStep
    case Op::Transplant:  // the other checkpoint's gains of the same layer and role (loadSources)
      if (!transplant) throw std::logic_error("GainState: transplant source " + s.source.path + " not loaded (loadSources)");
      return (*transplant)[slot(l, q)].index_select(0, idx);
  }
  return at::Tensor();
}

// arithmetic that leaves float range (a constant of 1e39, scale 1e39) would become inf: refused
// where the value it worked on was finite (an inf the checkpoint already has passes through,
// and so do the ops that only move values: copy_layer, swap_qk, transplant, permute)
void refuseOverflow(const Step& s, int l, bool q, const at::Tensor& g, const at::Tensor& out, const at::Tensor& out_f) {
  const bool arithmetic = s.op == Op::Constant || s.op == Op::Scale || s.op == Op::RescalePattern || s.op == Op::Compensate ||
                          s.op == Op::Noise;
  if (!arithmetic) return;
  const at::Tensor worked_on = s.op == Op::Constant ? out.to(at::kDouble) : g;
  const at::Tensor over = at::isinf(out_f) & at::isfinite(worked_on);
  if (over.any().item<bool>())
    throw UsageError("manifest: " + s.pointer + ": " + opName(s.op) + " gives " + vectorName(l, q) + " a gain of magnitude " +
                     magnitude(out.to(at::kDouble).abs().max().item<double>()) + ", beyond float32 (it would become inf)");
}
}  // namespace

void GainState::check(const Condition& c) const { (void)compute(c); }

// One loaded source per file and state dict (a checkpoint may hold several, e.g. model and EMA)
std::string GainState::sourceKey(const Step& s) { return s.source.path + '\n' + s.source.state_key; }

void GainState::loadSources(const std::vector<Condition>& conditions) {
  std::map<std::string, std::string> digests;  // path -> its SHA-256, hashed once
  for (const Condition& c : conditions)
    for (const Step& s : c.steps) {
      if (s.op != Op::Transplant) continue;
      // every entry's digest is checked, even when another entry named the same file
      auto d = digests.find(s.source.path);
      if (d == digests.end()) d = digests.emplace(s.source.path, io::sha256File(s.source.path)).first;
      io::requireSha256(s.source.path, s.source.sha256, d->second);  // a mismatch is exit 4
      if (sources_.count(sourceKey(s))) continue;
      const std::string where = "manifest: " + s.pointer + "/sources: " + s.source.written;
      io::OpenOptions oo;
      oo.state_key = s.source.state_key;
      const auto src = io::openCheckpoint(s.source.path, oo);
      Vectors v;
      for (int l = 0; l < config_.n_layers; ++l)
        for (bool q : {true, false}) {
          const std::string name = config_.name(q ? "q_norm" : "k_norm", l);
          const io::TensorRef* ref = src->index.find(name);
          if (!ref) throw UsageError(where + ": has no tensor '" + name + "' (not a checkpoint of this architecture)");
          if (!io::isFloatingPoint(ref->dtype))
            throw FormatError(s.source.path + ": tensor '" + name + "': expected a floating-point gain, got " + io::dtypeName(ref->dtype));
          const at::Tensor t = model::toTensor(*ref, model::scalarType(ref->dtype), at::kCPU, /*owned=*/true);
          if (t.sizes() != stored(l, q).sizes())
            throw UsageError(where + ": tensor '" + name + "' has " + std::to_string(t.numel()) + " values, this model's " +
                             std::to_string(stored(l, q).numel()));
          v.push_back(effective(t));
        }
      sources_.emplace(sourceKey(s), std::move(v));
    }
}

int GainState::firstLayer(const Condition& c) const {
  int first = config_.n_layers;
  for (const Step& s : c.steps) {
    const auto layers = s.layers.resolve(config_.n_layers, s.pointer);
    if (!layers.empty()) first = std::min(first, layers.front());
  }
  return first;
}

at::Tensor GainState::chooseCoordinates(const Step& s, const at::Tensor& g) const {
  const std::int64_t n = g.numel();
  const CoordinateSpec& cs = s.coordinates;
  switch (cs.kind) {
    case Coordinates::All: return at::arange(n, at::kLong);
    case Coordinates::Negative: return at::nonzero(g < 0).flatten();  // ascending
    case Coordinates::TopK: {
      if (cs.k > n)
        throw UsageError("manifest: " + s.pointer + "/coordinates/top_k: " + std::to_string(cs.k) + " coordinates, but a gain vector has " +
                         std::to_string(n));
      // the k largest |g|, equal ones in index order (a stable sort), then ascending
      const at::Tensor order = std::get<1>(at::sort(g.abs(), /*stable=*/true, /*dim=*/0, /*descending=*/true));
      return std::get<0>(at::sort(order.slice(0, 0, cs.k)));
    }
    case Coordinates::Indices:
      if (cs.indices->back() >= n)
        throw UsageError("manifest: " + s.pointer + "/coordinates: coordinate " + std::to_string(cs.indices->back()) +
                         " does not exist (a gain vector has " + std::to_string(n) + ": 0-" + std::to_string(n - 1) + ")");
      return at::tensor(*cs.indices, at::kLong);
  }
  return at::arange(n, at::kLong);
}

// One step on the values the steps before it left. Every vector it writes is computed from the
// values as the step found them (swap_qk reads K's as they were before Q's changed).
void GainState::applyStep(const Step& s, Computed& cur) const {
  const std::vector<int> layers = s.layers.resolve(config_.n_layers, s.pointer);
  if (s.op == Op::CopyLayer && (s.source_layer < 0 || s.source_layer >= config_.n_layers))
    throw UsageError("manifest: " + s.pointer + "/source_layers: layer " + std::to_string(s.source_layer) +
                     " does not exist (the model has " + std::to_string(config_.n_layers) + " layers)");
  std::vector<bool> roles;
  if (s.target != Target::K) roles.push_back(true);
  if (s.target != Target::Q) roles.push_back(false);
  const Vectors before = cur.values;
  std::vector<ChosenVector> chosen;
  for (int l : layers)
    for (bool q : roles) chosen.push_back({l, q, chooseCoordinates(s, before[slot(l, q)])});
  const double global = s.op == Op::GlobalMean ? globalMean(before, chosen) : 0;
  const auto source = sources_.find(sourceKey(s));  // transplant's, when the step is one
  const Vectors* transplant = source == sources_.end() ? nullptr : &source->second;
  for (const auto& [l, q, idx] : chosen) {
    if (s.op == Op::Bypass) {  // the normalisation removed: the values stay, unused
      cur.bypassed[slot(l, q)] = true;
      cur.written[slot(l, q)] = true;
      continue;
    }
    if (idx.numel() == 0) continue;  // e.g. no negative coordinate in this vector: it keeps its values
    const at::Tensor& whole = before[slot(l, q)];
    const at::Tensor g = whole.index_select(0, idx);
    const at::Tensor out = opValues(s, before, {l, q, idx}, g, global, transplant);
    const at::Tensor out_f = out.to(at::kFloat);
    refuseOverflow(s, l, q, g, out, out_f);
    cur.values[slot(l, q)] = whole.index_copy(0, idx, out_f);
    cur.written[slot(l, q)] = true;
    cur.chosen[slot(l, q)] += idx.numel();
  }
}

GainState::Computed GainState::compute(const Condition& c) const {
  Computed cur;
  for (int l = 0; l < config_.n_layers; ++l)
    for (bool q : {true, false}) cur.values.push_back(effective(stored(l, q)));
  cur.written.assign(cur.values.size(), false);
  cur.bypassed.assign(cur.values.size(), false);
  cur.chosen.assign(cur.values.size(), 0);
  for (const Step& s : c.steps) applyStep(s, cur);
  // the final values must survive the one rounding into the stored dtype and the copy into the
  // working dtype (fp16 holds at most 65504): 70000 there became inf and every perplexity NaN with
  // exit 0. Checked on what the condition leaves, not per step (a step may pass through large
  // values a later one scales back), and only where the value is finite (the checkpoint's own
  // non-finite gains pass through, reported by profile).
  for (int l = 0; l < config_.n_layers; ++l)
    for (bool q : {true, false}) {
      const std::size_t i = slot(l, q);
      if (!cur.written[i] || cur.bypassed[i]) continue;
      const at::Tensor& v = cur.values[i];
      const at::Tensor st = storedFrom(v, stored(l, q));
      const at::ScalarType working = workingType(l, q);
      for (const auto& [t, dtype] : {std::pair<at::Tensor, at::ScalarType>{st, st.scalar_type()}, {st.to(working), working}}) {
        const at::Tensor over = at::isfinite(v) & at::isinf(t);
        if (over.any().item<bool>())
          throw UsageError("manifest: " + c.pointer + ": the condition leaves " + vectorName(l, q) + " a gain of magnitude " +
                           magnitude(v.masked_select(over).abs().max().item<double>()) + ", beyond what " +
                           (dtype == st.scalar_type() ? "its stored dtype (" : "the working dtype (") + std::string(c10::toString(dtype)) +
                           ") can hold: it would become inf");
      }
    }
  return cur;
}

AppliedGains GainState::apply(const Condition& c) {
  const Computed cur = compute(c);  // every check before any gain is touched
  AppliedGains a;
  for (int l = 0; l < config_.n_layers; ++l)
    for (bool q : {true, false}) {
      if (!cur.written[slot(l, q)]) continue;
      const at::Tensor st = storedFrom(cur.values[slot(l, q)], stored(l, q));
      const at::Tensor& working = own(l, q);
      // into the working dtype and device, as param.copy_ would (a new tensor: the model's stays)
      overlay_.set(l, q, st.to(working.device(), working.scalar_type(), /*non_blocking=*/false, /*copy=*/true),
                   cur.bypassed[slot(l, q)]);
      a.touched.push_back(config_.name(q ? "q_norm" : "k_norm", l));
      const at::Tensor eff = effective(st).to(at::kDouble);
      auto finiteGain = [](double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; };
      a.vectors.push_back({l, q ? "q" : "k", static_cast<bool>(cur.bypassed[slot(l, q)]), static_cast<std::int64_t>(cur.chosen[slot(l, q)]),
                           st.ne(stored(l, q)).sum().item<std::int64_t>(), finiteGain(eff.mean().item<double>()),
                           finiteGain(eff.min().item<double>()), finiteGain(eff.max().item<double>())});
    }
  return a;
}

void GainState::restore() { overlay_.clear(); }

std::string GainState::digest() const {
  std::vector<const at::Tensor*> ts;
  for (int i = 0; i < config_.n_layers; ++i)
    for (bool q : {true, false}) ts.push_back(&overlay_.gain(i, q, own(i, q)));
  return sha256OfTensors(ts);
}

}  // namespace omn::intervene
