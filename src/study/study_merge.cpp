#include "omn/study/study_merge.h"

#include <set>

#include "omn/errors.h"
#include "omn/report/provenance.h"
#include "omn/report/shard_set.h"
#include "omn/study/analysis.h"

namespace omn::study {

using nlohmann::json;

json mergeStudyShards(const std::vector<std::string>& paths) {
  const std::vector<json> docs =
      report::readShardSet(paths, "omn-audit/study@1",
                           {"/manifest/sha256", "/base_config/sha256", "/corpus/sha256", "/grid", "/confidence",
                            "/provenance/model_code_fingerprint", "/provenance/git_revision", "/provenance/libtorch"},
                           "study");
  std::vector<json> runs;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i].contains("runs") || !docs[i]["runs"].is_array()) throw UsageError(paths[i] + ": /runs: expected an array");
    for (const auto& r : docs[i]["runs"]) {
      if (!ids.insert(r.at("id").get<std::string>()).second)
        throw UsageError("merge: " + paths[i] + ": run " + r["id"].get<std::string>() + " appears in two shards");
      runs.push_back(r);
    }
  }
  const auto cells = docs[0]["grid"].at("cells").get<std::size_t>();
  if (runs.size() != cells)
    throw UsageError("merge: the shards hold " + std::to_string(runs.size()) + " runs, the study has " + std::to_string(cells));
  json base = docs[0];
  for (const char* k : {"runs", "arms", "comparison"}) base.erase(k);
  base["shard"] = nullptr;
  base["merged_from"] = report::mergedFrom(paths, docs);
  base["provenance"]["finished_utc"] = report::utcNow();
  return assembleStudy(base, runs);
}

}  // namespace omn::study
