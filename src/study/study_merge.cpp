#include "omn/study/study_merge.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "omn/documents/document.h"
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
// Empty where the run's directory is not beside its shard (shard documents gathered without their
// runs): the merge then compares the shards' corpus.json digests instead, as before.
struct CorpusContent {
  std::string train_sha256, heldout_sha256, tokenizer_sha256;
};
std::optional<CorpusContent> corpusContent(const fs::path& train_json, const documents::StudyRun& run) {
  std::error_code ec;
  if (!fs::is_regular_file(train_json, ec)) return std::nullopt;
  const std::string text = io::readTextFile(train_json.string(), "run record");
  io::requireSha256(train_json.string(), run.train_json_sha256, io::sha256Bytes(text.data(), text.size()));
  const json rec = io::parseJson(text, train_json.string());
  documents::checkDocument(rec, train_json.string(), {documents::DocumentKind::train});
  const documents::TrainCorpus c = documents::TrainDocument::fromJson(rec, train_json.string()).corpus;
  return CorpusContent{c.train_sha256, c.heldout_sha256, c.tokenizer_sha256};
}

// Every run's corpus content must equal the first run's (`first`, found at `first_where`).
void requireSameCorpus(const CorpusContent& c, const std::string& where, const documents::StudyRun& run, std::optional<CorpusContent>& first,
                       std::string& first_where) {
  if (!first) {
    first = c;
    first_where = where;
    return;
  }
  for (const auto& [key, mine, theirs] : {std::tuple{"train_sha256", c.train_sha256, first->train_sha256},
                                          std::tuple{"heldout_sha256", c.heldout_sha256, first->heldout_sha256},
                                          std::tuple{"tokenizer_sha256", c.tokenizer_sha256, first->tokenizer_sha256}})
    if (mine != theirs)
      throw UsageError("merge: " + where + ": run " + run.id + " trained on other data: its train.json /corpus/" + key + " is " + mine + ", " +
                       first_where + "'s " + theirs);
}

// A run of shard `shard` of `count`: a cell of the grid, one that shard runs, in no other shard.
void requireCellOfShard(const documents::StudyRun& r, const documents::StudyGrid& grid, const documents::ShardOf& shard,
                        const std::string& where, std::set<std::string>& ids) {
  const bool in_grid = std::find(grid.arms.begin(), grid.arms.end(), r.arm) != grid.arms.end() &&
                       std::find(grid.lrs.begin(), grid.lrs.end(), r.lr) != grid.lrs.end() &&
                       std::find(grid.seeds.begin(), grid.seeds.end(), r.seed) != grid.seeds.end();
  if (!in_grid) throw UsageError(where + ": run " + r.id + " (arm, lr, seed) is not a cell of /grid");
  if (shard.count < 1 || r.index % shard.count != shard.index)
    throw UsageError(where + ": run " + r.id + " is cell " + std::to_string(r.index) + ", which shard " + std::to_string(shard.index) +
                     " of " + std::to_string(shard.count) + " does not run");
  if (!ids.insert(r.id).second) throw UsageError("merge: " + where + ": run " + r.id + " appears in two shards");
}

}  // namespace

documents::StudyDocument mergeStudyShards(const std::vector<std::string>& paths, const std::string& out) {
  const std::vector<json> docs =
      output::readShardSet(paths, "omn-audit/study@1",
                           {"/manifest/sha256", "/base_config/sha256", "/grid", "/confidence",
                            "/provenance/model_code_fingerprint", "/provenance/git_revision", "/provenance/libtorch"},
                           "study");
  std::vector<documents::StudyDocument> shards;
  for (std::size_t i = 0; i < docs.size(); ++i) shards.push_back(documents::StudyDocument::fromJson(docs[i], paths[i]));
  // each run must be a cell of the grid, in the shard that runs it; its directory is rebased from
  // its shard's location to the merged document's
  const fs::path out_dir = fs::absolute(out).parent_path().lexically_normal();
  std::vector<documents::StudyRun> runs;
  std::set<std::string> ids;
  std::optional<CorpusContent> corpus;  // the first run's corpus content; every run's must equal it
  std::string corpus_from, without_runs;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const fs::path shard_dir = fs::absolute(paths[i]).parent_path();
    for (std::size_t k = 0; k < shards[i].runs.size(); ++k) {
      documents::StudyRun r = shards[i].runs[k];
      const std::string where = paths[i] + ": /runs/" + std::to_string(k);
      requireCellOfShard(r, shards[0].grid, *shards[i].shard, where, ids);
      const std::optional<CorpusContent> content = corpusContent(shard_dir / r.dir / "train.json", r);
      if (content) {
        requireSameCorpus(*content, where, r, corpus, corpus_from);
        r.dir = (shard_dir / r.dir).lexically_normal().lexically_relative(out_dir).string();
      } else if (without_runs.empty()) {
        without_runs = where;
      }
      runs.push_back(std::move(r));
    }
  }
  if (!without_runs.empty())  // some runs' records are not here: the shards' corpus.json must be one file
    for (std::size_t i = 1; i < shards.size(); ++i)
      if (shards[i].corpus.sha256 != shards[0].corpus.sha256)
        throw UsageError("merge: " + paths[i] + ": /corpus/sha256 " + shards[i].corpus.sha256 + " differs from " + paths[0] + "'s " +
                         shards[0].corpus.sha256 + ", and the runs' train.json files that would show whether the data is the same are " +
                         "not beside the shards (" + without_runs + ")");
  if (static_cast<std::int64_t>(runs.size()) != shards[0].grid.cells)
    throw UsageError("merge: the shards hold " + std::to_string(runs.size()) + " runs, the study has " + std::to_string(shards[0].grid.cells));
  documents::StudyDocument base = shards[0];
  base.runs_dir = (fs::absolute(paths[0]).parent_path() / shards[0].runs_dir).lexically_normal().lexically_relative(out_dir).string();
  base.shard.reset();
  base.merged_from = output::mergedFrom(paths, docs);
  base.provenance.finished_utc = output::utcNow();
  return assembleStudy(base, runs);
}

}  // namespace omn::study
