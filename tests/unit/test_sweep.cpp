// A sweep end to end in C++ (intervene/sweep.h, pass_runner) on the tiny 2-layer model of
// tests/support/tiny_model.h: the control first and last, each condition's record (id, label,
// pointer, touched tensors, the gains applied and restored), the journal an interrupted sweep
// leaves and the document its resume writes -- equal, number for number, to an uninterrupted
// sweep's -- and the activation cache, --mechanism and --kl leaving every NLL as a plain sweep's.
// fp32 on the CPU: every comparison of numbers is ==.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <filesystem>
#include <fstream>

#include "omn/documents/intervention_document.h"
#include "omn/errors.h"
#include "omn/intervene/sweep.h"
#include "../support/tiny_model.h"

namespace fs = std::filesystem;
using nlohmann::json;
using omn::documents::InterventionDocument;
using omn::documents::SweepCondition;
using omn::intervene::SweepOptions;

namespace {

// Five conditions from three entries: constant 1 on Q and on Q and K (every layer), K of layer 1
// halved, Q and K swapped, and compensate 2 (a power of two: bitwise the control, docs/manifest.md)
const char* const kSweepConditions = R"([
  {"op": "constant", "values": [1.0], "targets": ["q", "qk"], "layers": "all"},
  {"op": "scale", "values": [0.5], "targets": ["k"], "layers": "1"},
  {"op": "swap_qk", "layers": "all"},
  {"op": "compensate", "values": [2], "layers": "all"}])";

// Conditions that touch layer 1 only: the activation cache starts them there
const char* const kLayerOneConditions = R"([
  {"op": "constant", "values": [1.0, 3.0], "targets": ["qk"], "layers": "1"},
  {"op": "permute", "seeds": [2], "targets": ["q"], "layers": "1"}])";

std::size_t journalLines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

std::vector<json> journalRecords(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// The document without what may differ between two runs of the same sweep: timestamps (provenance)
// and durations (every "seconds")
void dropSeconds(json& j) {
  if (j.is_object()) {
    j.erase("seconds");
    for (auto& [k, v] : j.items()) dropSeconds(v);
  } else if (j.is_array()) {
    for (auto& v : j) dropSeconds(v);
  }
}
json sweepNumbers(const InterventionDocument& d) {
  json doc = d.toJson();
  doc.erase("provenance");
  dropSeconds(doc);
  return doc;
}

std::string tensorNameOf(int layer, bool q) {
  return "layers." + std::to_string(layer) + ".attention." + (q ? "q_norm" : "k_norm") + ".weight";
}

// SHA-256 over the hand-made gains as a pass reads them (layer-major, Q then K, fp32 bytes)
std::string handMadeGainDigest() {
  std::string bytes;
  for (const auto& v : omn::test::tinyGains()) bytes.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return omn::io::sha256Bytes(bytes.data(), bytes.size());
}

class SweepTest : public ::testing::Test {
 protected:
  // Runs the manifest's sweep into `out` (in the files' directory) as `intervene` does: the session
  // opened outside inference mode, the sweep inside it. The document it returns is the one it wrote.
  InterventionDocument sweep(const omn::intervene::Manifest& m, const std::string& out, SweepOptions o = {}) {
    o.output_json = files_.dir.path() + "/" + out;
    auto s = omn::eval::openSession(m.session);
    c10::InferenceMode inference;
    InterventionDocument doc = omn::intervene::runSweep(m, *s, o);
    std::ifstream written(o.output_json);
    EXPECT_EQ(json::parse(written), doc.toJson()) << "the document written is not the one returned";
    // the model's own gains are the hand-made ones after the sweep: nothing wrote them
    const auto gains = omn::test::tinyGains();
    for (int l = 0; l < omn::test::kTinyLayers; ++l) {
      EXPECT_TRUE(at::equal(s->model->weights().layers[static_cast<std::size_t>(l)].q_norm, at::tensor(gains[2 * l], at::kFloat)));
      EXPECT_TRUE(at::equal(s->model->weights().layers[static_cast<std::size_t>(l)].k_norm, at::tensor(gains[2 * l + 1], at::kFloat)));
    }
    return doc;
  }
  // The same, stopped (SIGINT's path) once the journal holds `lines` lines: header, records
  void sweepStoppedAt(const omn::intervene::Manifest& m, const std::string& out, std::size_t lines, SweepOptions o = {}) {
    const std::string journal = files_.dir.path() + "/" + out + ".journal";
    o.stop = [journal, lines] { return journalLines(journal) >= lines; };
    EXPECT_THROW(sweep(m, out, o), omn::Interrupted);
    EXPECT_FALSE(fs::exists(files_.dir.path() + "/" + out)) << "an interrupted sweep wrote its document";
    EXPECT_EQ(journalLines(journal), lines);
  }

  omn::test::TinyModelFiles files_;
};

}  // namespace

// The control runs first and last, each condition between them in manifest order; each record says
// what it was, what it touched and that the gains came back bitwise.
TEST_F(SweepTest, ControlFirstAndLastAndEachConditionsRecord) {
  const auto m = files_.manifest(json::parse(kSweepConditions));
  ASSERT_EQ(m.conditions.size(), 5u);
  // stopped at the closing control: the journal holds the opening control, then c0..c4 in order
  sweepStoppedAt(m, "order.json", 7);
  const std::vector<json> lines = journalRecords(files_.dir.path() + "/order.json.journal");
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[0]["schema"], "omn-audit/journal@1");
  EXPECT_EQ(lines[1]["id"], "control_open");
  EXPECT_EQ(lines[1]["kind"], "control");
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lines[2 + i]["id"], "c" + std::to_string(i));
    EXPECT_EQ(lines[2 + i]["kind"], "condition");
  }
  // resumed: only the closing control runs, and it must reproduce the opening one bitwise
  SweepOptions resume;
  resume.resume = true;
  const InterventionDocument doc = sweep(m, "order.json", resume);
  EXPECT_FALSE(fs::exists(files_.dir.path() + "/order.json.journal")) << "the journal outlived the document";
  EXPECT_EQ(doc.toJson()["schema"], "omn-audit/intervention@1");
  const std::string original = handMadeGainDigest();
  EXPECT_EQ(doc.gains.working_sha256, original);
  EXPECT_EQ(doc.gains.checkpoint_sha256, original);  // stored fp32, worked in fp32: the same bytes
  EXPECT_EQ(doc.control.open.gain_sha256, original);
  EXPECT_EQ(doc.control.close.gain_sha256, original);
  EXPECT_TRUE(doc.control.reproduced_bitwise);
  EXPECT_EQ(doc.control.max_abs_nll_difference, 0.0);
  EXPECT_EQ(doc.control.open.result.sequences.tokens.size(), 8u);

  const std::vector<std::string> all = {tensorNameOf(0, true), tensorNameOf(0, false), tensorNameOf(1, true), tensorNameOf(1, false)};
  const std::vector<std::vector<std::string>> touched = {
      {tensorNameOf(0, true), tensorNameOf(1, true)}, all, {tensorNameOf(1, false)}, all, all};
  const std::vector<std::string> pointers = {"/conditions/0", "/conditions/0", "/conditions/1", "/conditions/2", "/conditions/3"};
  const std::vector<std::string> ops = {"constant", "constant", "scale", "swap_qk", "compensate"};
  const std::vector<SweepCondition>& conds = doc.conditions;
  ASSERT_EQ(conds.size(), 5u);
  for (std::size_t i = 0; i < conds.size(); ++i) {
    const SweepCondition& c = conds[i];
    EXPECT_EQ(c.id, "c" + std::to_string(i));
    EXPECT_EQ(c.label, m.conditions[i].label);
    EXPECT_EQ(c.op.name, ops[i]) << c.label;
    EXPECT_EQ(c.op.recorded, m.conditions[i].describe()) << c.label;
    EXPECT_EQ(c.manifest_pointer, pointers[i]);
    EXPECT_EQ(c.touched, touched[i]) << c.label;
    EXPECT_EQ(c.applied.vectors.size(), touched[i].size()) << c.label;
    EXPECT_NE(c.applied.sha256, original) << c.label << ": the pass ran with the original gains";
    EXPECT_EQ(c.restore.sha256, original) << c.label;
    EXPECT_EQ(c.restore.expected, original) << c.label;
    EXPECT_TRUE(c.restore.ok) << c.label;
    EXPECT_EQ(c.start_layer, 0);
    EXPECT_EQ(c.result.sequences.tokens, doc.control.open.result.sequences.tokens);
    EXPECT_FALSE(c.divergence) << c.label << ": no --kl, no divergence";
    EXPECT_FALSE(c.mechanism) << c.label << ": no --mechanism, no table";
  }
  // every logit q·k unchanged and the gains exact (×2, ÷2 in fp32): compensate is the control bitwise;
  // the others change the NLLs
  EXPECT_EQ(conds[4].result.sequences.nll_sum, doc.control.open.result.sequences.nll_sum);
  EXPECT_EQ(conds[4].vs_control.delta_nll_per_token.estimate, 0.0);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NE(conds[i].result.nll_sum, doc.control.open.result.nll_sum) << conds[i].label;
}

// An interrupted sweep continued with --resume writes the document an uninterrupted one writes,
// every number equal, whether it stopped inside a condition or inside the closing control.
TEST_F(SweepTest, AResumedSweepEqualsAnUninterruptedOne) {
  const auto m = files_.manifest(json::parse(kSweepConditions));
  const InterventionDocument whole = sweep(m, "whole.json");
  EXPECT_EQ(whole.conditions.size(), 5u);

  sweepStoppedAt(m, "mid.json", 4);  // header, control, c0, c1: stopped inside c2
  const std::vector<json> journaled = journalRecords(files_.dir.path() + "/mid.json.journal");
  SweepOptions resume;
  resume.resume = true;
  const InterventionDocument mid = sweep(m, "mid.json", resume);
  EXPECT_EQ(sweepNumbers(mid), sweepNumbers(whole));
  // the journaled passes were reused, not run again: their durations are the journal's
  EXPECT_EQ(mid.control.open.seconds, journaled[1]["seconds"].get<double>());
  EXPECT_EQ(mid.conditions[0].seconds, journaled[2]["seconds"].get<double>());
  EXPECT_EQ(mid.conditions[1].seconds, journaled[3]["seconds"].get<double>());

  // a resume without the flag is refused, naming the journal; nothing is overwritten
  sweepStoppedAt(m, "late.json", 7);
  EXPECT_THROW(sweep(m, "late.json"), omn::UsageError);
  EXPECT_EQ(journalLines(files_.dir.path() + "/late.json.journal"), 7u);
  const InterventionDocument late = sweep(m, "late.json", resume);
  EXPECT_EQ(sweepNumbers(late), sweepNumbers(whole));
  // the raw per-sequence sums themselves, bit for bit
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_EQ(late.conditions[i].result.sequences.nll_sum, whole.conditions[i].result.sequences.nll_sum);
}

// Conditions that touch layer 1 only start from the activation cache at layer 1, with --mechanism
// and --kl on: every NLL equals a plain sweep's, the cached layer's statistics are the control's,
// the closing control's KL against the opening one is 0 with every top-1 token agreeing.
TEST_F(SweepTest, CacheMechanismAndKlLeaveTheNllsOfAPlainSweep) {
  const auto m = files_.manifest(json::parse(kLayerOneConditions));
  ASSERT_EQ(m.conditions.size(), 3u);
  const InterventionDocument plain = sweep(m, "plain.json");
  SweepOptions o;
  o.cache_activations = true;
  o.mechanism = true;
  o.kl = true;
  const InterventionDocument full = sweep(m, "full.json", o);
  EXPECT_TRUE(full.cache.enabled);
  EXPECT_EQ(full.cache.layer, 1);
  EXPECT_TRUE(full.mechanism);
  EXPECT_EQ(full.kl, true);
  EXPECT_EQ(full.control.open.result.sequences.nll_sum, plain.control.open.result.sequences.nll_sum);
  EXPECT_EQ(full.control.close.result.sequences.nll_sum, plain.control.close.result.sequences.nll_sum);
  ASSERT_TRUE(full.control.open.mechanism);
  const std::vector<omn::documents::MechanismLayer>& ctl_mech = *full.control.open.mechanism;
  ASSERT_EQ(ctl_mech.size(), 2u);
  auto metricsOf = [](const omn::documents::MechanismLayer& l) { json j; omn::documents::writeLayerMetrics(j, l.metrics); return j; };
  for (std::size_t i = 0; i < 3; ++i) {
    const SweepCondition& c = full.conditions[i];
    EXPECT_EQ(c.start_layer, 1) << c.label;
    EXPECT_EQ(c.result.sequences.nll_sum, plain.conditions[i].result.sequences.nll_sum) << c.label;
    const omn::documents::Interval &ratio = c.vs_control.ppl_ratio, &plain_ratio = plain.conditions[i].vs_control.ppl_ratio;
    EXPECT_TRUE(ratio.estimate == plain_ratio.estimate && ratio.low == plain_ratio.low && ratio.high == plain_ratio.high) << c.label;
    ASSERT_TRUE(c.mechanism);
    ASSERT_EQ(c.mechanism->size(), 2u);
    EXPECT_EQ(metricsOf((*c.mechanism)[0]), metricsOf(ctl_mech[0])) << c.label << ": layer 0 was not run, it is the control's";
    EXPECT_NE(metricsOf((*c.mechanism)[1]), metricsOf(ctl_mech[1])) << c.label;
    ASSERT_TRUE(c.divergence) << c.label << ": --kl keeps the raw sums";
    ASSERT_TRUE(c.vs_control.divergence) << c.label;
    EXPECT_GT(c.vs_control.divergence->kl_per_token.value_or(0), 0.0) << c.label;
  }
  ASSERT_TRUE(full.control.close.divergence);
  const omn::documents::DivergenceSums& close = *full.control.close.divergence;
  const std::vector<std::int64_t>& tokens = full.control.close.result.sequences.tokens;
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    EXPECT_EQ(close.kl_sum[r], 0.0) << "row " << r;
    EXPECT_EQ(close.top1_agree[r], tokens[r]) << "row " << r;
    EXPECT_EQ(close.dp_correct_sum[r], 0.0) << "row " << r;
  }
  // stopped in a condition and resumed: the cache and the --kl reference are refilled by one control
  // pass, and the document is the uninterrupted one's
  sweepStoppedAt(m, "full-resumed.json", 3, o);
  SweepOptions resume = o;
  resume.resume = true;
  const InterventionDocument resumed = sweep(m, "full-resumed.json", resume);
  EXPECT_EQ(sweepNumbers(resumed), sweepNumbers(full));
}
