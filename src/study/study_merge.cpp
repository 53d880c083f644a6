#include "omn/study/study_merge.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/output/provenance.h"
#include "omn/output/shard_set.h"
#include "omn/study/analysis.h"

namespace omn::study {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
// The corpus a run trained on, by content: the token files' and the tokenizer's SHA-256 its
// train.json records (read from the run's directory, checked against the digest the shard pins).
// corpus.json itself is not compared: it carries when and by which build it was made, so the same
// data rebuilt in a new session is another file (the lost cells of issue 29's tiny ablation).
// Null where the run's directory is not beside its shard (shard documents gathered without their
// runs): the merge then compares the shards' corpus.json digests instead, as before.
json corpusContent(const fs::path& train_json, const json& run) {
  std::error_code ec;
  if (!fs::is_regular_file(train_json, ec)) return nullptr;
  const std::string text = io::readTextFile(train_json.string(), "run record");
  const std::string want = run.at("train_json_sha256").get<std::string>();
  io::requireSha256(train_json.string(), want, io::sha256Bytes(text.data(), text.size()));
  const json rec = io::parseJson(text, train_json.string());
  json c = json::object();
  for (const char* k : {"train_sha256", "heldout_sha256", "tokenizer_sha256"}) {
    if (!rec.contains("corpus") || !rec["corpus"].contains(k) || !rec["corpus"][k].is_string())
      throw FormatError(train_json.string() + ": /corpus/" + k + ": expected the SHA-256 of the corpus file it trained on");
    c[k] = rec["corpus"][k];
  }
  return c;
}
}  // namespace

json mergeStudyShards(const std::vector<std::string>& paths, const std::string& out) {
  const std::vector<json> docs =
      output::readShardSet(paths, "omn-audit/study@1",
                           {"/manifest/sha256", "/base_config/sha256", "/grid", "/confidence",
                            "/provenance/model_code_fingerprint", "/provenance/git_revision", "/provenance/libtorch"},
                           "study");
  // each run must be a cell of the grid, in the shard that runs it; its directory is rebased from
  // its shard's location to the merged document's
  const json& grid = docs[0]["grid"];
  const fs::path out_dir = fs::absolute(out).parent_path().lexically_normal();
  std::vector<json> runs;
  std::set<std::string> ids;
  json corpus;  // the first run's corpus content; every run's must equal it
  std::string corpus_from, without_runs;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i].contains("runs") || !docs[i]["runs"].is_array()) throw UsageError(paths[i] + ": /runs: expected an array");
    const auto shard = docs[i]["shard"]["index"].get<std::size_t>(), count = docs[i]["shard"]["count"].get<std::size_t>();
    const fs::path shard_dir = fs::absolute(paths[i]).parent_path();
    for (std::size_t k = 0; k < docs[i]["runs"].size(); ++k) {
      json r = docs[i]["runs"][k];
      const std::string where = paths[i] + ": /runs/" + std::to_string(k);
      try {
        const std::string id = r.at("id").get<std::string>();
        const bool in_grid = std::find(grid.at("arms").begin(), grid.at("arms").end(), r.at("arm")) != grid.at("arms").end() &&
                             std::find(grid.at("lrs").begin(), grid.at("lrs").end(), r.at("lr")) != grid.at("lrs").end() &&
                             std::find(grid.at("seeds").begin(), grid.at("seeds").end(), r.at("seed")) != grid.at("seeds").end();
        if (!in_grid) throw UsageError(where + ": run " + id + " (arm, lr, seed) is not a cell of /grid");
        if (r.at("index").get<std::size_t>() % count != shard)
          throw UsageError(where + ": run " + id + " is cell " + r["index"].dump() + ", which shard " + std::to_string(shard) + " of " +
                           std::to_string(count) + " does not run");
        if (!ids.insert(id).second) throw UsageError("merge: " + where + ": run " + id + " appears in two shards");
        const json content = corpusContent(shard_dir / r.at("dir").get<std::string>() / "train.json", r);
        if (content.is_null()) {
          without_runs = without_runs.empty() ? where : without_runs;
          runs.push_back(std::move(r));
          continue;
        }
        if (corpus.is_null()) corpus = content, corpus_from = where;
        for (auto it = content.begin(); it != content.end(); ++it)
          if (corpus[it.key()] != *it)
            throw UsageError("merge: " + where + ": run " + id + " trained on other data: its train.json /corpus/" + it.key() + " is " +
                             it->get<std::string>() + ", " + corpus_from + "'s " + corpus[it.key()].get<std::string>());
        r["dir"] = (shard_dir / r.at("dir").get<std::string>()).lexically_normal().lexically_relative(out_dir).string();
      } catch (const json::exception& e) {
        throw UsageError(where + ": not a study run record: " + e.what());
      }
      runs.push_back(std::move(r));
    }
  }
  if (!without_runs.empty())  // some runs' records are not here: the shards' corpus.json must be one file
    for (std::size_t i = 1; i < docs.size(); ++i)
      if (docs[i]["corpus"]["sha256"] != docs[0]["corpus"]["sha256"])
        throw UsageError("merge: " + paths[i] + ": /corpus/sha256 " + docs[i]["corpus"]["sha256"].get<std::string>() + " differs from " +
                         paths[0] + "'s " + docs[0]["corpus"]["sha256"].get<std::string>() + ", and the runs' train.json files that " +
                         "would show whether the data is the same are not beside the shards (" + without_runs + ")");
  const auto cells = docs[0]["grid"].at("cells").get<std::size_t>();
  if (runs.size() != cells)
    throw UsageError("merge: the shards hold " + std::to_string(runs.size()) + " runs, the study has " + std::to_string(cells));
  json base = docs[0];
  base["runs_dir"] = (fs::absolute(paths[0]).parent_path() / docs[0].value("runs_dir", "")).lexically_normal().lexically_relative(out_dir).string();
  for (const char* k : {"runs", "arms", "comparison"}) base.erase(k);
  base["shard"] = nullptr;
  base["merged_from"] = output::mergedFrom(paths, docs);
  base["provenance"]["finished_utc"] = output::utcNow();
  return assembleStudy(base, runs);
}

}  // namespace omn::study
