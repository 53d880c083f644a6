#include "omn/documents/shape_rules.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "omn/errors.h"

namespace omn::documents {

using nlohmann::json;

namespace {

struct Fail {
  const std::string& label;
  [[noreturn]] void operator()(const std::string& ptr, const std::string& what) const {
    throw FormatError(label + ": " + ptr + ": " + what);
  }
};

}  // namespace

void checkInterventionShape(const json& doc, const std::string& label) {
  const Fail fail{label};
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
}

void checkTrainShape(const json& doc, const std::string& label) {
  const Fail fail{label};
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
}

void checkStudyShape(const json& doc, const std::string& label) {
  const Fail fail{label};
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
}

void checkTrackShape(const json& doc, const std::string& label) {
  const Fail fail{label};
  const json& cs = doc["checkpoints"];
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (cs[i]["layers"].empty() || cs[i]["layers"].size() != cs[0]["layers"].size())
      fail("/checkpoints/" + std::to_string(i) + "/layers",
           "expected the layers of every checkpoint (" + std::to_string(cs[0]["layers"].size()) + "), got " +
               std::to_string(cs[i]["layers"].size()));
}

void checkProfileShape(const json& doc, const std::string& label) {
  const Fail fail{label};
  // the first 100 non-finite gains are listed: a count the list does not bear out is not a profile
  const json& st = doc["statistics"];
  const std::size_t nf = st.contains("count_non_finite") ? st["count_non_finite"].get<std::size_t>() : 0;
  if (doc.contains("non_finite") && doc["non_finite"].size() != std::min<std::size_t>(nf, 100))
    fail("/non_finite", "expected the first " + std::to_string(std::min<std::size_t>(nf, 100)) + " of the " + std::to_string(nf) +
                            " non-finite gains /statistics/count_non_finite counts, got " + std::to_string(doc["non_finite"].size()));
  for (std::size_t i = 0; i < doc["layers"].size(); ++i)
    if (doc["layers"][i]["layer"] != i) fail("/layers/" + std::to_string(i) + "/layer", "expected " + std::to_string(i));
}

void checkShape(const json& doc, DocumentKind kind, const std::string& label) {
  switch (kind) {
    case DocumentKind::intervention: return checkInterventionShape(doc, label);
    case DocumentKind::train: return checkTrainShape(doc, label);
    case DocumentKind::study: return checkStudyShape(doc, label);
    case DocumentKind::track: return checkTrackShape(doc, label);
    case DocumentKind::profile: return checkProfileShape(doc, label);
    case DocumentKind::reference_profile:
    case DocumentKind::tolerance:
    case DocumentKind::eval: return;
  }
}

}  // namespace omn::documents
