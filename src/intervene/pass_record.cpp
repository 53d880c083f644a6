#include "omn/intervene/pass_record.h"

#include <cmath>
#include <limits>

#include "omn/documents/document.h"
#include "omn/documents/read_block.h"
#include "omn/io/json_reader.h"
#include "omn/output/table.h"

namespace omn::intervene {

using nlohmann::json;

eval::SequenceScores recordedScores(eval::SequenceScores s) {
  for (double& x : s.nll_sum)
    if (!std::isfinite(x)) x = std::nan("");
  return s;
}

namespace {

// {nll_sum: [number|null], tokens: [integer]} as the journal and the document write them (NaN: null)
documents::SequenceScores rawScores(const eval::SequenceScores& s) {
  documents::SequenceScores raw;
  for (double x : s.nll_sum) raw.nll_sum.push_back(std::isfinite(x) ? std::optional<double>(x) : std::nullopt);
  raw.tokens = s.tokens;
  return raw;
}

// A result's per-sequence scores as a record holds them (null: NaN)
eval::SequenceScores recordScores(const documents::SequenceScores& raw) {
  eval::SequenceScores s;
  for (const auto& x : raw.nll_sum) s.nll_sum.push_back(x ? *x : std::nan(""));
  s.tokens = raw.tokens;
  return s;
}

// {nll_sum: [number|null], tokens: [integer]}, one of each per sequence (null: a NaN sum)
eval::SequenceScores readScores(const io::JsonReader& rd, const json& raw, const std::string& ptr) {
  rd.object(raw, ptr, {"nll_sum", "tokens"});
  const json& nll = rd.need(raw, ptr, "nll_sum");
  const json& tokens = rd.need(raw, ptr, "tokens");
  if (!nll.is_array()) rd.fail(ptr + "/nll_sum", std::string("expected an array, got ") + nll.type_name());
  if (!tokens.is_array() || tokens.size() != nll.size())
    rd.fail(ptr + "/tokens", "expected an array of " + std::to_string(nll.size()) + " token counts, one per nll_sum");
  eval::SequenceScores s;
  for (std::size_t i = 0; i < nll.size(); ++i) {
    const std::string at = "/" + std::to_string(i);
    s.nll_sum.push_back(nll[i].is_null() ? std::nan("") : rd.num(nll[i], ptr + "/nll_sum" + at));
    s.tokens.push_back(rd.integer(tokens[i], ptr + "/tokens" + at, 0));
  }
  return s;
}

const json& objectAt(const io::JsonReader& rd, const json& j, const std::string& ptr) {
  if (!j.is_object()) rd.fail(ptr, std::string("expected an object, got ") + j.type_name());
  return j;
}

// --mechanism's table: null, or one object per layer
documents::MechanismTable readMechanism(const io::JsonReader& rd, const std::string& label, const json& j) {
  const json m = j.value("mechanism", json());
  if (m.is_null()) return std::nullopt;
  if (!m.is_array()) rd.fail("/mechanism", std::string("expected null or an array of layers, got ") + m.type_name());
  for (std::size_t l = 0; l < m.size(); ++l) objectAt(rd, m[l], "/mechanism/" + std::to_string(l));
  documents::MechanismTable table = documents::readBlock<documents::MechanismTable>(m, label, "/mechanism");
  // what the struct reads as absent or truncates (a row without q_rms, a layer of 1.7) the schema refuses
  documents::checkPart(m, documents::DocumentKind::intervention, "/$defs/mechanism", label, "/mechanism");
  return table;
}

// --kl's per-sequence sums (eval::divergenceSums): null, or one number (or null) per sequence in
// each of kl_sum, top1_agree and dp_correct_sum, and the quantiles
std::optional<documents::DivergenceSums> readDivergence(const io::JsonReader& rd, const std::string& label, const json& j,
                                                        std::size_t sequences) {
  const json d = j.value("divergence", json());
  if (d.is_null()) return std::nullopt;
  if (!d.is_object()) rd.fail("/divergence", std::string("expected null or an object, got ") + d.type_name());
  for (const char* key : {"kl_sum", "top1_agree", "dp_correct_sum"}) {
    const std::string ptr = std::string("/divergence/") + key;
    const json& v = rd.need(d, "/divergence", key);
    if (!v.is_array() || v.size() != sequences)
      rd.fail(ptr, "expected an array of " + std::to_string(sequences) + " per-sequence values");
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!v[i].is_null()) rd.num(v[i], ptr + "/" + std::to_string(i));
  }
  rd.need(d, "/divergence", "kl_quantiles");
  return documents::readBlock<documents::DivergenceSums>(d, label, "/divergence");
}

std::string sha(const io::JsonReader& rd, const json& j, const std::string& ptr, const char* key) {
  return rd.str(rd.need(j, ptr, key), ptr + "/" + key);
}

// A condition's identity as its journal line holds it (conditionIdentity's members)
void readIdentity(const io::JsonReader& rd, const std::string& label, const json& j, PassRecord& r) {
  r.id = sha(rd, j, "", "id");
  r.label = sha(rd, j, "", "label");
  r.manifest_pointer = sha(rd, j, "", "manifest_pointer");
  r.op = documents::readBlock<documents::ConditionOp>(rd.need(j, "", "op"), label, "/op");
  // what the struct reads as absent (an op without its name) the schema refuses
  documents::checkPart(rd.need(j, "", "op"), documents::DocumentKind::intervention, "/properties/conditions/items/properties/op", label, "/op");
  const json& touched = rd.need(j, "", "touched");
  if (!touched.is_array()) rd.fail("/touched", std::string("expected an array, got ") + touched.type_name());
  for (std::size_t i = 0; i < touched.size(); ++i) r.touched.push_back(rd.str(touched[i], "/touched/" + std::to_string(i)));
  const json& applied = rd.need(j, "", "applied");
  r.applied.sha256 = sha(rd, applied, "/applied", "sha256");
  r.applied.vectors = documents::readBlock<std::vector<documents::AppliedVector>>(rd.need(applied, "/applied", "vectors"), label,
                                                                                  "/applied/vectors");
  r.start_layer = static_cast<int>(rd.integer(rd.need(j, "", "start_layer"), "/start_layer", 0, std::numeric_limits<int>::max()));
  const json& restore = rd.need(j, "", "restore");
  r.restore.sha256 = sha(rd, restore, "/restore", "sha256");
  r.restore.expected = sha(rd, restore, "/restore", "expected");
}

// A journal line's record; `j` is an object (the caller checks).
PassRecord readRecord(const io::JsonReader& rd, const std::string& label, const json& j, bool control) {
  PassRecord r;
  r.control = control;
  r.scores = readScores(rd, rd.need(j, "", "scores"), "/scores");
  if (const json* s = rd.opt(j, "seconds")) r.seconds = rd.num(*s, "/seconds");
  r.mechanism = readMechanism(rd, label, j);
  r.divergence = readDivergence(rd, label, j, r.scores.nll_sum.size());
  if (control) {
    if (const json* g = rd.opt(j, "gain_sha256")) r.gain_sha256 = rd.str(*g, "/gain_sha256");
    return r;
  }
  readIdentity(rd, label, j, r);
  if (const json* p = rd.opt(j, "reported_perplexity")) r.reported_perplexity = rd.num(*p, "/reported_perplexity");
  return r;
}

}  // namespace

documents::SweepCondition conditionIdentity(const PassRecord& r) {
  documents::SweepCondition c;
  static_cast<documents::ConditionIdentity&>(c) = r;
  c.restore.ok = r.restored();
  c.seconds = r.seconds;
  c.mechanism = r.mechanism;
  return c;
}

// The journal line: a control's pass, or a condition's identity as the document writes it (its one
// to_json, less the statistics a result adds), with the raw scores and --kl's sums.
json journalLine(const PassRecord& r, const std::string& sweep_sha256) {
  json j;
  if (r.control) {
    j = {{"id", r.id}, {"gain_sha256", r.gain_sha256}, {"seconds", r.seconds}, {"mechanism", r.mechanism ? json(*r.mechanism) : json(nullptr)}};
  } else {
    j = conditionIdentity(r);
    j.erase("result");
    j.erase("vs_control");
    j["reported_perplexity"] = r.reported_perplexity ? json(*r.reported_perplexity) : json(nullptr);
  }
  j["kind"] = r.control ? "control" : "condition";
  j["scores"] = rawScores(r.scores);
  j["divergence"] = r.divergence ? json(*r.divergence) : json(nullptr);
  j["sweep_sha256"] = sweep_sha256;
  return j;
}

namespace {

// A journaled record's binding and numbers against what this sweep expects of it (JournalExpectation).
void checkAgainstSweep(const io::JsonReader& rd, const json& line, const PassRecord& r, const JournalExpectation& expect) {
  if (sha(rd, line, "", "sweep_sha256") != expect.sweep_sha256)
    rd.fail("/sweep_sha256", "the record is another sweep's (another manifest, checkpoint, token set, rows or condition "
                             "definition than this sweep's " + r.id + "): remove the journal to start over");
  const auto& tokens = r.scores.tokens;
  if (tokens.size() != expect.tokens.size())
    rd.fail("/scores/tokens", "expected one count per row of this sweep (" + std::to_string(expect.tokens.size()) + "), got " +
                                  std::to_string(tokens.size()));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] != expect.tokens[i])
      rd.fail("/scores/tokens/" + std::to_string(i), "expected the " + std::to_string(expect.tokens[i]) + " tokens row " +
                                                         std::to_string(i) + " scores, got " + std::to_string(tokens[i]));
  for (std::size_t i = 0; i < r.scores.nll_sum.size(); ++i)  // NaN (null): a sum that was not finite, as written
    if (r.scores.nll_sum[i] < 0)
      rd.fail("/scores/nll_sum/" + std::to_string(i), "expected an NLL sum >= 0, got " + output::significant(r.scores.nll_sum[i], 6));
}

// The parts the sweep's options give a pass (JournalExpectation): present exactly when asked for.
void checkParts(const io::JsonReader& rd, const PassRecord& r, const JournalExpectation& expect) {
  const std::size_t n = expect.mechanism_layers;
  if (!n && r.mechanism) rd.fail("/mechanism", "expected null: this sweep runs without --mechanism");
  if (n && !r.mechanism) rd.fail("/mechanism", "expected one row per layer (" + std::to_string(n) + "): this sweep runs with --mechanism");
  if (n && r.mechanism->size() != n)
    rd.fail("/mechanism", "expected one row per layer (" + std::to_string(n) + "), got " + std::to_string(r.mechanism->size()));
  for (std::size_t l = 0; n && l < n; ++l)
    if ((*r.mechanism)[l].layer != static_cast<std::int64_t>(l))
      rd.fail("/mechanism/" + std::to_string(l) + "/layer", "expected " + std::to_string(l) + ", got " + std::to_string((*r.mechanism)[l].layer));
  if (expect.divergence != r.divergence.has_value())
    rd.fail("/divergence", expect.divergence ? "expected --kl's sums: this sweep runs with --kl"
                                             : "expected null: this sweep runs without --kl (or the record is the opening control, their reference)");
}

}  // namespace

PassRecord recordFromJournal(const json& line, const std::string& where, bool control, const JournalExpectation& expect) {
  const bool named = line.is_object() && line.contains("id") && line["id"].is_string();
  const std::string label = where + " record " + (named ? line["id"].get<std::string>() : std::string("?"));
  const io::JsonReader rd(label);
  objectAt(rd, line, "");
  if (rd.oneOf(rd.need(line, "", "kind"), "/kind", {"control", "condition"}) != (control ? "control" : "condition"))
    rd.fail("/kind", std::string("expected \"") + (control ? "control" : "condition") + "\" in this place of the sweep");
  PassRecord r = readRecord(rd, label, line, control);
  r.id = sha(rd, line, "", "id");
  checkAgainstSweep(rd, line, r, expect);
  checkParts(rd, r, expect);
  return r;
}

PassRecord controlFromResult(const documents::ControlPass& block, const std::string& id) {
  PassRecord r;
  r.id = id;
  r.scores = recordScores(block.result.sequences);
  r.seconds = block.seconds;
  r.gain_sha256 = block.gain_sha256;
  r.mechanism = block.mechanism;
  r.divergence = block.divergence;
  return r;
}

PassRecord conditionFromResult(const documents::SweepCondition& c) {
  PassRecord r;
  static_cast<documents::ConditionIdentity&>(r) = c;
  r.control = false;
  r.scores = recordScores(c.result.sequences);
  r.seconds = c.seconds;
  r.mechanism = c.mechanism;
  r.divergence = c.divergence;
  if (c.reported) r.reported_perplexity = c.reported->perplexity;
  return r;
}

bool reusable(const json& line) {
  if (!line.is_object() || !line.contains("restore")) return true;
  const json& r = line["restore"];
  if (!r.is_object() || !r.contains("sha256") || !r.contains("expected")) return true;
  return r["sha256"] == r["expected"];
}

}  // namespace omn::intervene
