#include "omn/train/run_setup.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include <unistd.h>

#include "omn/errors.h"
#include "omn/model/threads.h"
#include "omn/output/json_file.h"
#include "omn/output/table.h"

namespace omn::train {
namespace fs = std::filesystem;

namespace {

// The files a run writes that exist now: its record, log, config copy, final weights, checkpoints.
std::vector<std::string> runFiles(const RunPaths& p) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& f : {p.log, p.final_checkpoint, p.train_json, p.config})
    if (fs::exists(f, ec)) files.push_back(f);
  if (fs::is_directory(p.checkpoints, ec))
    for (const auto& e : fs::directory_iterator(p.checkpoints, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("step-", 0) == 0 && e.path().extension() == ".pt") files.push_back(e.path().string());
    }
  return files;
}

// The output directory: made and locked; an old run resumed (verified) or refused without --force.
void openRunDirectory(RunSetup& s, const TrainOptions& o) {
  const TrainConfig& c = o.config;
  const RunPaths& paths = s.paths;
  std::error_code ec;
  if (fs::exists(o.out_dir, ec) && !fs::is_directory(o.out_dir, ec)) throw UsageError("--out " + o.out_dir + ": not a directory");
  fs::create_directories(paths.checkpoints, ec);
  if (ec) throw UsageError("--out " + o.out_dir + ": cannot create it: " + ec.message());
  s.lock = std::make_unique<RunLock>(paths.lock);
  s.had_run = fs::exists(paths.log) || fs::exists(paths.train_json) || fs::exists(paths.config);
  if (o.resume) {
    s.resume = verifyResume(paths, c, s.corpus);  // every byte it reads checked before it is used
  } else if (s.had_run && !o.force) {
    throw UsageError("--out " + o.out_dir + " already holds a run: pass --resume to continue it or --force to start over");
  }
  s.from_checkpoint = o.resume && s.resume.has_checkpoint;
  s.start = s.from_checkpoint ? s.resume.step : 0;
}

// No output may be an input, whatever --force says: the config, the corpus's files, /init/from.
void checkOutputsAreNotInputs(const RunSetup& s, const TrainOptions& o) {
  const TrainConfig& c = o.config;
  const RunPaths& paths = s.paths;
  std::error_code ec;
  std::vector<std::string> inputs = data::inputFiles(s.corpus);
  inputs.push_back(c.path);
  const std::vector<std::string> existing = runFiles(paths);  // listed once: the run's files as they stand
  if (c.init_from) {
    inputs.push_back(*c.init_from);
    // a fresh start over an old run deletes its files: /init/from must not be one of them
    for (const std::string& f : existing)
      if (!o.resume && fs::equivalent(f, *c.init_from, ec))
        throw UsageError("training config " + c.path + ": /init/from " + *c.init_from + " is " + f +
                         ", a file of the run in --out " + o.out_dir + " that starting over deletes: copy it elsewhere first");
  }
  for (const std::string& f : existing)  // (the run's config copy may be the --config given: it is not rewritten)
    if (f != paths.config) output::checkOutputPath(f, true, inputs);
  if (o.dump_grads.empty()) return;
  output::checkOutputPath(o.dump_grads, o.force, inputs);
  // nor one of the files the run writes, existing or still to come: its record, log, config copy,
  // final weights, or anything in its checkpoints directory
  const fs::path g = fs::weakly_canonical(fs::absolute(o.dump_grads), ec);
  for (const auto& f : {paths.log, paths.final_checkpoint, paths.train_json, paths.config, paths.lock})
    if (g == fs::weakly_canonical(fs::absolute(f), ec))
      throw UsageError("--dump-grads " + o.dump_grads + " is " + f + ", a file of the run in --out " + o.out_dir);
  if (g.parent_path() == fs::weakly_canonical(fs::absolute(paths.checkpoints), ec))
    throw UsageError("--dump-grads " + o.dump_grads + " lies in the run's checkpoints directory " + paths.checkpoints);
}

// The two token streams and the held-out rows; the token ids against the vocabulary.
void readStreams(RunSetup& s, const TrainConfig& c) {
  const data::CorpusFiles& corpus = s.corpus;
  eval::TokenSetSpec ts;
  ts.path = corpus.train_path;
  ts.format = io::parseChoice(eval::kTokenFormats, corpus.token_format, corpus.json_path + ": /token_format");
  s.train_set = eval::readTokenSet(ts);
  ts.path = corpus.heldout_path;
  ts.eos = corpus.eos_id;
  const eval::TokenSet heldout_set = eval::readTokenSet(ts);
  s.eval_rows = eval::buildRows(heldout_set, eval::RowForm::Packed, c.seq_len);
  if (s.eval_rows.empty()) throw UsageError("the held-out stream is shorter than one row of /seq_len " + std::to_string(c.seq_len));
  if (s.train_set.tokens.size() < static_cast<std::size_t>(c.seq_len))
    throw UsageError("training config " + c.path + ": /seq_len " + std::to_string(c.seq_len) + ": the training stream holds only " +
                     std::to_string(s.train_set.tokens.size()) + " tokens");
  s.eval_rows.resize(std::min<std::size_t>(s.eval_rows.size(), static_cast<std::size_t>(c.eval_rows)));
  // the token ids the streams hold must be rows of the embedding: a corpus.json whose vocab_size is
  // below them is refused here, not by an index error inside the first step
  for (const eval::TokenSet* set : {static_cast<const eval::TokenSet*>(&s.train_set), &heldout_set}) {
    const auto top = std::max_element(set->tokens.begin(), set->tokens.end());
    if (top != set->tokens.end() && static_cast<std::int64_t>(*top) >= corpus.vocab_size)
      throw FormatError(corpus.json_path + ": /tokenizer/vocab_size " + std::to_string(corpus.vocab_size) + " is below token id " +
                        std::to_string(*top) + " in " + (set == &s.train_set ? corpus.train_path : corpus.heldout_path));
  }
}

// Sizes before any allocation: the checkpoint writer has no ZIP64 (weights and the two AdamW
// moments must each stay under 4 GiB), and the logits of one batch must fit in memory.
void checkSizes(RunSetup& s, const TrainConfig& c) {
  const std::int64_t vocab = s.corpus.vocab_size;
  s.parameter_count = parameterCount(c.model, vocab);
  if (s.parameter_count * 4 * 3 >= 4294967295.0)
    throw UsageError("training config " + c.path + ": /model: " + output::wholeNumber(s.parameter_count) + " parameters (vocabulary " +
                     std::to_string(vocab) + ") make checkpoints past 4 GiB, which this writer cannot write (no ZIP64)");
  const double logits_bytes = 4.0 * static_cast<double>(c.batch_size) * static_cast<double>(c.seq_len) * static_cast<double>(vocab);
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && logits_bytes * 3 > memory)  // the logits, their softmax and their gradient
    throw UsageError("training config " + c.path + ": /batch_size x /seq_len x the vocabulary (" + std::to_string(c.batch_size) + " x " +
                     std::to_string(c.seq_len) + " x " + std::to_string(vocab) + ") needs " +
                     output::wholeNumber(3 * logits_bytes / (1 << 20)) + " MiB for the logits alone; this machine has " +
                     output::wholeNumber(memory / (1 << 20)) + " MiB");
}

}  // namespace

RunSetup prepareRun(const TrainOptions& o) {
  const TrainConfig& c = o.config;
  RunSetup s(o.out_dir);
  if (c.device.rfind("cuda", 0) == 0 && !at::hasCUDA())
    throw UsageError("training config " + c.path + ": /device " + c.device + ": this libtorch has no CUDA or no GPU is visible");
  s.device = at::Device(c.device);
  s.corpus = data::openCorpus(c.corpus);
  openRunDirectory(s, o);
  checkOutputsAreNotInputs(s, o);
  s.threads = model::useThreads(o.threads);  // process-wide: the run's own setting
  readStreams(s, c);
  checkSizes(s, c);
  return s;
}

TrainableModel startingModel(const RunSetup& s, const TrainConfig& c) {
  const std::int64_t vocab = s.corpus.vocab_size;
  TrainableModel m = s.from_checkpoint ? loadModel(s.paths.stepCheckpoint(s.start), c, vocab, s.device)
                     : c.init_from     ? loadModel(*c.init_from, c, vocab, s.device)
                                       : initModel(c, vocab, c.seed, s.device);
  if (static_cast<double>(m.count()) != s.parameter_count)  // the count the size check used is the model's
    throw std::logic_error("parameterCount " + output::wholeNumber(s.parameter_count) + " != the model's " + std::to_string(m.count()));
  return m;
}

void clearOldRun(const RunSetup& s, const TrainOptions& o) {
  std::error_code ec;
  if (!o.resume && s.had_run)
    for (const std::string& f : runFiles(s.paths))
      if (!fs::equivalent(f, o.config.path, ec)) fs::remove(f, ec);
  if (o.resume || o.force)
    for (const auto& d : {s.paths.dir, s.paths.checkpoints})
      for (const auto& f : output::removeStaleTemporaries(d)) spdlog::info("removed the stale temporary {}", f);
}

}  // namespace omn::train
