#include "omn/train/resume.h"

#include <filesystem>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/train/run_records.h"

namespace omn::train {

namespace fs = std::filesystem;

namespace {
// The file a record's digest pins, hashed now: IntegrityError naming both when they differ.
void requireDigest(const std::string& path, const std::optional<std::string>& digest, const char* field, const std::string& record) {
  if (!digest)
    throw IntegrityError("--resume: " + record + " records no " + field + " for " + path +
                         " (a record written before omn-audit 2026-12-02): it cannot be verified; start over with --force");
  if (!fs::is_regular_file(path)) throw IntegrityError("--resume: " + path + ", which " + record + " records, is missing");
  io::requireSha256(path, *digest, io::sha256File(path));
}

// The log as the checkpoint `last` left it: its first log_bytes bytes, which the record's digest
// pins (what came after the checkpoint, a torn tail included, is cut).
std::string verifiedLog(const RunPaths& paths, const documents::RunCheckpoint& last, const std::string& rec) {
  if (!last.log_sha256 || !last.log_bytes)
    throw IntegrityError("--resume: " + rec + " records no log digest for the checkpoint of step " + std::to_string(last.step) +
                         " (a record written before omn-audit 2026-12-02): it cannot be verified; start over with --force");
  const auto bytes = static_cast<std::uint64_t>(*last.log_bytes);
  std::string log = fs::exists(paths.log) ? io::readTextFile(paths.log, "training log") : std::string();
  if (log.size() < bytes)
    throw IntegrityError("--resume: " + paths.log + " is not the log the checkpoint of step " + std::to_string(last.step) +
                         " recorded: its first " + std::to_string(bytes) + " bytes are not all there (" + std::to_string(log.size()) +
                         " bytes)");
  log.resize(static_cast<std::size_t>(bytes));
  if (io::sha256Bytes(log.data(), log.size()) != *last.log_sha256)
    throw IntegrityError("--resume: " + paths.log + " is not the log the checkpoint of step " + std::to_string(last.step) +
                         " recorded: its first " + std::to_string(bytes) + " bytes do not hash to " + *last.log_sha256);
  return log;
}

// The record's run is the one this config and corpus start: IntegrityError (or FormatError for a
// /steps that is not the config's) otherwise.
void requireSameRun(const documents::TrainDocument& doc, const TrainConfig& c, const data::CorpusFiles& corpus, const RunPaths& paths) {
  const std::string& rec = paths.train_json;
  if (doc.status != "running") throw UsageError("--resume: the run in " + paths.dir + " is " + doc.status + ", not running");
  if (doc.config.sha256 != c.sha256)
    throw IntegrityError("--resume: " + c.path + " (sha256 " + c.sha256 + ") is not the config this run started with (" + doc.config.sha256 + ")");
  if (doc.corpus.sha256 != corpus.json_sha256)
    throw IntegrityError("--resume: the corpus " + corpus.json_path + " is not the one this run started with");
  if (doc.steps != c.steps)
    throw FormatError(rec + ": /steps: expected the config's " + std::to_string(c.steps) + ", got " + std::to_string(doc.steps));
}
}  // namespace

std::optional<documents::TrainDocument> finishedRun(const RunPaths& paths, const TrainConfig& c) {
  if (!fs::is_regular_file(paths.train_json)) return std::nullopt;
  RunRecord rr = checkRunRecord(io::readJsonFile(paths.train_json, "training record"), paths.train_json);
  if (rr.doc.status != "finished" || rr.doc.config.sha256 != c.sha256) return std::nullopt;
  requireDigest(paths.final_checkpoint, rr.doc.final_checkpoint ? std::optional<std::string>(rr.doc.final_checkpoint->sha256) : std::nullopt,
                "sha256", paths.train_json);
  return std::move(rr.doc);
}

ResumePoint verifyResume(const RunPaths& paths, const TrainConfig& c, const data::CorpusFiles& corpus) {
  const std::string& rec = paths.train_json;
  if (!fs::exists(rec)) throw UsageError("--resume: " + rec + " does not exist (nothing to resume)");
  const RunRecord rr = checkRunRecord(io::readJsonFile(rec, "training record"), rec);  // schema, ranges, checkpoint names
  const documents::TrainDocument& doc = rr.doc;
  requireSameRun(doc, c, corpus, paths);
  ResumePoint rp;
  rp.segments = recordedSegments(doc, rec, c.batch_size * c.seq_len);
  rp.checkpoints = doc.checkpoints;
  rp.has_checkpoint = rr.has_checkpoint;
  rp.step = rr.last_step;
  if (rp.has_checkpoint) {
    const documents::RunCheckpoint& last = rp.checkpoints.back();
    requireDigest(paths.stepCheckpoint(rp.step), last.sha256, "sha256", rec);
    requireDigest(paths.stepOptimizer(rp.step), last.optimizer_sha256, "optimizer_sha256", rec);
    rp.log = verifiedLog(paths, last, rec);
  } else if (c.init_from) {  // no checkpoint yet: the run starts again from the file it started from
    for (const documents::ProvenanceInput& in : doc.provenance.inputs)
      if (in.role == "init" && in.sha256) io::requireSha256(*c.init_from, *in.sha256, io::sha256File(*c.init_from));
  }
  return rp;
}

}  // namespace omn::train
