#include "omn/train/resume.h"

#include <filesystem>

#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/train/run_records.h"

namespace omn::train {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// The file a record's digest pins, hashed now: IntegrityError naming both when they differ.
void requireDigest(const std::string& path, const json& entry, const char* field, const std::string& record) {
  if (!entry.contains(field))
    throw IntegrityError("--resume: " + record + " records no " + field + " for " + path +
                         " (a record written before omn-audit 2026-12-02): it cannot be verified; start over with --force");
  if (!fs::is_regular_file(path)) throw IntegrityError("--resume: " + path + ", which " + record + " records, is missing");
  io::requireSha256(path, entry[field].get<std::string>(), io::sha256File(path));
}
}  // namespace

std::optional<json> finishedRun(const RunPaths& paths, const TrainConfig& c) {
  if (!fs::is_regular_file(paths.train_json)) return std::nullopt;
  const RunRecord rr = checkRunRecord(io::readJsonFile(paths.train_json, "training record"), paths.train_json);
  if (rr.doc["status"] != "finished" || rr.doc["config"]["sha256"] != c.sha256) return std::nullopt;
  requireDigest(paths.final_checkpoint, rr.doc["final_checkpoint"], "sha256", paths.train_json);
  return rr.doc;
}

ResumePoint verifyResume(const RunPaths& paths, const TrainConfig& c, const data::CorpusFiles& corpus) {
  const std::string& rec = paths.train_json;
  if (!fs::exists(rec)) throw UsageError("--resume: " + rec + " does not exist (nothing to resume)");
  const RunRecord rr = checkRunRecord(io::readJsonFile(rec, "training record"), rec);  // schema, ranges, checkpoint names
  const json& doc = rr.doc;
  if (doc["status"] != "running")
    throw UsageError("--resume: the run in " + paths.dir + " is " + doc["status"].get<std::string>() + ", not running");
  const std::string old_config = doc["config"]["sha256"];
  if (old_config != c.sha256)
    throw IntegrityError("--resume: " + c.path + " (sha256 " + c.sha256 + ") is not the config this run started with (" + old_config + ")");
  if (doc["corpus"]["sha256"] != corpus.json_sha256)
    throw IntegrityError("--resume: the corpus " + corpus.json_path + " is not the one this run started with");
  if (doc["steps"] != c.steps)
    throw FormatError(rec + ": /steps: expected the config's " + std::to_string(c.steps) + ", got " + doc["steps"].dump());

  ResumePoint rp;
  rp.segments = recordedSegments(doc, rec, c.batch_size * c.seq_len);
  rp.checkpoints = rr.checkpoints;
  rp.has_checkpoint = rr.has_checkpoint;
  rp.step = rr.last_step;
  if (rp.has_checkpoint) {
    const json& last = rp.checkpoints.back();
    requireDigest(paths.stepCheckpoint(rp.step), last, "sha256", rec);
    requireDigest(paths.stepOptimizer(rp.step), last, "optimizer_sha256", rec);
    // the log as the checkpoint left it: its first log_bytes bytes, which the record's digest pins
    if (!last.contains("log_sha256") || !last.contains("log_bytes"))
      throw IntegrityError("--resume: " + rec + " records no log digest for the checkpoint of step " + std::to_string(rp.step) +
                           " (a record written before omn-audit 2026-12-02): it cannot be verified; start over with --force");
    const std::uint64_t bytes = last["log_bytes"].get<std::uint64_t>();
    rp.log = fs::exists(paths.log) ? io::readTextFile(paths.log, "training log") : std::string();
    if (rp.log.size() < bytes)
      throw IntegrityError("--resume: " + paths.log + " is not the log the checkpoint of step " + std::to_string(rp.step) +
                           " recorded: its first " + std::to_string(bytes) + " bytes are not all there (" +
                           std::to_string(rp.log.size()) + " bytes)");
    rp.log.resize(static_cast<std::size_t>(bytes));  // what came after the checkpoint (a torn tail included) is cut
    if (io::sha256Bytes(rp.log.data(), rp.log.size()) != last["log_sha256"])
      throw IntegrityError("--resume: " + paths.log + " is not the log the checkpoint of step " + std::to_string(rp.step) +
                           " recorded: its first " + std::to_string(bytes) + " bytes do not hash to " +
                           last["log_sha256"].get<std::string>());
  } else if (c.init_from) {  // no checkpoint yet: the run starts again from the file it started from
    for (const json& in : doc["provenance"].value("inputs", json::array()))
      if (in.is_object() && in.value("role", "") == "init" && in.contains("sha256") && in["sha256"].is_string())
        io::requireSha256(*c.init_from, in["sha256"].get<std::string>(), io::sha256File(*c.init_from));
  }
  return rp;
}

}  // namespace omn::train
