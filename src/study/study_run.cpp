#include "omn/study/study_run.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "omn/data/corpus.h"
#include "omn/documents/document.h"
#include "omn/documents/read_block.h"
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
std::vector<documents::TrainLogRecord> runLog(const std::string& path) {
  return documents::TrainLogRecord::fromJson(train::parseLog(path, io::readTextFile(path, "training log"), ""), path);
}

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

// What a cell's run directory holds: its train.json (read leniently: a run of another study may
// hold anything), and whether that run is this cell's -- its config, corpus and model code ours (a
// run killed before its first train.json: when its config.json holds our bytes).
struct CellDirectory {
  std::string dir, train_json;
  json previous;  // the train.json there, or null
  bool holds_run = false, ours = false;
  std::string status() const { return previous.is_object() ? previous.value("status", "") : ""; }
};
CellDirectory cellDirectory(const Cell& c, const StudyManifest& m, const data::CorpusFiles& corpus, const std::string& config_text) {
  CellDirectory d;
  d.dir = (fs::path(m.runs_dir) / c.id).string();
  d.train_json = (fs::path(d.dir) / "train.json").string();
  const std::string config_sha = io::sha256Bytes(config_text.data(), config_text.size());
  if (fs::exists(d.train_json)) d.previous = output::readJsonFile(d.train_json, "training record");
  auto field = [&](const char* a, const char* b) {
    return d.previous.is_object() && d.previous.contains(a) && d.previous[a].is_object() ? d.previous[a].value(b, "") : std::string();
  };
  const std::string run_config = (fs::path(d.dir) / "config.json").string();
  d.holds_run = d.previous.is_object() || fs::exists(run_config) || fs::exists((fs::path(d.dir) / "log.jsonl").string());
  d.ours = d.previous.is_object() ? field("config", "sha256") == config_sha && field("corpus", "sha256") == corpus.json_sha256 &&
                                        field("provenance", "model_code_fingerprint") == modelCodeFingerprint()
                                  : fs::exists(run_config) && data::readTextFile(run_config, "run config") == config_text;
  return d;
}

// A finished run of the cell, its study record made from its run directory (its train.json, read as
// a training record, and its log).
documents::StudyRun finishedRun(const Cell& c, const CellDirectory& d, const std::string& out_json) {
  return runRecord(c, train::checkRunRecord(d.previous, d.train_json).doc, runLog((fs::path(d.dir) / "log.jsonl").string()),
                   io::relativeTo(d.dir, out_json), io::sha256File(d.train_json));
}

// Cell `k` of `n` trained (or its finished run reused on --resume) in its run directory, which must
// hold nothing or a run of this cell's config, corpus and model code (else --force); its study record.
documents::StudyRun trainCell(const Cell& c, const StudyManifest& m, const StudyOptions& o, const data::CorpusFiles& corpus,
                              const std::string& out_json, std::size_t k, std::size_t n) {
  const std::string config_path = (fs::path(m.runs_dir) / (c.id + ".config.json")).string();
  const std::string config_text = output::dumpJson(c.config);
  const CellDirectory d = cellDirectory(c, m, corpus, config_text);
  if (d.holds_run && !d.ours && !o.force)
    throw UsageError("run directory " + d.dir + " holds a run of another config, corpus or model code: pass --force to replace it " +
                     "(or give the study its own /output/runs)");
  if (d.holds_run && d.ours && !o.resume && !o.force)
    throw UsageError("run directory " + d.dir + " already holds this cell's run: pass --resume to continue the study or --force to start over");
  if (!fs::exists(config_path) || data::readTextFile(config_path, "cell config") != config_text)
    output::writeFileAtomic(config_path, config_text);
  train::TrainOptions t;
  t.config = train::loadTrainConfig(config_path);
  t.out_dir = d.dir;
  t.progress = o.progress;
  t.threads = o.threads;
  t.stop = o.stop;
  t.resume_command = "rerun the study with --resume";
  const std::string status = d.status();
  if (o.resume && d.ours && (status == "finished" || status == "diverged")) {
    spdlog::info("[{}/{}] {}: {} before the interruption, reused", k, n, c.id, status);
    return finishedRun(c, d, out_json);
  }
  if (o.resume && d.ours && status == "running") t.resume = true;
  else if (d.holds_run) t.force = true;  // allowed above: --force, or a run of ours that never wrote train.json
  spdlog::info("[{}/{}] {}: training{}", k, n, c.id, t.resume ? " (its run resumed)" : "");
  const documents::TrainDocument doc = train::runTraining(t);
  return runRecord(c, doc, runLog((fs::path(d.dir) / "log.jsonl").string()), io::relativeTo(d.dir, out_json), io::sha256File(d.train_json));
}

// A journaled run reused: its record must be the one its run directory gives now -- the run this
// cell's (config, corpus, model code), its train.json the one journaled, every member of the record
// (learning rate, losses, trajectory) what the cell and that train.json say. A record edited and
// re-signed (its checksum made anew) is refused naming the journal's line and the member.
documents::StudyRun journaledRun(const Cell& c, const StudyManifest& m, const data::CorpusFiles& corpus, const std::string& out_json,
                                 const json& journaled, const std::string& where, const std::string& jpath) {
  const std::string again = "; remove the journal (and the run) to train it again";
  documents::StudyRun rec = documents::readBlock<documents::StudyRun>(journaled, where, "");
  // what the struct reads as absent (a member missing from the record) the schema refuses
  documents::checkPart(journaled, documents::DocumentKind::study, "/properties/runs/items", where, "");
  const CellDirectory d = cellDirectory(c, m, corpus, output::dumpJson(c.config));
  if (!d.previous.is_object() || io::sha256File(d.train_json) != rec.train_json_sha256)
    throw IntegrityError("run " + c.id + ": " + d.train_json + " is missing or changed since it was journaled in " + jpath + again);
  if (!d.ours)
    throw IntegrityError("run " + c.id + ": " + d.train_json + " is a run of another config, corpus or model code than this cell's" + again);
  documents::StudyRun made = finishedRun(c, d, out_json);
  json made_json = json::parse(json(made).dump());  // as a journal line holds it (a NaN: null)
  // the run's directory as the study that journaled it named it, relative to its output: another
  // spelling of the same output (through a symlinked directory) names the same directory otherwise
  const json* dir = journaled.contains("dir") && journaled["dir"].is_string() ? &journaled["dir"] : nullptr;
  if (dir && *dir != made_json["dir"]) {
    std::error_code ec;
    if (fs::equivalent(io::resolveAgainst(dir->get<std::string>(), out_json), d.dir, ec)) made_json["dir"] = *dir;
  }
  if (made_json != journaled) {
    const json op = json::diff(journaled, made_json).at(0);
    json::json_pointer at(op.value("path", ""));
    // an array of another length: the diff names its end ("/-") or its last element; the place is
    // the first element one side lacks
    if (const std::string kind = op.value("op", ""); !at.empty() && (kind == "add" || kind == "remove")) {
      const json::json_pointer parent = at.parent_pointer();
      if (journaled.contains(parent) && made_json.contains(parent) && journaled.at(parent).is_array() && made_json.at(parent).is_array())
        at = parent / std::min(journaled.at(parent).size(), made_json.at(parent).size());
    }
    auto said = [&at](const json& j) { return j.contains(at) ? j.at(at).dump() : std::string("nothing"); };
    throw IntegrityError(where + " record " + c.id + ": " + at.to_string() + ": the journal says " + said(journaled) +
                         ", the cell and its train.json give " + said(made_json) + again);
  }
  return made;
}

// The study's journal: a fresh one, or the one of an interrupted study when its inputs match.
io::ResumedJournal openStudyJournal(const StudyManifest& m, const StudyOptions& o, const data::CorpusFiles& corpus, const std::string& jpath,
                                    const std::optional<documents::ShardOf>& shard) {
  const json header = {{"schema", "omn-audit/journal@1"},  {"kind", "study"},
                       {"manifest_sha256", m.sha256},       {"base_sha256", m.base_sha256},
                       {"corpus_sha256", corpus.json_sha256}, {"model_code_fingerprint", modelCodeFingerprint()},
                       {"shard", shard ? json(*shard) : json(nullptr)}};
  if (o.resume && ::access(jpath.c_str(), F_OK) != 0) spdlog::info("--resume: no journal at {}: starting the study", jpath);
  io::ResumedJournal resumed = io::resumeJournal(
      jpath, header, o.resume, "study", {"kind", "manifest_sha256", "base_sha256", "corpus_sha256", "model_code_fingerprint", "shard"});
  if (resumed.resumed) spdlog::info("resuming: {} finished run(s) in {}", resumed.done.size(), jpath);
  return resumed;
}

// Every cell of this shard trained, or taken from the journal (its train.json must be the one that
// was recorded), each new run journaled as it finishes.
std::vector<documents::StudyRun> studyRuns(const StudyManifest& m, const StudyOptions& o, const data::CorpusFiles& corpus, const std::string& out,
                                           const std::vector<Cell>& cells, io::ResumedJournal& resumed, const std::string& jpath) {
  std::vector<documents::StudyRun> runs;
  std::size_t k = 0;
  for (const Cell& c : cells) {
    ++k;
    if (const auto done = resumed.done.find(c.id); done != resumed.done.end()) {
      runs.push_back(journaledRun(c, m, corpus, out, done->second, resumed.where(c.id), jpath));
      continue;
    }
    documents::StudyRun rec = trainCell(c, m, o, corpus, out, k, cells.size());
    resumed.journal.append(json(rec));
    runs.push_back(std::move(rec));
  }
  return runs;
}

// The document's fixed part: provenance, the manifest, base config and corpus, the grid, the shard.
documents::StudyDocument studyBase(const StudyManifest& m, const data::CorpusFiles& corpus, const std::string& out,
                                   const std::optional<documents::ShardOf>& shard, output::ProvenanceInfo prov) {
  prov.inputs = {{"manifest", m.path, m.sha256, true}, {"base_config", m.base_path, m.base_sha256, false},
                 {"corpus", corpus.json_path, corpus.json_sha256, false}};
  prov.finished_utc = output::utcNow();
  documents::StudyDocument d;
  d.provenance = output::provenanceRecord(prov);
  d.manifest = {m.path, m.sha256, m.verbatim, m.description};
  d.base_config = {m.base_path, m.base_sha256};
  d.corpus = {corpus.json_path, corpus.json_sha256, corpus.heldout_unigram_cross_entropy};
  d.runs_dir = io::relativeTo(m.runs_dir, out);
  d.grid = gridRecord(m);
  d.confidence = m.confidence;
  d.shard = shard;
  return d;
}

}  // namespace

documents::StudyDocument runStudy(const StudyManifest& m, const StudyOptions& o) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  const data::CorpusFiles corpus = data::openCorpus(m.corpus);
  const StudyOutputs w = checkStudyOutputs(m, o, corpus);
  const std::vector<Cell> cells = shardCells(m.cells, o.shard_index, o.shard_count);
  const std::optional<documents::ShardOf> shard =
      o.shard_count > 1 ? std::optional<documents::ShardOf>(documents::ShardOf{o.shard_index, o.shard_count}) : std::nullopt;
  io::ResumedJournal resumed = openStudyJournal(m, o, corpus, w.journal, shard);
  std::error_code ec;
  fs::create_directories(m.runs_dir, ec);
  if (ec) throw UsageError("/output/runs " + m.runs_dir + ": cannot create it: " + ec.message());
  std::vector<documents::StudyRun> runs = studyRuns(m, o, corpus, w.json, cells, resumed, w.journal);
  const documents::StudyDocument doc = assembleStudy(studyBase(m, corpus, w.json, shard, prov), std::move(runs));
  output::writeFileAtomic(w.json, output::dumpJson(doc.toJson()));
  if (!w.csv.empty()) output::writeFileAtomic(w.csv, studyCsv(doc));
  ::unlink(w.journal.c_str());
  return doc;
}

}  // namespace omn::study
