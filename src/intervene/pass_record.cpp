#include "omn/intervene/pass_record.h"

#include <cmath>
#include <limits>

#include "omn/io/json_reader.h"
#include "omn/output/json_file.h"
#include "omn/output/table.h"

namespace omn::intervene {

using nlohmann::json;

json scoresRaw(const eval::SequenceScores& s) {
  json nll = json::array();
  for (double x : s.nll_sum) nll.push_back(output::finiteOrNull(x));
  return {{"nll_sum", nll}, {"tokens", s.tokens}};
}

eval::SequenceScores recordedScores(eval::SequenceScores s) {
  for (double& x : s.nll_sum)
    if (!std::isfinite(x)) x = std::nan("");
  return s;
}

namespace {

json restoreJson(const PassRecord& r) {
  return {{"sha256", r.restore_sha256}, {"expected", r.restore_expected}, {"ok", r.restored()}};
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

// A result document's block (a control's, or a condition): an object whose /result/sequences holds
// the raw scores
const json& resultSequences(const io::JsonReader& rd, const json& block) {
  return rd.need(objectAt(rd, rd.need(objectAt(rd, block, ""), "", "result"), "/result"), "/result", "sequences");
}

// --mechanism's table: null, or one object per layer
json readMechanism(const io::JsonReader& rd, const json& j) {
  const json m = j.value("mechanism", json());
  if (m.is_null()) return m;
  if (!m.is_array()) rd.fail("/mechanism", std::string("expected null or an array of layers, got ") + m.type_name());
  for (std::size_t l = 0; l < m.size(); ++l)
    objectAt(rd, m[l], "/mechanism/" + std::to_string(l));
  return m;
}

// --kl's per-sequence sums (eval::divergenceRaw): null, or one number (or null) per sequence in
// each of kl_sum, top1_agree and dp_correct_sum, and the quantiles
json readDivergence(const io::JsonReader& rd, const json& j, std::size_t sequences) {
  const json d = j.value("divergence", json());
  if (d.is_null()) return d;
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
  return d;
}

std::string sha(const io::JsonReader& rd, const json& j, const std::string& ptr, const char* key) {
  return rd.str(rd.need(j, ptr, key), ptr + "/" + key);
}

// What the journal line and the result's block share; `scores` and `reported` point at their
// different places (the journal: /scores, /reported_perplexity; a result: /result/sequences,
// /reported/perplexity). `j` is an object (the callers check).
PassRecord readRecord(const io::JsonReader& rd, const json& j, bool control, const json& scores, const std::string& scores_ptr,
                      const json* reported) {
  PassRecord r;
  r.control = control;
  r.scores = readScores(rd, scores, scores_ptr);
  if (const json* s = rd.opt(j, "seconds")) r.seconds = rd.num(*s, "/seconds");
  r.mechanism = readMechanism(rd, j);
  r.divergence = readDivergence(rd, j, r.scores.nll_sum.size());
  if (control) {
    if (const json* g = rd.opt(j, "gain_sha256")) r.gain_sha256 = rd.str(*g, "/gain_sha256");
    return r;
  }
  r.id = sha(rd, j, "", "id");
  r.label = sha(rd, j, "", "label");
  r.manifest_pointer = sha(rd, j, "", "manifest_pointer");
  r.op = rd.need(j, "", "op");
  const json& touched = rd.need(j, "", "touched");
  if (!touched.is_array()) rd.fail("/touched", std::string("expected an array, got ") + touched.type_name());
  for (std::size_t i = 0; i < touched.size(); ++i) r.touched.push_back(rd.str(touched[i], "/touched/" + std::to_string(i)));
  const json& applied = rd.need(j, "", "applied");
  r.applied_sha256 = sha(rd, applied, "/applied", "sha256");
  r.applied_vectors = rd.need(applied, "/applied", "vectors");
  r.start_layer = static_cast<int>(rd.integer(rd.need(j, "", "start_layer"), "/start_layer", 0, std::numeric_limits<int>::max()));
  const json& restore = rd.need(j, "", "restore");
  r.restore_sha256 = sha(rd, restore, "/restore", "sha256");
  r.restore_expected = sha(rd, restore, "/restore", "expected");
  if (reported && !reported->is_null()) r.reported_perplexity = rd.num(*reported, "/reported");
  return r;
}

}  // namespace

json conditionIdentity(const PassRecord& r) {
  return {{"id", r.id},
          {"label", r.label},
          {"op", r.op},
          {"manifest_pointer", r.manifest_pointer},
          {"touched", r.touched},
          {"applied", {{"sha256", r.applied_sha256}, {"vectors", r.applied_vectors}}},
          {"start_layer", r.start_layer},
          {"restore", restoreJson(r)},
          {"seconds", r.seconds},
          {"mechanism", r.mechanism}};
}

json journalLine(const PassRecord& r, const std::string& sweep_sha256) {
  json j = r.control ? json{{"id", r.id}, {"gain_sha256", r.gain_sha256}, {"seconds", r.seconds}, {"mechanism", r.mechanism}}
                     : conditionIdentity(r);
  j["kind"] = r.control ? "control" : "condition";
  j["scores"] = scoresRaw(r.scores);
  j["divergence"] = r.divergence;
  if (!r.control) j["reported_perplexity"] = r.reported_perplexity ? json(*r.reported_perplexity) : json(nullptr);
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

}  // namespace

PassRecord recordFromJournal(const json& line, const std::string& where, bool control, const JournalExpectation& expect) {
  const bool named = line.is_object() && line.contains("id") && line["id"].is_string();
  const io::JsonReader rd(where + " record " + (named ? line["id"].get<std::string>() : std::string("?")));
  objectAt(rd, line, "");
  if (rd.oneOf(rd.need(line, "", "kind"), "/kind", {"control", "condition"}) != (control ? "control" : "condition"))
    rd.fail("/kind", std::string("expected \"") + (control ? "control" : "condition") + "\" in this place of the sweep");
  PassRecord r = readRecord(rd, line, control, rd.need(line, "", "scores"), "/scores",
                            line.contains("reported_perplexity") ? &line["reported_perplexity"] : nullptr);
  r.id = sha(rd, line, "", "id");
  checkAgainstSweep(rd, line, r, expect);
  return r;
}

PassRecord controlFromResult(const json& block, const std::string& id, const std::string& where) {
  const io::JsonReader rd(where);
  PassRecord r = readRecord(rd, block, true, resultSequences(rd, block), "/result/sequences", nullptr);
  r.id = id;
  return r;
}

PassRecord conditionFromResult(const json& c, const std::string& where) {
  const io::JsonReader rd(where);
  const json& sequences = resultSequences(rd, c);
  const json* reported = c.contains("reported") && c["reported"].is_object() && c["reported"].contains("perplexity")
                             ? &c["reported"]["perplexity"]
                             : nullptr;
  return readRecord(rd, c, false, sequences, "/result/sequences", reported);
}

bool reusable(const json& line) {
  if (!line.is_object() || !line.contains("restore")) return true;
  const json& r = line["restore"];
  if (!r.is_object() || !r.contains("sha256") || !r.contains("expected")) return true;
  return r["sha256"] == r["expected"];
}

}  // namespace omn::intervene
