#include "omn/train/trainer.h"

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <regex>
#include <thread>

#include <unistd.h>

#include "omn/data/corpus.h"
#include "omn/errors.h"
#include "omn/eval/evaluator.h"
#include "omn/eval/token_set.h"
#include "omn/io/sha256.h"
#include "omn/model/attention.h"
#include "omn/model/threads.h"
#include "omn/output/json_file.h"
#include "omn/output/progress.h"
#include "omn/output/provenance.h"
#include "omn/output/table.h"
#include "omn/train/batches.h"
#include "omn/train/resume.h"
#include "omn/train/run_files.h"

namespace omn::train {
namespace fs = std::filesystem;
using nlohmann::json;
using output::finiteOrNull;

namespace {

// Mean next-token cross-entropy over the scored positions (t + 1 < T, same document): the
// positions eval scores, so the training loss and the held-out loss measure the same thing.
at::Tensor trainingLoss(const model::Transformer& m, const at::Tensor& tok, const at::Tensor& doc) {
  const model::DocumentLayout layout = model::documentLayout(doc);
  const at::Tensor logits = m.logits(m.run(m.embed(tok), 0, layout, model::AttentionPath::Masked));  // [B, T, V]
  const std::int64_t B = tok.size(0), T = tok.size(1), V = logits.size(-1);
  at::Tensor target = at::full({B, T}, -100, at::kLong);
  const at::Tensor same = doc.narrow(1, 1, T - 1) == doc.narrow(1, 0, T - 1);
  const at::Tensor next = tok.cpu().narrow(1, 1, T - 1);
  target.narrow(1, 0, T - 1).copy_(at::where(same, next, at::full_like(next, -100)));
  return at::cross_entropy_loss(logits.view({B * T, V}), target.view({B * T}).to(logits.device()), {}, at::Reduction::Mean, -100);
}

json gainStats(const at::Tensor& g) {
  const at::Tensor d = g.detach().to(at::kDouble);
  return {{"mean", d.mean().item<double>()}, {"std", d.std(/*unbiased=*/false).item<double>()},
          {"min", d.min().item<double>()}, {"max", d.max().item<double>()}};
}

// The held-out loss and the per-layer health of the model at one step.
json evaluate(const eval::Evaluator& ev, const TrainableModel& m) {
  at::NoGradGuard no_grad;
  std::vector<model::LayerMechanism> mech;
  eval::ScoreOptions so;
  so.mech = &mech;
  const eval::SequenceScores sc = ev.score(so);
  const double loss = sc.totalNll() / static_cast<double>(std::max<std::int64_t>(1, sc.totalTokens()));
  json layers = json::array();
  const auto& w = m.model->weights();
  for (std::size_t l = 0; l < mech.size(); ++l) {
    json x = {{"layer", l},
              {"max_attention_logit", finiteOrNull(mech[l].max_logit)},
              {"attention_entropy", finiteOrNull(mech[l].mean_entropy)},
              {"input_kurtosis", finiteOrNull(mech[l].input_kurtosis)}};
    if (m.config.qk_norm) {
      x["q_gain"] = gainStats(w.layers[l].q_norm);
      x["k_gain"] = gainStats(w.layers[l].k_norm);
    }
    layers.push_back(std::move(x));
  }
  return {{"heldout_loss", finiteOrNull(loss)}, {"heldout_tokens", sc.totalTokens()}, {"layers", layers}};
}

double gradNorm(const std::vector<Parameter>& params) {
  double s = 0;
  for (const auto& p : params) s += p.value.grad().to(at::kDouble).pow(2).sum().item<double>();
  return std::sqrt(s);
}

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

// The run's own files; never `keep` (the config given on the command line may be the run's copy).
void removeRunFiles(const RunPaths& p, const std::string& keep) {
  std::error_code ec;
  for (const std::string& f : runFiles(p))
    if (!fs::equivalent(f, keep, ec)) fs::remove(f, ec);
}

}  // namespace

json runTraining(const TrainOptions& o) {
  const TrainConfig& c = o.config;
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  const RunPaths paths(o.out_dir);

  // --- everything checked before the first expensive step -------------------------------------
  if (c.device.rfind("cuda", 0) == 0 && !at::hasCUDA())
    throw UsageError("training config " + c.path + ": /device " + c.device + ": this libtorch has no CUDA or no GPU is visible");
  const at::Device device(c.device);
  const data::CorpusFiles corpus = data::openCorpus(c.corpus);
  std::error_code ec;
  if (fs::exists(o.out_dir, ec) && !fs::is_directory(o.out_dir, ec)) throw UsageError("--out " + o.out_dir + ": not a directory");
  fs::create_directories(paths.checkpoints, ec);
  if (ec) throw UsageError("--out " + o.out_dir + ": cannot create it: " + ec.message());
  const RunLock lock(paths.lock);
  const bool has_run = fs::exists(paths.log) || fs::exists(paths.train_json) || fs::exists(paths.config);
  ResumePoint resume;
  if (o.resume) {
    resume = verifyResume(paths, c, corpus);  // every byte it reads checked before it is used
  } else if (has_run && !o.force) {
    throw UsageError("--out " + o.out_dir + " already holds a run: pass --resume to continue it or --force to start over");
  }
  // no output may be an input, whatever --force says: the config, the corpus's files, /init/from
  std::vector<std::string> inputs = data::inputFiles(corpus);
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
  if (!o.dump_grads.empty()) {
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

  const int threads = model::useThreads(o.threads);  // process-wide: the run's own setting

  // --- data -------------------------------------------------------------------------------------
  eval::TokenSetSpec ts;
  ts.path = corpus.train_path;
  ts.format = io::parseChoice(eval::kTokenFormats, corpus.token_format, corpus.json_path + ": /token_format");
  const eval::TokenSet train_set = eval::readTokenSet(ts);
  ts.path = corpus.heldout_path;
  ts.eos = corpus.eos_id;
  const eval::TokenSet heldout_set = eval::readTokenSet(ts);
  std::vector<eval::Row> rows = eval::buildRows(heldout_set, eval::RowForm::Packed, c.seq_len);
  if (rows.empty()) throw UsageError("the held-out stream is shorter than one row of /seq_len " + std::to_string(c.seq_len));
  if (train_set.tokens.size() < static_cast<std::size_t>(c.seq_len))
    throw UsageError("training config " + c.path + ": /seq_len " + std::to_string(c.seq_len) + ": the training stream holds only " +
                     std::to_string(train_set.tokens.size()) + " tokens");
  rows.resize(std::min<std::size_t>(rows.size(), static_cast<std::size_t>(c.eval_rows)));

  // the token ids the streams hold must be rows of the embedding: a corpus.json whose vocab_size is
  // below them is refused here, not by an index error inside the first step
  for (const auto* set : {&train_set, &heldout_set}) {
    const auto top = std::max_element(set->tokens.begin(), set->tokens.end());
    if (top != set->tokens.end() && static_cast<std::int64_t>(*top) >= corpus.vocab_size)
      throw FormatError(corpus.json_path + ": /tokenizer/vocab_size " + std::to_string(corpus.vocab_size) + " is below token id " +
                        std::to_string(*top) + " in " + (set == &train_set ? corpus.train_path : corpus.heldout_path));
  }
  // sizes before any allocation: the checkpoint writer has no ZIP64 (weights and the two AdamW
  // moments must each stay under 4 GiB), and the logits of one batch must fit in memory
  const double n_params = parameterCount(c.model, corpus.vocab_size);
  if (n_params * 4 * 3 >= 4294967295.0)
    throw UsageError("training config " + c.path + ": /model: " + output::wholeNumber(n_params) + " parameters (vocabulary " +
                     std::to_string(corpus.vocab_size) + ") make checkpoints past 4 GiB, which this writer cannot write (no ZIP64)");
  const double logits_bytes = 4.0 * static_cast<double>(c.batch_size) * static_cast<double>(c.seq_len) * static_cast<double>(corpus.vocab_size);
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (memory > 0 && logits_bytes * 3 > memory)  // the logits, their softmax and their gradient
    throw UsageError("training config " + c.path + ": /batch_size x /seq_len x the vocabulary (" + std::to_string(c.batch_size) + " x " +
                     std::to_string(c.seq_len) + " x " + std::to_string(corpus.vocab_size) + ") needs " +
                     output::wholeNumber(3 * logits_bytes / (1 << 20)) + " MiB for the logits alone; this machine has " +
                     output::wholeNumber(memory / (1 << 20)) + " MiB");

  // --- the model and its optimizers ---------------------------------------------------------------
  // a resume continues from its last checkpoint (step 0's included); no checkpoint yet: from the start
  const bool from_checkpoint = o.resume && resume.has_checkpoint;
  const std::int64_t start = from_checkpoint ? resume.step : 0;
  TrainableModel m = from_checkpoint   ? loadModel(paths.stepCheckpoint(start), c, corpus.vocab_size, device)
                     : c.init_from ? loadModel(*c.init_from, c, corpus.vocab_size, device)
                                   : initModel(c, corpus.vocab_size, c.seed, device);
  if (static_cast<double>(m.count()) != n_params)  // the count the size check used is the model's
    throw std::logic_error("parameterCount " + output::wholeNumber(n_params) + " != the model's " + std::to_string(m.count()));
  // the weights are loaded (init.from may lie in the old run), now the old run's files can go
  if (!o.resume && has_run) removeRunFiles(paths, c.path);
  // what a killed writer left (NAME.tmp.PID): the run lock is held, so nothing of this run is mid-write
  if (o.resume || o.force)
    for (const auto& d : {paths.dir, paths.checkpoints})
      for (const auto& f : output::removeStaleTemporaries(d)) spdlog::info("removed the stale temporary {}", f);
  std::vector<at::Tensor> adamw_params, muon_params;
  std::vector<std::string> adamw_names, muon_names;
  std::vector<double> adamw_decay, adamw_lr_scale;
  const bool use_muon = c.optimizer.kind == OptimizerKind::MuonAdamW;
  for (const auto& p : m.params) {
    if (use_muon && p.hidden_matrix) {
      muon_params.push_back(p.value);
      muon_names.push_back(p.name);
    } else {
      adamw_params.push_back(p.value);
      adamw_names.push_back(p.name);
      adamw_decay.push_back(p.qk_gain ? c.optimizer.qk_gain_weight_decay : p.matrix ? c.optimizer.weight_decay : 0.0);
      adamw_lr_scale.push_back(p.qk_gain ? c.optimizer.qk_gain_lr_scale : 1.0);
    }
  }
  AdamW adamw(c.optimizer.beta1, c.optimizer.beta2, c.optimizer.eps);
  Muon muon(c.optimizer.muon_momentum, c.optimizer.ns_steps, c.optimizer.muon_weight_decay);
  const OptimizerState opt_state{&adamw, use_muon ? &muon : nullptr};
  // at step 0 the optimizer has no state yet (the file, verified by its digest, holds none)
  if (from_checkpoint && start > 0) readOptimizer(paths.stepOptimizer(start), opt_state, adamw_params, adamw_names, muon_params, muon_names, start);

  // --- the record every checkpoint carries ------------------------------------------------------
  const json arch = {{"n_layers", m.config.n_layers}, {"d_model", m.config.d_model}, {"n_heads", m.config.n_heads},
                     {"n_kv_heads", m.config.n_kv_heads}, {"head_dim", m.config.head_dim},
                     {"ffn_hidden", m.config.ffn_hidden}, {"vocab_size", m.config.vocab_size},
                     {"norm_eps", m.config.norm_eps}, {"qk_norm_eps", m.config.qk_norm_eps},
                     {"rope_theta", m.config.rope_theta}, {"rope_style", "rotate_half"},
                     {"qk_norm_cast", "multiply_then_cast"}, {"norm_cast", "multiply_then_cast"}, {"tied_output", false}};
  json groups = {{"adamw", adamw_names}, {"muon", muon_names}};
  const json corpus_json = {{"path", corpus.json_path}, {"sha256", corpus.json_sha256},
                            {"tokenizer_sha256", corpus.tokenizer_sha256}, {"train_sha256", corpus.train_sha256},
                            {"heldout_sha256", corpus.heldout_sha256},
                            {"heldout_unigram_cross_entropy", corpus.heldout_unigram_cross_entropy}};
  const json record = {{"architecture", arch}, {"qk_norm", m.config.qk_norm}, {"config", c.raw},
                       {"config_sha256", c.sha256}, {"optimizer_groups", groups}, {"corpus", corpus_json},
                       {"tool_version", output::toolVersion()}, {"git_revision", output::gitRevision()}};
  if (!o.resume && !fs::equivalent(c.path, paths.config, ec)) output::writeFileAtomic(paths.config, data::readTextFile(c.path, "training config"));

  // --- state rebuilt from the log (a resume continues exactly where the checkpoint stood) -------
  std::string log_text = from_checkpoint ? resume.log : std::string();  // the log's bytes, for each checkpoint's digest
  std::vector<json> log = from_checkpoint ? restoreLog(paths.log, log_text) : std::vector<json>{};
  if (o.resume && !from_checkpoint) output::writeFileAtomic(paths.log, "");  // nothing verified to keep: the run starts over
  // L0 is the held-out loss at initialisation (step 0's evaluation); the first batch's loss is kept beside it
  double initial_loss = NAN, initial_train_loss = NAN, best_heldout = INFINITY;
  std::vector<std::optional<std::int64_t>> reached(c.loss_thresholds.size());
  json evals = json::array(), checkpoints = o.resume ? resume.checkpoints : json::array();
  auto noteEval = [&](std::int64_t step, const json& e) {
    evals.push_back({{"step", step}, {"heldout_loss", e["heldout_loss"]}});
    if (e["heldout_loss"].is_number()) {
      const double l = e["heldout_loss"].get<double>();
      best_heldout = std::min(best_heldout, l);
      for (std::size_t i = 0; i < reached.size(); ++i)
        if (!reached[i] && l <= c.loss_thresholds[i]) reached[i] = step;
    }
  };
  for (const auto& r : log) {
    if (r["step"] == 1 && r.contains("train_loss") && r["train_loss"].is_number()) initial_train_loss = r["train_loss"].get<double>();
    if (r["step"] == 0 && r.contains("eval") && r["eval"]["heldout_loss"].is_number()) initial_loss = r["eval"]["heldout_loss"].get<double>();
    if (r.contains("eval")) noteEval(r["step"].get<std::int64_t>(), r["eval"]);
  }
  json last_eval;
  for (auto it = log.rbegin(); it != log.rend() && last_eval.is_null(); ++it)
    if (it->contains("eval")) last_eval = (*it)["eval"];

  const std::int64_t tokens_per_step = c.batch_size * c.seq_len;
  const eval::Evaluator ev(*m.model, rows, model::chooseAttention(model::AttentionRequest::Auto, device, at::kFloat, false), 8, device);
  auto trainJson = [&](const std::string& status, std::int64_t step, double last_loss, const std::string& reason) {
    prov.finished_utc = output::utcNow();
    prov.device = device.str();
    prov.inputs = {{"config", c.path, c.sha256, false}, {"corpus", corpus.json_path, corpus.json_sha256, false},
                   {"train_tokens", corpus.train_path, corpus.train_sha256, true},
                   {"heldout_tokens", corpus.heldout_path, corpus.heldout_sha256, true},
                   {"tokenizer", corpus.tokenizer_path, corpus.tokenizer_sha256, true}};
    if (c.init_from) prov.inputs.push_back({"init", *c.init_from, io::sha256File(*c.init_from), false});
    json thr = json::array();
    for (std::size_t i = 0; i < reached.size(); ++i)
      thr.push_back({{"threshold", c.loss_thresholds[i]}, {"step", reached[i] ? json(*reached[i]) : json(nullptr)}});
    json doc = {{"schema", "omn-audit/train@1"},
                {"provenance", output::provenance(prov)},
                {"name", c.name},
                {"status", status},
                {"config", {{"path", c.path}, {"sha256", c.sha256}, {"values", c.raw}}},
                {"corpus", corpus_json},
                {"model", {{"config", model::toJson(m.config)}, {"parameters", m.count()}, {"qk_norm", m.config.qk_norm}}},
                {"optimizer", {{"kind", optimizerName(c.optimizer.kind)}, {"groups", groups}}},
                {"schedule", {{"warmup_steps", c.schedule.warmup_steps}, {"decay", decayName(c.schedule.decay)},
                              {"min_lr_ratio", c.schedule.min_lr_ratio}}},
                {"threads", threads},
                {"dtype", c.dtype},
                {"steps", c.steps},
                {"steps_done", step},
                {"tokens_seen", step * tokens_per_step},
                {"initial_loss", finiteOrNull(initial_loss)},
                {"initial_train_loss", finiteOrNull(initial_train_loss)},
                {"final_train_loss", finiteOrNull(last_loss)},
                {"final_heldout_loss", last_eval.is_null() ? json(nullptr) : last_eval["heldout_loss"]},
                {"best_heldout_loss", finiteOrNull(best_heldout)},
                {"heldout_unigram_cross_entropy", corpus.heldout_unigram_cross_entropy},
                {"diverged", status == "diverged"},
                {"divergence", reason.empty() ? json(nullptr) : json{{"step", step}, {"reason", reason}}},
                {"steps_to_threshold", thr},
                {"evals", evals},
                {"last_checkpoint_step", checkpoints.empty() ? json(nullptr) : checkpoints.back()["step"]},
                {"checkpoints", checkpoints},
                {"log", "log.jsonl"}};
    if (status == "finished") doc["final_checkpoint"] = {{"path", "final.pt"}, {"sha256", io::sha256File(paths.final_checkpoint)}};
    output::writeFileAtomic(paths.train_json, output::dumpJson(doc));
    return doc;
  };
  auto saveCheckpoint = [&](std::int64_t step, double loss) {
    const std::string sha = writeWeights(paths.stepCheckpoint(step), m, record, step, step * tokens_per_step, c.seed);
    const std::string optimizer_sha = writeOptimizer(paths.stepOptimizer(step), opt_state, adamw_names, muon_names, step);
    // the log as it stands now (every record up to this step): what a resume continues, verified
    checkpoints.push_back({{"step", step}, {"path", RunPaths::checkpointName(step)}, {"sha256", sha},
                           {"optimizer_sha256", optimizer_sha}, {"log_bytes", log_text.size()},
                           {"log_sha256", io::sha256Bytes(log_text.data(), log_text.size())}});
    trainJson("running", step, loss, "");
  };
  if (!from_checkpoint) {
    trainJson("running", 0, NAN, "");  // resumable from here on: killed before step 0's checkpoint, it starts over
    // step 0: the held-out loss at initialisation (L0) and the starting weights, in every run
    const json e0 = evaluate(ev, m);
    const json rec0 = {{"step", 0}, {"tokens_seen", 0}, {"eval", e0}};
    if (e0["heldout_loss"].is_number()) initial_loss = e0["heldout_loss"].get<double>();
    noteEval(0, e0);
    last_eval = e0;
    log_text += appendLog(paths.log, rec0);
    log.push_back(rec0);
    saveCheckpoint(0, NAN);
  }
  if (!std::isfinite(initial_loss)) {
    // no L0 (the starting weights' held-out loss is not finite, or a log written before step-0
    // evaluations): nothing to judge divergence against; a diverged start, not a finished run
    const std::string why = log.empty() || log.front()["step"] != 0
                                ? "the log has no step-0 evaluation (written before 2026-12-02): start over with --force"
                                : "the held-out loss at step 0 (L0) is not finite";
    if (log.empty() || log.front()["step"] != 0) throw UsageError("--resume: " + paths.log + ": " + why);
    spdlog::warn("train {}: diverged at step 0: {}", c.name, why);
    return trainJson("diverged", 0, NAN, why);
  }

  spdlog::info("train {}: {} parameters ({}), {} steps of {}x{} tokens, {} threads{}", c.name, m.count(),
               m.config.qk_norm ? "QK-norm on" : "QK-norm off", c.steps, c.batch_size, c.seq_len, threads,
               start > 0 ? ", resumed at step " + std::to_string(start) : "");
  output::ProgressBar bar("train", static_cast<std::uint64_t>(c.steps), o.progress, false, "steps");
  const auto t_start = std::chrono::steady_clock::now();
  auto t_interval = t_start;
  double last_loss = NAN, last_heldout = NAN, last_tokens_per_second = 0;
  std::string divergence;
  std::int64_t step = start;
  while (step < c.steps) {
    if (o.stop && o.stop()) {
      const std::int64_t from = checkpoints.empty() ? -1 : checkpoints.back()["step"].get<std::int64_t>();
      throw Interrupted("interrupted after step " + std::to_string(step) + " of " + std::to_string(c.steps) + "; " +
                        (from >= 0 ? "the run continues from its checkpoint of step " + std::to_string(from)
                                  : "no checkpoint yet: the run starts again from step 0") +
                        (o.resume_command.empty() ? ": rerun with --resume" : ": " + o.resume_command));
    }
    ++step;
    const BatchRows b = sampleBatch(train_set.tokens, corpus.eos_id, c.seed, step, c.batch_size, c.seq_len);
    const at::Tensor tok = at::tensor(b.tokens, at::kLong).view({c.batch_size, c.seq_len}).to(device);
    const at::Tensor doc = at::tensor(b.doc, at::kLong).view({c.batch_size, c.seq_len});
    const at::Tensor loss = trainingLoss(*m.model, tok, doc);
    loss.backward();
    last_loss = loss.item<double>();
    if (step == 1) initial_train_loss = last_loss;
    if (!o.dump_grads.empty() && step == start + 1) {
      std::vector<Parameter> grads = m.params;
      for (auto& g : grads) g.value = g.value.grad();
      std::vector<at::Tensor> keep;
      output::writeFileAtomic(o.dump_grads, io::torchCheckpointBytes(tensorRecords(grads, keep), {{"step", step}}));
    }
    const double gnorm = gradNorm(m.params);
    if (c.clip_grad_norm > 0 && gnorm > c.clip_grad_norm) {
      at::NoGradGuard ng;
      for (auto& p : m.params) p.value.mutable_grad().mul_(c.clip_grad_norm / (gnorm + 1e-6));
    }
    const double mult = lrMultiplier(c.schedule, step, c.steps);
    adamw.step(adamw_params, adamw_decay, adamw_lr_scale, c.optimizer.lr * mult);
    if (use_muon) muon.step(muon_params, c.optimizer.muon_lr * mult);
    for (auto& p : m.params) p.value.mutable_grad().zero_();

    // divergence rule 1 (docs/train.md): a non-finite training loss or gradient norm, at any step
    if (!std::isfinite(last_loss) || !std::isfinite(gnorm)) divergence = "non-finite training loss or gradient norm";
    const bool last = step == c.steps || !divergence.empty();
    if (step % c.log_every == 0 || step == 1 || last || step % c.eval_every == 0) {
      const auto now = std::chrono::steady_clock::now();
      const double secs = std::chrono::duration<double>(now - t_interval).count();
      const std::int64_t steps_in = step - (log.empty() ? start : log.back()["step"].get<std::int64_t>());
      t_interval = now;
      json rec = {{"step", step},
                  {"tokens_seen", step * tokens_per_step},
                  {"train_loss", finiteOrNull(last_loss)},
                  {"grad_norm", finiteOrNull(gnorm)},
                  {"lr", c.optimizer.lr * mult},
                  {"muon_lr", use_muon ? json(c.optimizer.muon_lr * mult) : json(nullptr)},
                  {"tokens_per_second", secs > 0 ? static_cast<double>(steps_in * tokens_per_step) / secs : 0.0},
                  {"batch_offsets", b.offsets}};
      if (step % c.eval_every == 0 || last) {
        last_eval = evaluate(ev, m);
        rec["eval"] = last_eval;
        noteEval(step, last_eval);
        // rule 2: after warm-up, a held-out loss that is non-finite or above L0 (the held-out loss at step 0)
        if (divergence.empty() && step > c.schedule.warmup_steps) {
          const json& h = last_eval["heldout_loss"];
          if (!h.is_number()) divergence = "non-finite held-out loss after warm-up";
          else if (h.get<double>() > initial_loss)
            divergence = "held-out loss " + output::fixed(h.get<double>(), 4) + " above L0 " + output::fixed(initial_loss, 4) +
                         " (the held-out loss at step 0) after warm-up";
        }
      }
      log_text += appendLog(paths.log, rec);
      log.push_back(rec);
      if (rec.contains("eval")) last_heldout = last_eval["heldout_loss"].is_number() ? last_eval["heldout_loss"].get<double>() : NAN;
      last_tokens_per_second = rec["tokens_per_second"].get<double>();
      // what nanoGPT prints and a researcher watches: the loss, the held-out loss at an evaluation,
      // the learning rate of the schedule and the throughput
      const std::string held = rec.contains("eval") ? "  held-out " + output::fixed(last_heldout, 4) : "";
      if (!o.progress)
        spdlog::info("step {}/{}  loss {}{}  lr {}  {} tok/s", step, c.steps, output::fixed(last_loss, 4), held,
                     output::significant(c.optimizer.lr * mult, 3), output::fixed(last_tokens_per_second, 0));
    }
    bar.update(static_cast<std::uint64_t>(step), "loss " + output::fixed(last_loss, 3) +
                                                     (std::isfinite(last_heldout) ? " · held-out " + output::fixed(last_heldout, 3) : "") +
                                                     " · lr " + output::significant(c.optimizer.lr * mult, 3) + " · " +
                                                     output::fixed(last_tokens_per_second, 0) + " tok/s");
    if (!divergence.empty()) break;
    if (c.checkpoint_every > 0 && step % c.checkpoint_every == 0 && step < c.steps) saveCheckpoint(step, last_loss);
  }
  bar.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  if (!divergence.empty()) {
    spdlog::warn("train {}: diverged at step {}: {}", c.name, step, divergence);
    json doc = trainJson("diverged", step, last_loss, divergence);
    return doc;
  }
  writeWeights(paths.final_checkpoint, m, record, step, step * tokens_per_step, c.seed);
  json doc = trainJson("finished", step, last_loss, "");
  doc["timing"] = {{"seconds", secs},
                   {"tokens_per_second", static_cast<double>((step - start) * tokens_per_step) / std::max(secs, 1e-9)}};
  output::writeFileAtomic(paths.train_json, output::dumpJson(doc));
  return doc;
}

}  // namespace omn::train
