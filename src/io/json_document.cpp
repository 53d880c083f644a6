#include "omn/io/json_document.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "omn/embedded.h"
#include "omn/errors.h"

namespace omn::io {

using nlohmann::json;

namespace {

// The deepest nesting of [ and { in `text`, outside strings: one linear pass. (nlohmann's parse
// callback, which also sees the depth, re-scans the parent container each time an object closes:
// an array of n empty objects took O(n^2) time, 26 s for 620 kB.)
int nestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

json parseJson(std::string_view text, const std::string& label) {
  // bounded before anything recursive (the parse's destructor, a reader, a validator) runs
  if (nestingDepth(text) > kMaxJsonDepth)
    throw FormatError(label + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels: not an omn-audit document");
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw FormatError(label + ": not valid JSON: " + e.what());
  }
}

std::string readTextFile(const std::string& path, const std::string& what) {
  // stat first: opening a FIFO for reading would block until a writer came, and /dev/zero never ends
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw FormatError(what + " " + path + ": cannot open for reading: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw FormatError(what + " " + path + ": not a regular file (a FIFO, device or directory)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(what + " " + path + ": cannot open for reading");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json readJsonFile(const std::string& path, const std::string& what) { return parseJson(readTextFile(path, what), what + " " + path); }

namespace {

struct KindInfo {
  DocumentKind kind;
  const char* id;
  const char* file;  // in docs/schema, embedded as "schema/<file>"
};
constexpr KindInfo kKinds[] = {
    {DocumentKind::profile, "omn-audit/profile@1", "profile.schema.json"},
    {DocumentKind::reference_profile, "omn-audit/reference-profile@1", "reference-profile.schema.json"},
    {DocumentKind::tolerance, "omn-audit/tolerance@1", "tolerance.schema.json"},
    {DocumentKind::eval, "omn-audit/eval@1", "eval.schema.json"},
    {DocumentKind::intervention, "omn-audit/intervention@1", "intervention.schema.json"},
    {DocumentKind::study, "omn-audit/study@1", "study.schema.json"},
    {DocumentKind::track, "omn-audit/track@1", "track.schema.json"},
    {DocumentKind::train, "omn-audit/train@1", "train.schema.json"},
};

const KindInfo& info(DocumentKind k) {
  for (const auto& i : kKinds)
    if (i.kind == k) return i;
  throw std::logic_error("unknown document kind");
}

json embeddedSchema(const std::string& file) {
  const auto& files = embeddedConfigs();
  const auto it = files.find("schema/" + file);
  if (it == files.end()) throw std::logic_error("schema " + file + " is not embedded");
  return json::parse(it->second);
}

// The parsed schema of each kind, built once (schemas refer to each other by file name:
// "provenance.schema.json", "eval.schema.json#/$defs/scores").
const valijson::Schema& schemaFor(DocumentKind k) {
  static std::map<DocumentKind, std::unique_ptr<valijson::Schema>> cache;
  auto& slot = cache[k];
  if (!slot) {
    const json root = embeddedSchema(info(k).file);
    slot = std::make_unique<valijson::Schema>();
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(root);
    parser.populateSchema(
        adapter, *slot, [](const std::string& uri) { return new json(embeddedSchema(uri.substr(0, uri.find('#')))); },
        [](const json* d) { delete d; });
  }
  return *slot;
}

// valijson's context ("<root>", "[layers]", "[0]") as a JSON pointer ("/layers/0").
std::string pointerOf(const std::vector<std::string>& context) {
  std::string p;
  for (const auto& c : context) {
    if (c.size() < 2 || c.front() != '[' || c.back() != ']') continue;
    std::string seg = c.substr(1, c.size() - 2);
    if (seg.size() >= 2 && seg.front() == '"' && seg.back() == '"') seg = seg.substr(1, seg.size() - 2);
    std::string esc;
    for (char ch : seg) esc += ch == '~' ? "~0" : ch == '/' ? "~1" : std::string(1, ch);
    p += "/" + esc;
  }
  return p.empty() ? "/" : p;
}

// What a schema cannot say: arrays that readers walk in step must have equal lengths.
void checkShape(const json& doc, DocumentKind k, const std::string& label) {
  auto fail = [&](const std::string& ptr, const std::string& what) { throw FormatError(label + ": " + ptr + ": " + what); };
  if (k == DocumentKind::intervention) {
    // every mechanism record (control and conditions) has one entry per layer, or none at all
    std::vector<std::pair<std::string, const json*>> mech = {{"/control/open/mechanism", &doc["control"]["open"]["mechanism"]},
                                                             {"/control/close/mechanism", &doc["control"]["close"]["mechanism"]}};
    for (std::size_t i = 0; i < doc["conditions"].size(); ++i)
      mech.emplace_back("/conditions/" + std::to_string(i) + "/mechanism", &doc["conditions"][i]["mechanism"]);
    const json& first = *mech[0].second;
    for (const auto& [ptr, m] : mech) {
      if (m->is_null() != first.is_null()) fail(ptr, "mechanism recorded for some conditions and not others");
      if (m->is_array() && (m->empty() || m->size() != first.size()))
        fail(ptr, "expected one entry per layer (" + std::to_string(first.size()) + "), got " + std::to_string(m->size()));
    }
    // paired statistics: every result scores the same sequences
    const json& seq0 = doc["control"]["open"]["result"]["sequences"];
    std::vector<std::pair<std::string, const json*>> res = {{"/control/open/result", &doc["control"]["open"]["result"]},
                                                            {"/control/close/result", &doc["control"]["close"]["result"]}};
    for (std::size_t i = 0; i < doc["conditions"].size(); ++i)
      res.emplace_back("/conditions/" + std::to_string(i) + "/result", &doc["conditions"][i]["result"]);
    for (const auto& [ptr, r] : res) {
      const json& q = (*r)["sequences"];
      if (q["nll_sum"].size() != seq0["tokens"].size() || q["tokens"] != seq0["tokens"])
        fail(ptr + "/sequences", "not the control's sequences (" + std::to_string(seq0["tokens"].size()) + " of them, same token counts)");
    }
  } else if (k == DocumentKind::train) {
    // the checkpoints in step order, within the run, and the last one the one a resume starts from
    const json& cs = doc["checkpoints"];
    const std::int64_t steps = doc["steps"].get<std::int64_t>();
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const std::int64_t st = cs[i]["step"].get<std::int64_t>();
      if (st > steps || (i > 0 && st <= cs[i - 1]["step"].get<std::int64_t>()))
        fail("/checkpoints/" + std::to_string(i) + "/step", "expected a step after the previous checkpoint's and at most /steps " +
                                                              std::to_string(steps) + ", got " + std::to_string(st));
    }
    // null when the run has no checkpoint yet (0 in records written before step-0 checkpoints)
    const json want = cs.empty() ? json(nullptr) : cs.back()["step"];
    if (doc["last_checkpoint_step"] != want && !(cs.empty() && doc["last_checkpoint_step"] == 0))
      fail("/last_checkpoint_step", "expected the last checkpoint's step " + want.dump() + ", got " + doc["last_checkpoint_step"].dump());
  } else if (k == DocumentKind::study) {
    // every run in an arm of its own QK-norm setting, and its trajectories walked in step
    std::map<std::string, bool> arm_qk;
    for (const json& a : doc["arms"]) arm_qk[a["arm"].get<std::string>()] = a["qk_norm"].get<bool>();
    for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
      const json& r = doc["runs"][i];
      const std::string ptr = "/runs/" + std::to_string(i);
      const auto it = arm_qk.find(r["arm"].get<std::string>());
      if (!doc["arms"].empty() && it == arm_qk.end()) fail(ptr + "/arm", "no arm of the study is named " + r["arm"].dump());
      if (it != arm_qk.end() && it->second != r["qk_norm"].get<bool>())
        fail(ptr + "/qk_norm", std::string("expected ") + (it->second ? "true" : "false") + ", the QK-norm setting of its arm " + r["arm"].dump());
      const json& t = r["trajectory"]["train"];
      if (t["loss"].size() != t["step"].size())
        fail(ptr + "/trajectory/train/loss", "expected one value per step (" + std::to_string(t["step"].size()) + "), got " +
                                                 std::to_string(t["loss"].size()));
      const json& e = r["trajectory"]["eval"];
      for (const auto& [key, series] : e.items())
        if (key != "step" && series.size() != e["step"].size())
          fail(ptr + "/trajectory/eval/" + key, "expected one entry per evaluation step (" + std::to_string(e["step"].size()) + "), got " +
                                                    std::to_string(series.size()));
    }
  } else if (k == DocumentKind::track) {
    const json& cs = doc["checkpoints"];
    for (std::size_t i = 0; i < cs.size(); ++i)
      if (cs[i]["layers"].empty() || cs[i]["layers"].size() != cs[0]["layers"].size())
        fail("/checkpoints/" + std::to_string(i) + "/layers",
             "expected the layers of every checkpoint (" + std::to_string(cs[0]["layers"].size()) + "), got " +
                 std::to_string(cs[i]["layers"].size()));
  } else if (k == DocumentKind::profile) {
    // the first 100 non-finite gains are listed: a count the list does not bear out is not a profile
    const json& st = doc["statistics"];
    const std::size_t nf = st.contains("count_non_finite") ? st["count_non_finite"].get<std::size_t>() : 0;
    if (doc.contains("non_finite") && doc["non_finite"].size() != std::min<std::size_t>(nf, 100))
      fail("/non_finite", "expected the first " + std::to_string(std::min<std::size_t>(nf, 100)) + " of the " + std::to_string(nf) +
                              " non-finite gains /statistics/count_non_finite counts, got " + std::to_string(doc["non_finite"].size()));
    for (std::size_t i = 0; i < doc["layers"].size(); ++i)
      if (doc["layers"][i]["layer"] != i) fail("/layers/" + std::to_string(i) + "/layer", "expected " + std::to_string(i));
  }
}

}  // namespace

const char* schemaId(DocumentKind kind) { return info(kind).id; }

DocumentKind checkDocument(const json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted) {
  std::string expected;
  for (DocumentKind k : accepted) expected += std::string(expected.empty() ? "" : " or ") + "\"" + schemaId(k) + "\"";
  if (!doc.is_object()) throw FormatError(label + ": /: expected an omn-audit document (a JSON object), got " + doc.type_name());
  const auto s = doc.find("schema");
  if (s == doc.end() || !s->is_string())
    throw FormatError(label + ": /schema: expected " + expected + ", got " + (s == doc.end() ? "nothing" : s->dump()));
  for (DocumentKind k : accepted) {
    if (*s != schemaId(k)) continue;
    // One validator per thread: it caches the schemas' compiled "pattern" regexes, which cost more
    // than validating a whole profile when compiled afresh for each document.
    static thread_local valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(doc);
    if (!validator.validate(schemaFor(k), target, &results)) {
      valijson::ValidationResults::Error e;
      results.popError(e);  // the innermost failure comes first
      throw FormatError(label + ": " + pointerOf(e.context) + ": " + e.description + " (docs/schema/" + info(k).file + ")");
    }
    checkShape(doc, k, label);
    return k;
  }
  throw FormatError(label + ": /schema: expected " + expected + ", got " + s->dump());
}

namespace {

// A profile written before count ranges were an option (2026-12-01) holds the audit's two counts
// under fixed names; they are the ranges [1,2] and (32,inf), read as such so that a baseline
// from then still gates, compares and renders like a new one.
void readLegacyCounts(json& profile) {
  json& s = profile["statistics"];
  if (s.contains("counts")) return;
  json counts = json::object(), labels = json::array();
  auto take = [&](const char* old_key, const char* label, json lo, json hi, bool lo_closed, bool hi_closed) {
    if (!s.contains(old_key)) return;
    counts[label] = {{"lo", lo}, {"hi", hi}, {"lo_closed", lo_closed}, {"hi_closed", hi_closed}, {"count", s[old_key]}};
    labels.push_back(label);
    s.erase(old_key);
  };
  take("count_in_1_2", "[1,2]", 1.0, 2.0, true, true);
  take("count_above_32", "(32,inf)", 32.0, nullptr, false, false);
  s["counts"] = counts;
  if (!profile["options"].contains("count_ranges")) profile["options"]["count_ranges"] = labels;
}

// A reference written then points its figures at those fields: the same counts, at their new place.
void readLegacyFigures(json& reference) {
  for (auto& f : reference["figures"])
    for (const auto& c : kLegacyCounts)
      if (f["pointer"] == c.field) f["pointer"] = c.pointer;
}

}  // namespace

DocumentKind acceptDocument(json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted) {
  const DocumentKind k = checkDocument(doc, label, accepted);
  if (k == DocumentKind::profile) readLegacyCounts(doc);
  if (k == DocumentKind::reference_profile) readLegacyFigures(doc);
  return k;
}

Document readDocument(const std::string& path, const std::string& what, std::initializer_list<DocumentKind> accepted) {
  json j = readJsonFile(path, what);
  const DocumentKind k = acceptDocument(j, what + " " + path, accepted);
  return {k, std::move(j)};
}

}  // namespace omn::io
