#include "omn/study/study_run.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "omn/data/corpus.h"
#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/io/journal.h"
#include "omn/io/json_document.h"
#include "omn/io/json_reader.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"
#include "omn/output/provenance.h"
#include "omn/study/analysis.h"
#include "omn/train/run_records.h"
#include "omn/train/trainer.h"

namespace omn::study {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A finished run's log, read as a resume reads it (train::parseLog: ordered steps, typed fields).
std::vector<json> runLog(const std::string& path) { return train::parseLog(path, io::readTextFile(path, "training log"), ""); }

// The study's outputs (JSON, CSV, journal), checked before anything trains: distinct, not inside
// the runs directory, not an input, replaced only with --force or by the --resume of their own
// interrupted study (its journal present).
struct StudyOutputs {
  std::string json, csv, journal;
};
StudyOutputs checkStudyOutputs(const StudyManifest& m, const StudyOptions& o, const data::CorpusFiles& corpus) {
  StudyOutputs w;
  w.json = o.output_json.empty() ? m.output_json : o.output_json;
  w.csv = !o.output_csv.empty() ? o.output_csv : o.output_json.empty() ? m.output_csv : "";
  w.journal = w.json + ".journal";
  output::checkJournaledOutput(w.json, "the study JSON");
  output::checkDistinctOutputs({{"the study JSON", w.json}, {"the study CSV", w.csv}, {"the journal", w.journal}});
  // --resume of an interrupted study may replace its own outputs (written just before the journal
  // was removed); anything else needs --force
  const bool own_outputs = o.resume && ::access(w.journal.c_str(), F_OK) == 0;
  // every file the study reads, reached through the manifest and the configs: no output may be one
  std::vector<std::string> inputs = data::inputFiles(corpus);
  inputs.push_back(m.path);
  inputs.push_back(m.base_path);
  for (const Cell& c : m.cells)
    if (c.config.contains("init") && c.config["init"].contains("from")) inputs.push_back(c.config["init"]["from"].get<std::string>());
  std::error_code ec;
  fs::path runs_dir = fs::weakly_canonical(fs::absolute(m.runs_dir).lexically_normal(), ec);
  if (ec) throw UsageError("/output/runs " + m.runs_dir + ": " + ec.message());
  if (runs_dir.filename().empty()) runs_dir = runs_dir.parent_path();  // "runs/": no empty last element
  for (const auto& p : {w.json, w.csv}) {
    if (p.empty()) continue;
    // the runs directory is the study's alone: a document inside it (a run's train.json) is refused
    const fs::path canon = fs::weakly_canonical(fs::absolute(p), ec);
    if (ec) throw UsageError("output " + p + ": " + ec.message());
    const auto [end, it] = std::mismatch(runs_dir.begin(), runs_dir.end(), canon.begin(), canon.end());
    if (end == runs_dir.end())
      throw UsageError("output " + p + " lies in the study's runs directory " + m.runs_dir + " (/output/runs), whose files are the runs'");
    // a study's outputs may name directories still to be made (they are the study's own)
    if (!fs::path(p).parent_path().empty()) fs::create_directories(fs::path(p).parent_path(), ec);
    output::checkOutputPath(p, o.force || own_outputs, inputs);
    if (o.resume || o.force)  // what a killed writer of this output left (OUTPUT.tmp.PID of a dead PID)
      for (const auto& f : output::removeStaleTemporaries(fs::path(p).parent_path().empty() ? "." : fs::path(p).parent_path().string(),
                                                          fs::path(p).filename().string()))
        spdlog::info("removed the stale temporary {}", f);
  }
  return w;
}

// Cell `k` of `n` trained (or its finished run reused on --resume) in its run directory, which must
// hold nothing or a run of this cell's config, corpus and model code (else --force); its study record.
json trainCell(const Cell& c, const StudyManifest& m, const StudyOptions& o, const data::CorpusFiles& corpus, const std::string& out_json,
               std::size_t k, std::size_t n) {
  const std::string dir = (fs::path(m.runs_dir) / c.id).string();
  const std::string train_json = (fs::path(dir) / "train.json").string();
  const std::string config_path = (fs::path(m.runs_dir) / (c.id + ".config.json")).string();
  const std::string config_text = output::dumpJson(c.config);
  const std::string config_sha = io::sha256Bytes(config_text.data(), config_text.size());
  json previous;
  if (fs::exists(train_json)) previous = output::readJsonFile(train_json, "training record");
  auto field = [&](const char* a, const char* b) {
    return previous.is_object() && previous.contains(a) && previous[a].is_object() ? previous[a].value(b, "") : std::string();
  };
  const std::string status = previous.is_object() ? previous.value("status", "") : "";
  // the run in the directory is this cell's only when its config, corpus and model code are ours
  // (a run killed before its first train.json: when its config.json holds our bytes)
  const std::string run_config = (fs::path(dir) / "config.json").string();
  const bool holds_run = previous.is_object() || fs::exists(run_config) || fs::exists((fs::path(dir) / "log.jsonl").string());
  const bool ours = previous.is_object()
                        ? field("config", "sha256") == config_sha && field("corpus", "sha256") == corpus.json_sha256 &&
                              field("provenance", "model_code_fingerprint") == modelCodeFingerprint()
                        : fs::exists(run_config) && data::readTextFile(run_config, "run config") == config_text;
  if (holds_run && !ours && !o.force)
    throw UsageError("run directory " + dir + " holds a run of another config, corpus or model code: pass --force to replace it " +
                     "(or give the study its own /output/runs)");
  if (holds_run && ours && !o.resume && !o.force)
    throw UsageError("run directory " + dir + " already holds this cell's run: pass --resume to continue the study or --force to start over");
  if (!fs::exists(config_path) || data::readTextFile(config_path, "cell config") != config_text)
    output::writeFileAtomic(config_path, config_text);
  train::TrainOptions t;
  t.config = train::loadTrainConfig(config_path);
  t.out_dir = dir;
  t.progress = o.progress;
  t.threads = o.threads;
  t.stop = o.stop;
  t.resume_command = "rerun the study with --resume";
  json doc;
  if (o.resume && ours && (status == "finished" || status == "diverged")) {
    spdlog::info("[{}/{}] {}: {} before the interruption, reused", k, n, c.id, status);
    doc = previous;
  } else {
    if (o.resume && ours && status == "running") t.resume = true;
    else if (holds_run) t.force = true;  // allowed above: --force, or a run of ours that never wrote train.json
    spdlog::info("[{}/{}] {}: training{}", k, n, c.id, t.resume ? " (resumed from its last checkpoint)" : "");
    doc = train::runTraining(t);
  }
  return runRecord(c, doc, runLog((fs::path(dir) / "log.jsonl").string()), io::relativeTo(dir, out_json), io::sha256File(train_json));
}

}  // namespace

json runStudy(const StudyManifest& m, const StudyOptions& o) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  const data::CorpusFiles corpus = data::openCorpus(m.corpus);
  const StudyOutputs w = checkStudyOutputs(m, o, corpus);
  const std::string& out = w.json;
  const std::string& csv = w.csv;
  const std::string& jpath = w.journal;
  const std::vector<Cell> cells = shardCells(m.cells, o.shard_index, o.shard_count);
  const json shard = o.shard_count > 1 ? json{{"index", o.shard_index}, {"count", o.shard_count}} : json(nullptr);

  // --- the journal: a fresh one, or the one of an interrupted study when its inputs match ----------
  const json header = {{"schema", "omn-audit/journal@1"},  {"kind", "study"},
                       {"manifest_sha256", m.sha256},       {"base_sha256", m.base_sha256},
                       {"corpus_sha256", corpus.json_sha256}, {"model_code_fingerprint", modelCodeFingerprint()},
                       {"shard", shard}};
  if (o.resume && ::access(jpath.c_str(), F_OK) != 0) spdlog::info("--resume: no journal at {}: starting the study", jpath);
  io::ResumedJournal resumed = io::resumeJournal(
      jpath, header, o.resume, "study", {"kind", "manifest_sha256", "base_sha256", "corpus_sha256", "model_code_fingerprint", "shard"});
  io::Journal& journal = resumed.journal;
  std::map<std::string, json>& done = resumed.done;
  if (resumed.resumed) spdlog::info("resuming: {} finished run(s) in {}", done.size(), jpath);

  std::error_code ec;
  fs::create_directories(m.runs_dir, ec);
  if (ec) throw UsageError("/output/runs " + m.runs_dir + ": cannot create it: " + ec.message());
  std::vector<json> runs;
  std::size_t k = 0;
  for (const Cell& c : cells) {
    ++k;
    const std::string train_json = (fs::path(m.runs_dir) / c.id / "train.json").string();
    if (done.count(c.id)) {  // journaled: its train.json must be the one that was recorded
      const json& rec = done[c.id];
      if (!fs::exists(train_json) || io::sha256File(train_json) != rec.at("train_json_sha256").get<std::string>())
        throw IntegrityError("run " + c.id + ": " + train_json + " is missing or changed since it was journaled in " + jpath +
                             "; remove the journal (and the run) to train it again");
      runs.push_back(rec);
      continue;
    }
    const json rec = trainCell(c, m, o, corpus, out, k, cells.size());
    journal.append(rec);
    runs.push_back(rec);
  }

  prov.inputs = {{"manifest", m.path, m.sha256, true}, {"base_config", m.base_path, m.base_sha256, false},
                 {"corpus", corpus.json_path, corpus.json_sha256, false}};
  prov.finished_utc = output::utcNow();
  json base = {{"schema", "omn-audit/study@1"},
               {"provenance", output::provenance(prov)},
               {"manifest", {{"path", m.path}, {"sha256", m.sha256}, {"verbatim", m.verbatim}, {"description", m.description}}},
               {"base_config", {{"path", m.base_path}, {"sha256", m.base_sha256}}},
               {"corpus", {{"path", corpus.json_path}, {"sha256", corpus.json_sha256},
                           {"heldout_unigram_cross_entropy", corpus.heldout_unigram_cross_entropy}}},
               {"runs_dir", io::relativeTo(m.runs_dir, out)},
               {"grid", gridJson(m)},
               {"confidence", m.confidence},
               {"shard", shard}};
  const json doc = assembleStudy(base, runs);
  output::writeFileAtomic(out, output::dumpJson(doc));
  if (!csv.empty()) output::writeFileAtomic(csv, studyCsv(doc));
  ::unlink(jpath.c_str());
  return doc;
}

}  // namespace omn::study
