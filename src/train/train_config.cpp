#include "omn/train/train_config.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "omn/errors.h"
#include "omn/io/json_reader.h"
#include "omn/io/sha256.h"
#include "omn/model/device_spec.h"
#include "omn/output/json_file.h"

namespace omn::train {

using nlohmann::json;

namespace {

// /init: the initial weights' standard deviation, or a checkpoint to start from.
void readInit(const io::JsonReader& r, const json& in, const std::string& path, TrainConfig& c) {
  r.object(in, "/init", {"std", "from"});
  if (const json* v = r.opt(in, "std")) c.init_std = r.num(*v, "/init/std", 0, 10, true);
  if (const json* v = r.opt(in, "from")) c.init_from = io::resolveAgainst(r.str(*v, "/init/from"), path);
}

void readModelShape(const io::JsonReader& r, const json& m, ModelShape& s) {
  r.object(m, "/model", {"n_layers", "d_model", "n_heads", "n_kv_heads", "head_dim", "ffn_hidden", "qk_norm", "rope_theta",
                         "norm_eps", "qk_norm_eps"});
  s.n_layers = static_cast<int>(r.integer(r.need(m, "/model", "n_layers"), "/model/n_layers", 1, 1024));
  s.d_model = r.integer(r.need(m, "/model", "d_model"), "/model/d_model", 2, 1 << 16);
  s.n_heads = r.integer(r.need(m, "/model", "n_heads"), "/model/n_heads", 1, 1024);
  s.n_kv_heads = r.integer(r.need(m, "/model", "n_kv_heads"), "/model/n_kv_heads", 1, 1024);
  s.head_dim = r.integer(r.need(m, "/model", "head_dim"), "/model/head_dim", 2, 1024);
  s.ffn_hidden = r.integer(r.need(m, "/model", "ffn_hidden"), "/model/ffn_hidden", 1, 1 << 18);
  s.qk_norm = r.boolean(r.need(m, "/model", "qk_norm"), "/model/qk_norm");
  if (const json* v = r.opt(m, "rope_theta")) s.rope_theta = r.num(*v, "/model/rope_theta", 1, 1e12);
  if (const json* v = r.opt(m, "norm_eps")) s.norm_eps = r.num(*v, "/model/norm_eps", 0, 1, true);
  if (const json* v = r.opt(m, "qk_norm_eps")) s.qk_norm_eps = r.num(*v, "/model/qk_norm_eps", 0, 1, true);
  if (s.head_dim % 2) r.fail("/model/head_dim", "RoPE needs an even head_dim, got " + std::to_string(s.head_dim));
  if (s.n_heads % s.n_kv_heads)
    r.fail("/model/n_kv_heads", "n_heads " + std::to_string(s.n_heads) + " is not a multiple of n_kv_heads " +
                                    std::to_string(s.n_kv_heads));
}

void readOptimizerConfig(const io::JsonReader& r, const json& o, OptimizerConfig& op) {
  r.object(o, "/optimizer", {"kind", "lr", "muon_lr", "betas", "eps", "weight_decay", "muon_momentum", "muon_weight_decay",
                             "ns_steps", "qk_gain_lr_scale", "qk_gain_weight_decay"});
  op.kind = r.choice(r.need(o, "/optimizer", "kind"), "/optimizer/kind", kOptimizerKinds);
  op.lr = r.num(r.need(o, "/optimizer", "lr"), "/optimizer/lr", 0, 100, true);
  if (const json* v = r.opt(o, "muon_lr")) {
    if (op.kind == OptimizerKind::AdamW) r.fail("/optimizer/muon_lr", "only for \"kind\": \"muon+adamw\"");
    op.muon_lr = r.num(*v, "/optimizer/muon_lr", 0, 100, true);
  }
  if (const json* v = r.opt(o, "betas")) {
    if (!v->is_array() || v->size() != 2) r.fail("/optimizer/betas", "expected [beta1, beta2]");
    op.beta1 = r.num((*v)[0], "/optimizer/betas/0", 0, 1, false, true);
    op.beta2 = r.num((*v)[1], "/optimizer/betas/1", 0, 1, false, true);
  }
  if (const json* v = r.opt(o, "eps")) op.eps = r.num(*v, "/optimizer/eps", 0, 1, true);
  if (const json* v = r.opt(o, "weight_decay")) op.weight_decay = r.num(*v, "/optimizer/weight_decay", 0, 10);
  if (const json* v = r.opt(o, "muon_momentum")) op.muon_momentum = r.num(*v, "/optimizer/muon_momentum", 0, 1, false, true);
  if (const json* v = r.opt(o, "muon_weight_decay")) op.muon_weight_decay = r.num(*v, "/optimizer/muon_weight_decay", 0, 10);
  if (const json* v = r.opt(o, "ns_steps")) op.ns_steps = static_cast<int>(r.integer(*v, "/optimizer/ns_steps", 1, 100));
  if (const json* v = r.opt(o, "qk_gain_lr_scale")) op.qk_gain_lr_scale = r.num(*v, "/optimizer/qk_gain_lr_scale", 0, 1e4);
  if (const json* v = r.opt(o, "qk_gain_weight_decay")) op.qk_gain_weight_decay = r.num(*v, "/optimizer/qk_gain_weight_decay", 0, 10);
}

void readSchedule(const io::JsonReader& r, const json& sc, std::int64_t steps, ScheduleConfig& s) {
  r.object(sc, "/schedule", {"warmup_steps", "decay", "min_lr_ratio"});
  if (const json* v = r.opt(sc, "warmup_steps")) s.warmup_steps = r.integer(*v, "/schedule/warmup_steps", 0, steps);
  if (const json* v = r.opt(sc, "decay")) s.decay = r.choice(*v, "/schedule/decay", kDecays);
  if (const json* v = r.opt(sc, "min_lr_ratio")) s.min_lr_ratio = r.num(*v, "/schedule/min_lr_ratio", 0, 1);
}

void readEval(const io::JsonReader& r, const json& ev, TrainConfig& c) {
  r.object(ev, "/eval", {"every", "rows"});
  if (const json* v = r.opt(ev, "every")) c.eval_every = r.integer(*v, "/eval/every", 1, c.steps);
  if (const json* v = r.opt(ev, "rows")) c.eval_rows = r.integer(*v, "/eval/rows", 1, 1 << 20);
}

std::vector<double> readLossThresholds(const io::JsonReader& r, const json& v) {
  if (!v.is_array()) r.fail("/loss_thresholds", "expected an array of losses (nats per token)");
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(r.num(v[i], "/loss_thresholds/" + std::to_string(i), 0, 1e6, true));
  return out;
}

}  // namespace


double lrMultiplier(const ScheduleConfig& s, std::int64_t step, std::int64_t total) {
  if (s.warmup_steps > 0 && step <= s.warmup_steps) return static_cast<double>(step) / static_cast<double>(s.warmup_steps);
  const std::int64_t span = total - s.warmup_steps;
  if (span <= 1 || s.decay == Decay::Constant) return 1.0;
  const double t = static_cast<double>(step - s.warmup_steps - 1) / static_cast<double>(span - 1);  // 0 → 1
  const double shape = s.decay == Decay::Cosine ? 0.5 * (1.0 + std::cos(M_PI * t)) : 1.0 - t;
  return s.min_lr_ratio + (1.0 - s.min_lr_ratio) * shape;
}

TrainConfig parseTrainConfig(const json& j, const std::string& path, const std::string& sha256) {
  const io::JsonReader r("training config " + path);
  r.object(j, "", {"schema", "name", "corpus", "init", "model", "optimizer", "schedule", "clip_grad_norm", "steps",
                   "batch_size", "seq_len", "seed", "log_every", "eval", "checkpoint_every", "loss_thresholds", "dtype",
                   "device"});
  r.schema(j, "omn-audit/train-config@1");
  TrainConfig c;
  c.path = path;
  c.sha256 = sha256;
  c.raw = j;
  c.name = r.str(r.need(j, "", "name"), "/name");
  c.corpus = io::resolveAgainst(r.str(r.need(j, "", "corpus"), "/corpus"), path);
  if (const json* in = r.opt(j, "init")) readInit(r, *in, path, c);
  readModelShape(r, r.need(j, "", "model"), c.model);
  readOptimizerConfig(r, r.need(j, "", "optimizer"), c.optimizer);
  c.steps = r.integer(r.need(j, "", "steps"), "/steps", 1, 100'000'000);
  if (const json* sc = r.opt(j, "schedule")) readSchedule(r, *sc, c.steps, c.schedule);
  if (const json* v = r.opt(j, "clip_grad_norm")) c.clip_grad_norm = r.num(*v, "/clip_grad_norm", 0, 1e9);
  c.batch_size = r.integer(r.need(j, "", "batch_size"), "/batch_size", 1, 1 << 16);
  c.seq_len = r.integer(r.need(j, "", "seq_len"), "/seq_len", 2, 1 << 20);
  if (const json* v = r.opt(j, "seed")) c.seed = static_cast<std::uint64_t>(r.integer(*v, "/seed", 0));
  if (const json* v = r.opt(j, "log_every")) c.log_every = r.integer(*v, "/log_every", 1, c.steps);
  if (const json* ev = r.opt(j, "eval")) readEval(r, *ev, c);
  c.eval_every = std::min(c.eval_every, c.steps);
  if (const json* v = r.opt(j, "checkpoint_every")) c.checkpoint_every = r.integer(*v, "/checkpoint_every", 0, c.steps);
  if (const json* v = r.opt(j, "loss_thresholds")) c.loss_thresholds = readLossThresholds(r, *v);
  if (const json* v = r.opt(j, "dtype")) c.dtype = r.oneOf(*v, "/dtype", {"fp32"});  // bf16 measured slower here (docs/train.md)
  if (const json* v = r.opt(j, "device")) c.device = model::checkDeviceSpec(r.str(*v, "/device"), r.label() + ": /device");
  return c;
}

TrainConfig loadTrainConfig(const std::string& path) {
  const json j = output::readJsonFile(path, "training config");
  return parseTrainConfig(j, path, io::sha256File(path));
}

}  // namespace omn::train
