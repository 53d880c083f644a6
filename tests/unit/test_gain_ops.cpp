// GainState's ops (intervene/ops.h) in C++ on a hand-made gain set (tests/support/tiny_model.h: 2
// layers, 8-wide Q and K gains of short binary fractions, stored fp32): every op of the catalog
// against values computed here from the gains and docs/manifest.md's definitions (permute's
// Fisher-Yates and noise's Box-Muller written out again), each compared bitwise; layer, target
// and coordinate selection; composites; the checks that refuse an impossible request before any
// gain is touched; and restore() giving the model's gains back bitwise.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "omn/errors.h"
#include "omn/intervene/ops.h"
#include "../support/tiny_model.h"

using nlohmann::json;
using omn::intervene::AppliedGains;
using omn::intervene::GainState;

namespace {

using Vector = std::vector<float>;

// One session shared by every test of this file (opening it takes a hash and a load).
class GainOpsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    files_ = new omn::test::TinyModelFiles();
    session_ = files_->open().release();
  }
  static void TearDownTestSuite() {
    delete session_;
    delete files_;
  }
  // The conditions one manifest entry (or several) expands into, parsed as intervene parses them.
  static std::vector<omn::intervene::Condition> conditions(const json& entries) {
    return files_->manifest(entries).conditions;
  }
  static const omn::model::Transformer& model() { return *session_->model; }

  // What a pass reads for a vector now: the overlay's gain, or the model's own.
  static Vector passGain(const GainState& g, int layer, bool q) {
    const auto& l = model().weights().layers[static_cast<std::size_t>(layer)];
    const at::Tensor t = g.overlay().gain(layer, q, q ? l.q_norm : l.k_norm).to(at::kFloat).contiguous();
    return Vector(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  static bool overlaid(const GainState& g, int layer, bool q) {
    const auto& l = model().weights().layers[static_cast<std::size_t>(layer)];
    const at::Tensor& own = q ? l.q_norm : l.k_norm;
    return &g.overlay().gain(layer, q, own) != &own;
  }
  static std::string tensorName(int layer, bool q) {
    return "layers." + std::to_string(layer) + ".attention." + (q ? "q_norm" : "k_norm") + ".weight";
  }

  // Applies `c`, checks every vector against `expect` (slot 2·layer + (Q ? 0 : 1); the hand-made
  // gains where it has none) and that exactly the vectors it names were written; then restores.
  static AppliedGains expectApplied(GainState& g, const omn::intervene::Condition& c, const std::map<int, Vector>& expect) {
    const AppliedGains a = g.apply(c);
    const auto original = omn::test::tinyGains();
    std::vector<std::string> touched;
    for (int l = 0; l < omn::test::kTinyLayers; ++l)
      for (bool q : {true, false}) {
        const int slot = 2 * l + (q ? 0 : 1);
        const auto it = expect.find(slot);
        EXPECT_EQ(passGain(g, l, q), it == expect.end() ? original[static_cast<std::size_t>(slot)] : it->second)
            << c.label << ": layer " << l << (q ? " Q" : " K");
        EXPECT_EQ(overlaid(g, l, q), it != expect.end()) << c.label << ": layer " << l << (q ? " Q" : " K");
        if (it != expect.end()) touched.push_back(tensorName(l, q));
      }
    EXPECT_EQ(a.touched, touched) << c.label;
    EXPECT_EQ(a.vectors.size(), touched.size()) << c.label;
    g.restore();
    return a;
  }

  static omn::test::TinyModelFiles* files_;
  static omn::eval::Session* session_;
};
omn::test::TinyModelFiles* GainOpsTest::files_ = nullptr;
omn::eval::Session* GainOpsTest::session_ = nullptr;

const std::vector<Vector> kGains = omn::test::tinyGains();
const Vector& gainsOf(int layer, bool q) { return kGains[static_cast<std::size_t>(2 * layer + (q ? 0 : 1))]; }
int slotOf(int layer, bool q) { return 2 * layer + (q ? 0 : 1); }

Vector mapGain(const Vector& v, float (*f)(float)) {
  Vector out;
  for (float x : v) out.push_back(f(x));
  return out;
}
double meanOf(const Vector& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / static_cast<double>(v.size());
}

// docs/manifest.md's generator, written out again: SplitMix64, and an unbiased draw below n
struct ReferenceSplitMix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;)
      if (const std::uint64_t v = next(); v < limit) return v % n;
  }
};
std::uint64_t streamOf(std::uint64_t seed, int layer, bool q) { return seed ^ (static_cast<std::uint64_t>(layer) << 32) ^ (q ? 0u : 1u); }

// permute: Fisher-Yates from the last index down, one stream per vector
Vector referencePermute(const Vector& g, std::uint64_t seed, int layer, bool q) {
  ReferenceSplitMix rng{streamOf(seed, layer, q)};
  std::vector<std::size_t> perm(g.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  for (std::size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  Vector out;
  for (std::size_t i : perm) out.push_back(g[i]);
  return out;
}

// noise: g·(1 + σε) in float64, ε by Box-Muller's cosine branch on two draws, then one cast
Vector referenceNoise(const Vector& g, double sigma, std::uint64_t seed, int layer, bool q) {
  ReferenceSplitMix rng{streamOf(seed, layer, q)};
  Vector out;
  for (float x : g) {
    const double u1 = static_cast<double>((rng.next() >> 11) + 1) / 9007199254740992.0;
    const double u2 = static_cast<double>(rng.next() >> 11) / 9007199254740992.0;
    const double eps = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    out.push_back(static_cast<float>(static_cast<double>(x) * (1.0 + sigma * eps)));
  }
  return out;
}

std::string usageMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const omn::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_F(GainOpsTest, ConstantAndScaleOnTheTargetedLayersAndRoles) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  // constant 2.5 on layer 1's Q only: 8 coordinates, every one changed
  const auto c = conditions(json::parse(R"([{"op": "constant", "values": [2.5], "targets": ["q"], "layers": "1"},
                                            {"op": "scale", "values": [0.5], "targets": ["k"], "layers": "all"},
                                            {"op": "constant", "values": [1.0], "targets": ["qk"], "layers": [0]}])"));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(g.firstLayer(c[0]), 1);
  EXPECT_EQ(g.firstLayer(c[1]), 0);
  const AppliedGains a = expectApplied(g, c[0], {{slotOf(1, true), Vector(8, 2.5f)}});
  EXPECT_EQ(json(a.vectors[0]), json::parse(R"({"layer": 1, "role": "q", "bypassed": false, "coordinates": 8, "changed": 8,
                                                "mean": 2.5, "min": 2.5, "max": 2.5})"));
  // scale 0.5 on every K: exact halves
  const auto half = [](float x) { return x * 0.5f; };
  const AppliedGains b = expectApplied(g, c[1], {{slotOf(0, false), mapGain(gainsOf(0, false), half)},
                                                 {slotOf(1, false), mapGain(gainsOf(1, false), half)}});
  EXPECT_EQ(*b.vectors[1].mean, meanOf(gainsOf(1, false)) / 2);
  EXPECT_EQ(*b.vectors[1].min, -0.5);
  // constant 1 on layer 0's Q and K: layer 0 K's 1.0 stays, so 7 of its 8 change
  const AppliedGains d = expectApplied(g, c[2], {{slotOf(0, true), Vector(8, 1.0f)}, {slotOf(0, false), Vector(8, 1.0f)}});
  EXPECT_EQ(d.vectors[0].changed, 7);  // layer 0 Q holds a 1.0 too
  EXPECT_EQ(d.vectors[1].changed, 7);
}

TEST_F(GainOpsTest, MeansPermutationAndSignFix) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  const auto c = conditions(json::parse(R"([{"op": "vector_mean", "targets": ["qk"], "layers": "0"},
                                            {"op": "global_mean", "targets": ["qk"], "layers": "all"},
                                            {"op": "permute", "seeds": [3], "targets": ["qk"], "layers": "all"},
                                            {"op": "sign_fix", "modes": ["zero", "abs"], "targets": ["qk"], "layers": "all"}])"));
  ASSERT_EQ(c.size(), 5u);
  // vector_mean: layer 0 Q's mean 6.75 / 8, K's 18 / 8
  EXPECT_EQ(meanOf(gainsOf(0, true)), 0.84375);
  expectApplied(g, c[0], {{slotOf(0, true), Vector(8, 0.84375f)}, {slotOf(0, false), Vector(8, 2.25f)}});
  // global_mean: one mean over all 32 coordinates, (6.75 + 18 + 14 + 6) / 32
  const float global = static_cast<float>(44.75 / 32);
  std::map<int, Vector> all_global;
  for (int s = 0; s < 4; ++s) all_global[s] = Vector(8, global);
  expectApplied(g, c[1], all_global);
  // permute seed 3: each vector shuffled by its own stream, the same values in a new order
  std::map<int, Vector> permuted;
  for (int l = 0; l < 2; ++l)
    for (bool q : {true, false}) permuted[slotOf(l, q)] = referencePermute(gainsOf(l, q), 3, l, q);
  for (const auto& [slot, v] : permuted) {
    Vector sorted = v, want = kGains[static_cast<std::size_t>(slot)];
    std::sort(sorted.begin(), sorted.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(sorted, want) << "slot " << slot;
  }
  EXPECT_NE(permuted[0], gainsOf(0, true));  // the seed moves something
  expectApplied(g, c[2], permuted);
  // sign_fix zero: the negatives of layer 0 Q (2) and layer 1 K (1) to 0; abs: to |g|. Every
  // targeted vector is written, those without a negative unchanged
  const auto zero = [](float x) { return x < 0 ? 0.0f : x; };
  const auto absolute = [](float x) { return std::fabs(x); };
  std::map<int, Vector> zeroed, absed;
  for (int s = 0; s < 4; ++s) {
    zeroed[s] = mapGain(kGains[static_cast<std::size_t>(s)], zero);
    absed[s] = mapGain(kGains[static_cast<std::size_t>(s)], absolute);
  }
  const AppliedGains z = expectApplied(g, c[3], zeroed);
  EXPECT_EQ(z.vectors[0].changed, 2);
  EXPECT_EQ(z.vectors[1].changed, 0);
  EXPECT_EQ(z.vectors[3].changed, 1);
  expectApplied(g, c[4], absed);
}

TEST_F(GainOpsTest, CopyLayerSwapRescaleCompensateAndNoise) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  const auto c = conditions(json::parse(R"([{"op": "copy_layer", "source_layers": [1], "targets": ["q"], "layers": "0"},
                                            {"op": "swap_qk", "layers": "1"},
                                            {"op": "rescale_pattern", "values": [2], "targets": ["q"], "layers": "1"},
                                            {"op": "compensate", "values": [2], "layers": "all"},
                                            {"op": "noise", "values": [0.1], "seeds": [4], "targets": ["k"], "layers": "0"}])"));
  ASSERT_EQ(c.size(), 5u);
  expectApplied(g, c[0], {{slotOf(0, true), gainsOf(1, true)}});
  expectApplied(g, c[1], {{slotOf(1, true), gainsOf(1, false)}, {slotOf(1, false), gainsOf(1, true)}});
  // rescale_pattern 2: g · (2 / mean) with the factor in float64; layer 1 Q's mean is 14 / 8
  Vector rescaled;
  for (float x : gainsOf(1, true)) rescaled.push_back(static_cast<float>(static_cast<double>(x) * (2.0 / 1.75)));
  expectApplied(g, c[2], {{slotOf(1, true), rescaled}});
  // compensate 2: Q doubled, K halved, in every layer (every logit q·k unchanged)
  const auto twice = [](float x) { return x * 2.0f; };
  const auto half = [](float x) { return x / 2.0f; };
  expectApplied(g, c[3], {{slotOf(0, true), mapGain(gainsOf(0, true), twice)}, {slotOf(0, false), mapGain(gainsOf(0, false), half)},
                          {slotOf(1, true), mapGain(gainsOf(1, true), twice)}, {slotOf(1, false), mapGain(gainsOf(1, false), half)}});
  expectApplied(g, c[4], {{slotOf(0, false), referenceNoise(gainsOf(0, false), 0.1, 4, 0, false)}});
}

TEST_F(GainOpsTest, TransplantAndBypass) {
  c10::InferenceMode inference;
  // the source: the same architecture with every gain negated and shifted (another checkpoint's gains)
  std::vector<Vector> other;
  for (const Vector& v : kGains) other.push_back(mapGain(v, [](float x) { return 0.5f - x; }));
  const std::string path = files_->dir.path() + "/other.pt";
  const std::string sha = omn::test::writeTinyCheckpoint(path, other, 17);
  GainState g(model(), *session_->ck);
  json entries = json::parse(R"([{"op": "transplant", "sources": [{"path": "other.pt", "sha256": ""}], "targets": ["k"]},
                                  {"op": "bypass", "targets": ["qk"], "layers": "1"}])");
  entries[0]["sources"][0]["sha256"] = sha;
  const auto c = conditions(entries);
  ASSERT_EQ(c.size(), 2u);
  g.loadSources(c);
  expectApplied(g, c[0], {{slotOf(0, false), other[1]}, {slotOf(1, false), other[3]}});
  // bypass: the vectors are recorded as written and bypassed, their values unchanged (and unused)
  const AppliedGains b = g.apply(c[1]);
  EXPECT_TRUE(g.overlay().bypassed(1, true));
  EXPECT_TRUE(g.overlay().bypassed(1, false));
  EXPECT_FALSE(g.overlay().bypassed(0, true));
  EXPECT_EQ(b.touched, (std::vector<std::string>{tensorName(1, true), tensorName(1, false)}));
  EXPECT_EQ(b.vectors[0].bypassed, true);
  EXPECT_EQ(b.vectors[0].changed, 0);
  EXPECT_EQ(passGain(g, 1, true), gainsOf(1, true));
  g.restore();
  EXPECT_FALSE(g.overlay().bypassed(1, true));
  // a source whose digest is not the one the manifest pins is refused before anything is read
  entries[0]["sources"][0]["sha256"] = std::string(64, '0');
  const auto wrong = conditions(entries);
  GainState fresh(model(), *session_->ck);
  EXPECT_THROW(fresh.loadSources(wrong), omn::IntegrityError);
}

// coordinates: the op sees only the chosen ones (as if the vector were just those); the others keep
// their values, and a vector with none chosen is not written at all
TEST_F(GainOpsTest, CoordinateSubsets) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  const auto c = conditions(json::parse(R"([{"op": "constant", "values": [1], "targets": ["qk"], "layers": "0", "coordinates": "negative"},
                                            {"op": "vector_mean", "targets": ["q"], "layers": "0", "coordinates": {"top_k": 2}},
                                            {"op": "scale", "values": [3], "targets": ["k"], "layers": "1", "coordinates": [0, 7]}])"));
  ASSERT_EQ(c.size(), 3u);
  Vector q0 = gainsOf(0, true);
  q0[1] = q0[6] = 1.0f;  // layer 0 Q's negatives; layer 0 K has none: untouched
  const AppliedGains a = expectApplied(g, c[0], {{slotOf(0, true), q0}});
  EXPECT_EQ(a.vectors[0].coordinates, 2);
  EXPECT_EQ(a.vectors[0].changed, 2);
  // top-2 |g| of layer 0 Q: 3.0 (index 4) and 2.0 (index 2), both set to their mean 2.5
  Vector top = gainsOf(0, true);
  top[2] = top[4] = 2.5f;
  expectApplied(g, c[1], {{slotOf(0, true), top}});
  Vector k1 = gainsOf(1, false);
  k1[0] *= 3.0f;
  k1[7] *= 3.0f;
  expectApplied(g, c[2], {{slotOf(1, false), k1}});
}

// A composite's steps each act on what the one before left: swap_qk then copy_layer copies the
// swapped gains (layer 1's K, now in its Q, into layer 0's Q)
TEST_F(GainOpsTest, CompositeStepsComposeInOrder) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  const auto c = conditions(json::parse(R"([{"name": "swapped, then copied down", "steps": [
                                              {"op": "swap_qk", "layers": "all"},
                                              {"op": "copy_layer", "source_layers": [1], "targets": ["q"], "layers": "0"}]}])"));
  ASSERT_EQ(c.size(), 1u);
  const AppliedGains a = expectApplied(g, c[0], {{slotOf(0, true), gainsOf(1, false)}, {slotOf(0, false), gainsOf(0, true)},
                                                 {slotOf(1, true), gainsOf(1, false)}, {slotOf(1, false), gainsOf(1, true)}});
  EXPECT_EQ(a.vectors[0].coordinates, 16);  // chosen twice: by the swap and by the copy
}

// Impossible requests are refused naming the manifest's pointer, by check() and by apply(), and
// apply() refuses before it writes anything
TEST_F(GainOpsTest, ImpossibleRequestsAreRefusedBeforeAnyGainIsTouched) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  const auto c = conditions(json::parse(R"([{"op": "constant", "values": [2], "layers": "2"},
                                            {"op": "copy_layer", "source_layers": [5], "layers": "0"},
                                            {"op": "rescale_pattern", "values": [1], "targets": ["k"], "layers": "1", "coordinates": [0, 4]},
                                            {"op": "scale", "values": [2], "targets": ["q"], "layers": "0", "coordinates": [8]},
                                            {"op": "constant", "values": [1e39], "layers": "0"},
                                            {"name": "a good step, then a bad one", "steps": [
                                              {"op": "constant", "values": [3], "layers": "0"},
                                              {"op": "rescale_pattern", "values": [1], "targets": ["k"], "layers": "1", "coordinates": [0, 4]}]}])"));
  ASSERT_EQ(c.size(), 6u);
  const std::vector<std::string> expected = {
      "/conditions/0/layers: layer 2 does not exist",
      "manifest: /conditions/1/source_layers: layer 5 does not exist",
      "manifest: /conditions/2: rescale_pattern: the gains of layer 1 K have mean 0",  // -1 and 1
      "manifest: /conditions/3/coordinates: coordinate 8 does not exist",
      "manifest: /conditions/4: constant gives layer 0 Q a gain of magnitude 1e+39, beyond float32",
      "manifest: /conditions/5/steps/1: rescale_pattern: the gains of layer 1 K have mean 0",
  };
  const std::string before = g.digest();
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::string checked = usageMessage([&] { g.check(c[i]); });
    EXPECT_NE(checked.find(expected[i]), std::string::npos) << "check: " << checked;
    const std::string applied = usageMessage([&] { g.apply(c[i]); });
    EXPECT_EQ(applied, checked);
    EXPECT_EQ(g.digest(), before) << c[i].label << ": a refused condition changed the gains";
    for (int l = 0; l < 2; ++l)
      for (bool q : {true, false}) EXPECT_FALSE(overlaid(g, l, q)) << c[i].label;
  }
}

// restore() gives back the gains bitwise after every op: the digest a pass reads equals the one
// taken at load, the overlay is empty, and the model's own gains were never written
TEST_F(GainOpsTest, RestoreGivesTheGainsBackBitwise) {
  c10::InferenceMode inference;
  GainState g(model(), *session_->ck);
  std::vector<at::Tensor> own;
  for (const auto& l : model().weights().layers) {
    own.push_back(l.q_norm.clone());
    own.push_back(l.k_norm.clone());
  }
  for (std::size_t s = 0; s < own.size(); ++s)
    EXPECT_TRUE(at::equal(own[s], at::tensor(kGains[s], at::kFloat))) << "the model loads the hand-made gains, slot " << s;
  const std::string original = g.originalDigest();
  EXPECT_EQ(g.digest(), original);
  const auto c = conditions(json::parse(R"([{"op": "constant", "values": [2], "targets": ["q", "k", "qk"], "layers": "all"},
                                            {"op": "scale", "values": [0.5], "layers": "all"},
                                            {"op": "vector_mean", "layers": "all"},
                                            {"op": "global_mean", "layers": "all"},
                                            {"op": "permute", "seeds": [1, 2], "layers": "all"},
                                            {"op": "sign_fix", "modes": ["zero", "abs"], "layers": "all"},
                                            {"op": "copy_layer", "source_layers": [0], "layers": "1"},
                                            {"op": "swap_qk", "layers": "all"},
                                            {"op": "rescale_pattern", "values": [1], "layers": "all"},
                                            {"op": "compensate", "values": [4], "layers": "all"},
                                            {"op": "noise", "values": [0.2], "seeds": [1], "layers": "all"},
                                            {"op": "bypass", "layers": "all"}])"));
  ASSERT_EQ(c.size(), 16u);
  std::set<std::string> applied_digests;
  for (const auto& cond : c) {
    g.apply(cond);
    applied_digests.insert(g.digest());
    g.restore();
    EXPECT_EQ(g.digest(), original) << cond.label;
    for (int l = 0; l < 2; ++l)
      for (bool q : {true, false}) {
        EXPECT_FALSE(overlaid(g, l, q)) << cond.label;
        EXPECT_FALSE(g.overlay().bypassed(l, q)) << cond.label;
      }
    std::size_t s = 0;
    for (const auto& l : model().weights().layers) {
      EXPECT_TRUE(at::equal(l.q_norm, own[s++])) << cond.label << ": the model's Q gain was written";
      EXPECT_TRUE(at::equal(l.k_norm, own[s++])) << cond.label << ": the model's K gain was written";
    }
  }
  // every op changes the gains a pass reads (bypass's values stay: its digest is the original's)
  EXPECT_TRUE(applied_digests.count(original));
  EXPECT_EQ(applied_digests.size(), 16u);
  // the file's bytes are the hand-made gains: the checkpoint digest is theirs
  std::string bytes;
  for (const Vector& v : kGains) bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  EXPECT_EQ(g.checkpointDigest(), omn::io::sha256Bytes(bytes.data(), bytes.size()));
}
