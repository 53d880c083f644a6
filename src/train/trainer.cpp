#include "omn/train/trainer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "omn/errors.h"
#include "omn/io/choice.h"
#include "omn/io/sha256.h"
#include "omn/model/attention.h"
#include "omn/model/products.h"
#include "omn/output/json_file.h"
#include "omn/output/progress.h"
#include "omn/output/table.h"
#include "omn/train/training_loop.h"

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

// The corpus a run trains on, as train.json and every checkpoint's record name it.
documents::TrainCorpus trainCorpus(const data::CorpusFiles& corpus) {
  return {corpus.json_path,    corpus.json_sha256,   corpus.tokenizer_sha256,
          corpus.train_sha256, corpus.heldout_sha256, corpus.heldout_unigram_cross_entropy};
}

std::optional<double> finiteLoss(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

// The record every checkpoint carries: what the weights are and where they came from.
json checkpointRecord(const TrainableModel& m, const TrainConfig& c, const OptimizerGroups& g, const data::CorpusFiles& corpus) {
  const model::ModelConfig& a = m.config;
  const json arch = {{"n_layers", a.n_layers}, {"d_model", a.d_model}, {"n_heads", a.n_heads}, {"n_kv_heads", a.n_kv_heads},
                     {"head_dim", a.head_dim}, {"ffn_hidden", a.ffn_hidden}, {"vocab_size", a.vocab_size},
                     {"norm_eps", a.norm_eps}, {"qk_norm_eps", a.qk_norm_eps}, {"rope_theta", a.rope_theta},
                     {"rope_style", "rotate_half"}, {"qk_norm_cast", "multiply_then_cast"},
                     {"norm_cast", "multiply_then_cast"}, {"tied_output", false}};
  return {{"architecture", arch}, {"qk_norm", a.qk_norm}, {"config", c.raw}, {"config_sha256", c.sha256},
          {"optimizer_groups", g.toJson()}, {"corpus", trainCorpus(corpus)},
          {"tool_version", output::toolVersion()}, {"git_revision", output::gitRevision()}};
}

output::ProvenanceInfo startedNow() {
  output::ProvenanceInfo p;
  p.started_utc = output::utcNow();
  return p;
}

// This process's segment of the run, as it starts: where it continues from, and what it runs on,
// read from the provenance block every document carries (so the strings are provenance's own).
RunSegment openSegment(const output::ProvenanceInfo& prov, const RunSetup& s) {
  const documents::Provenance p = output::provenanceRecord(prov);
  RunSegment seg;
  seg.start_step = seg.end_step = s.start;
  seg.started_utc = prov.started_utc;
  seg.threads = s.threads;
  if (p.host) seg.cpu = p.host->cpu;
  if (p.libraries) seg.openblas = p.libraries->openblas;
  if (const char* core = std::getenv("OPENBLAS_CORETYPE")) seg.openblas_coretype = std::string(core);
  seg.bf16_products = std::string(io::choiceName(model::kBf16Products, model::bf16Products().bf16));
  seg.git_revision = p.git_revision;
  seg.model_code_fingerprint = p.model_code_fingerprint;
  return seg;
}

}  // namespace

Trainer::Trainer(const TrainOptions& o)
    : o_(o),
      c_(o.config),
      prov_(startedNow()),
      started_(std::chrono::steady_clock::now()),
      s_(prepareRun(o)),
      m_(startingModel(s_, c_)),
      optimizers_(m_.params, c_.optimizer),
      ev_(*m_.model, s_.eval_rows, model::chooseAttention(model::AttentionRequest::Auto, s_.device, at::kFloat, false), 8, s_.device),
      checkpoint_record_(checkpointRecord(m_, c_, optimizers_, s_.corpus)),
      tokens_per_step_(c_.batch_size * c_.seq_len),
      history_(c_.loss_thresholds),
      step_(s_.start),
      last_heldout_(std::numeric_limits<double>::quiet_NaN()) {
  clearOldRun(s_, o_);
  segments_ = s_.resume.segments;  // empty unless resumed: a fresh start or --force has no past
  segments_.push_back(openSegment(prov_, s_));
  // at step 0 the optimizer has no state yet (the file, verified by its digest, holds none)
  if (s_.from_checkpoint && s_.start > 0) optimizers_.restore(s_.paths.stepOptimizer(s_.start), s_.start);
  std::error_code ec;
  if (!o_.resume && !fs::equivalent(c_.path, s_.paths.config, ec))
    output::writeFileAtomic(s_.paths.config, data::readTextFile(c_.path, "training config"));
  // a resume continues exactly where the checkpoint stood: the log as it was then, the record's checkpoints
  if (s_.from_checkpoint)
    history_.restore(restoreLog(s_.paths.log, s_.resume.log), s_.resume.log, s_.resume.checkpoints);
  else if (o_.resume)
    output::writeFileAtomic(s_.paths.log, "");  // nothing verified to keep: the run starts over
}

BatchRows Trainer::nextBatch() const {
  return sampleBatch(s_.train_set.tokens, s_.corpus.eos_id, c_.seed, step_, c_.batch_size, c_.seq_len);
}

double Trainer::forwardBackward(const BatchRows& b) {
  const at::Tensor tok = at::tensor(b.tokens, at::kLong).view({c_.batch_size, c_.seq_len}).to(s_.device);
  const at::Tensor doc = at::tensor(b.doc, at::kLong).view({c_.batch_size, c_.seq_len});
  const at::Tensor loss = trainingLoss(*m_.model, tok, doc);
  loss.backward();
  return loss.item<double>();
}

void Trainer::dumpGradients() const {
  std::vector<Parameter> grads = m_.params;
  for (auto& g : grads) g.value = g.value.grad();
  std::vector<at::Tensor> keep;
  output::writeFileAtomic(o_.dump_grads, io::torchCheckpointBytes(tensorRecords(grads, keep), {{"step", step_}}));
}

double Trainer::clipGradients() {
  std::vector<at::Tensor> grads;
  grads.reserve(m_.params.size());
  for (const auto& p : m_.params) grads.push_back(p.value.grad());  // the same storage: clipped in place
  return clipGradNorm(grads, c_.clip_grad_norm);
}

void Trainer::zeroGradients() {
  for (auto& p : m_.params) p.value.mutable_grad().zero_();
}

Trainer::StepResult Trainer::trainStep() {
  ++step_;
  StepResult r;
  r.batch = nextBatch();
  r.loss = forwardBackward(r.batch);
  if (!o_.dump_grads.empty() && step_ == s_.start + 1) dumpGradients();
  r.grad_norm = clipGradients();
  r.lr_multiplier = lrMultiplier(c_.schedule, step_, c_.steps);
  optimizers_.step(r.lr_multiplier);
  zeroGradients();
  return r;
}

void Trainer::record(const StepResult& r, const std::optional<Evaluation>& evaluation) {
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - last_record_time_).count();
  const std::int64_t steps_in = step_ - history_.lastLoggedStep().value_or(s_.start);
  last_record_time_ = now;
  const double lr = c_.optimizer.lr * r.lr_multiplier;
  last_tokens_per_second_ = secs > 0 ? static_cast<double>(steps_in * tokens_per_step_) / secs : 0.0;
  documents::TrainLogRecord rec;
  rec.step = step_;
  rec.tokens_seen = step_ * tokens_per_step_;
  rec.trained = true;
  rec.train_loss = finiteLoss(r.loss);
  rec.grad_norm = finiteLoss(r.grad_norm);
  rec.lr = lr;
  if (optimizers_.usesMuon()) rec.muon_lr = c_.optimizer.muon_lr * r.lr_multiplier;
  rec.tokens_per_second = last_tokens_per_second_;
  rec.batch_offsets = r.batch.offsets;
  if (evaluation) {
    rec.eval = *evaluation;
    last_heldout_ = evaluation->heldout_loss.value_or(std::numeric_limits<double>::quiet_NaN());
  }
  history_.logged(rec, appendLog(s_.paths.log, rec));
  // what nanoGPT prints and a researcher watches: the loss, the held-out loss at an evaluation,
  // the learning rate of the schedule and the throughput
  const std::string held = evaluation ? "  held-out " + output::fixed(last_heldout_, 4) : "";
  if (!o_.progress)
    spdlog::info("step {}/{}  loss {}{}  lr {}  {} tok/s", step_, c_.steps, output::fixed(r.loss, 4), held,
                 output::significant(lr, 3), output::fixed(last_tokens_per_second_, 0));
}

void Trainer::checkpoint(double last_loss) {
  const RunPaths& p = s_.paths;
  const std::string sha = writeWeights(p.stepCheckpoint(step_), m_, checkpoint_record_, step_, step_ * tokens_per_step_, c_.seed);
  const std::string optimizer_sha = optimizers_.save(p.stepOptimizer(step_), step_);
  // the log as it stands now (every record up to this step): what a resume continues, verified
  const std::string& log = history_.logText();
  history_.checkpointed({step_, RunPaths::checkpointName(step_), sha, optimizer_sha, static_cast<std::int64_t>(log.size()),
                         io::sha256Bytes(log.data(), log.size())});
  writeRecord("running", last_loss, "", "checkpoint");
}

void Trainer::evaluateStart() {
  writeRecord("running", NAN, "", "started");  // resumable from here on: killed before step 0's checkpoint, it starts over
  documents::TrainLogRecord rec0;  // step 0: its evaluation only
  rec0.tokens_seen = 0;
  rec0.eval = evaluateHeldout(ev_, m_);
  history_.logged(rec0, appendLog(s_.paths.log, rec0));
  checkpoint(NAN);
}

void Trainer::interrupted(double last_loss) {
  try {  // the steps since the last checkpoint were spent: the record says so (a resume trains them again)
    writeRecord("running", last_loss, "", "interrupted");
  } catch (const std::exception& e) {
    spdlog::warn("train {}: stopped, but train.json could not record it: {}", c_.name, e.what());
  }
  const auto& cps = history_.checkpoints();
  throw Interrupted("interrupted after step " + std::to_string(step_) + " of " + std::to_string(c_.steps) + "; " +
                    (!cps.empty() ? "the run continues from its checkpoint of step " + std::to_string(cps.back().step)
                                  : "no checkpoint yet: the run starts again from step 0") +
                    (o_.resume_command.empty() ? ": rerun with --resume" : ": " + o_.resume_command));
}

// What the run is: its config, corpus, model, optimizer, schedule, threads and dtype (the same at
// every write of train.json).
documents::TrainDocument Trainer::whatRuns() const {
  documents::TrainDocument d;
  d.name = c_.name;
  d.config = {c_.path, c_.sha256, c_.raw};
  d.corpus = trainCorpus(s_.corpus);
  d.model = {model::toJson(m_.config), m_.count(), m_.config.qk_norm};
  d.optimizer = {optimizerName(c_.optimizer.kind), optimizers_.toJson()};
  d.schedule = {c_.schedule.warmup_steps, decayName(c_.schedule.decay), c_.schedule.min_lr_ratio};
  d.threads = s_.threads;
  d.dtype = c_.dtype;
  d.steps = c_.steps;
  d.heldout_unigram_cross_entropy = s_.corpus.heldout_unigram_cross_entropy;
  d.log = "log.jsonl";
  return d;
}

documents::TrainDocument Trainer::runRecord(const std::string& status, double last_loss, const std::string& divergence) const {
  documents::TrainDocument d = whatRuns();
  d.provenance = output::provenanceRecord(prov_);
  d.status = status;
  d.steps_done = step_;
  d.tokens_seen = step_ * tokens_per_step_;
  d.initial_loss = finiteLoss(history_.initialLoss());
  d.has_initial_train_loss = true;
  d.initial_train_loss = finiteLoss(history_.initialTrainLoss());
  d.final_train_loss = finiteLoss(last_loss);
  if (const auto& last_eval = history_.lastEval()) d.final_heldout_loss = last_eval->heldout_loss;
  d.best_heldout_loss = finiteLoss(history_.bestHeldout());
  d.diverged = status == "diverged";
  if (!divergence.empty()) d.divergence = documents::Divergence{step_, divergence};
  d.steps_to_threshold = history_.thresholds();
  d.evals = history_.evals();
  d.checkpoints = history_.checkpoints();
  if (!d.checkpoints.empty()) d.last_checkpoint_step = d.checkpoints.back().step;
  d.segments = segments_;
  d.timing = runTiming(segments_);
  if (status == "finished") d.final_checkpoint = documents::FileDigest{"final.pt", io::sha256File(s_.paths.final_checkpoint)};
  return d;
}

documents::TrainDocument Trainer::writeRecord(const std::string& status, double last_loss, const std::string& divergence, const char* end) {
  const data::CorpusFiles& corpus = s_.corpus;
  prov_.finished_utc = output::utcNow();
  RunSegment& segment = segments_.back();
  segment.end_step = step_;
  segment.tokens = (step_ - segment.start_step) * tokens_per_step_;
  segment.end = end;
  segment.finished_utc = prov_.finished_utc;
  segment.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  prov_.device = s_.device.str();
  prov_.inputs = {{"config", c_.path, c_.sha256, false}, {"corpus", corpus.json_path, corpus.json_sha256, false},
                  {"train_tokens", corpus.train_path, corpus.train_sha256, true},
                  {"heldout_tokens", corpus.heldout_path, corpus.heldout_sha256, true},
                  {"tokenizer", corpus.tokenizer_path, corpus.tokenizer_sha256, true}};
  if (c_.init_from) prov_.inputs.push_back({"init", *c_.init_from, io::sha256File(*c_.init_from), false});
  documents::TrainDocument doc = runRecord(status, last_loss, divergence);
  output::writeFileAtomic(s_.paths.train_json, output::dumpJson(doc.toJson()));
  return doc;
}

documents::TrainDocument Trainer::run() {
  // step 0: the held-out loss at initialisation (L0) and the starting weights, in every run
  if (!s_.from_checkpoint) evaluateStart();
  if (!std::isfinite(history_.initialLoss())) {
    // no L0 (the starting weights' held-out loss is not finite, or a log written before step-0
    // evaluations): nothing to judge divergence against; a diverged start, not a finished run
    const bool has_step0 = history_.logStartsAtStep0();
    const std::string why = has_step0 ? "the held-out loss at step 0 (L0) is not finite"
                                      : "the log has no step-0 evaluation (written before 2026-12-02): start over with --force";
    if (!has_step0) throw UsageError("--resume: " + s_.paths.log + ": " + why);
    spdlog::warn("train {}: diverged at step 0: {}", c_.name, why);
    return writeRecord("diverged", NAN, why, "diverged");
  }

  spdlog::info("train {}: {} parameters ({}), {} steps of {}x{} tokens, {} threads{}", c_.name, m_.count(),
               m_.config.qk_norm ? "QK-norm on" : "QK-norm off", c_.steps, c_.batch_size, c_.seq_len, s_.threads,
               s_.start > 0 ? ", resumed at step " + std::to_string(s_.start)
               : o_.resume ? ", started over: the run stopped before its first checkpoint" : "");
  output::ProgressBar bar("train", static_cast<std::uint64_t>(c_.steps), o_.progress, false, "steps");
  last_record_time_ = std::chrono::steady_clock::now();
  double last_loss = NAN;
  std::string divergence;
  while (step_ < c_.steps) {
    if (o_.stop && o_.stop()) interrupted(last_loss);
    const StepResult r = trainStep();
    last_loss = r.loss;
    // divergence rule 1 (docs/train.md): a non-finite training loss or gradient norm, at any step
    if (!std::isfinite(r.loss) || !std::isfinite(r.grad_norm)) divergence = "non-finite training loss or gradient norm";
    const bool last = step_ == c_.steps || !divergence.empty();
    const bool evaluate = step_ % c_.eval_every == 0 || last;
    if (evaluate || step_ % c_.log_every == 0 || step_ == 1) {
      std::optional<Evaluation> e;
      if (evaluate) {
        e = evaluateHeldout(ev_, m_);
        // rule 2: after warm-up, a held-out loss that is non-finite or above L0
        if (divergence.empty()) divergence = history_.heldoutDivergence(e->heldout_loss, step_, c_.schedule.warmup_steps);
      }
      record(r, e);
    }
    bar.update(static_cast<std::uint64_t>(step_),
               "loss " + output::fixed(last_loss, 3) +
                   (std::isfinite(last_heldout_) ? " · held-out " + output::fixed(last_heldout_, 3) : "") + " · lr " +
                   output::significant(c_.optimizer.lr * r.lr_multiplier, 3) + " · " + output::fixed(last_tokens_per_second_, 0) +
                   " tok/s");
    if (!divergence.empty()) break;
    if (c_.checkpoint_every > 0 && step_ % c_.checkpoint_every == 0 && step_ < c_.steps) checkpoint(last_loss);
  }
  bar.finish();
  if (!divergence.empty()) {
    spdlog::warn("train {}: diverged at step {}: {}", c_.name, step_, divergence);
    return writeRecord("diverged", last_loss, divergence, "diverged");
  }
  writeWeights(s_.paths.final_checkpoint, m_, checkpoint_record_, step_, step_ * tokens_per_step_, c_.seed);
  return writeRecord("finished", last_loss, "", "finished");  // the one write of the end: timing included
}

documents::TrainDocument runTraining(const TrainOptions& o) {
  Trainer t(o);
  return t.run();
}

}  // namespace omn::train
