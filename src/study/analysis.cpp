#include "omn/study/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <type_traits>

#include "omn/errors.h"
#include "omn/output/table.h"
#include "omn/train/evaluation.h"

namespace omn::study {

using nlohmann::json;

namespace {

// The regularised incomplete beta function I_x(a, b) (continued fraction, modified Lentz).
double betaContinuedFraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    c = std::fabs(c) < tiny ? tiny : c;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    c = std::fabs(c) < tiny ? tiny : c;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return h;
}

double incompleteBeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * betaContinuedFraction(a, b, x) / a;
  return 1 - front * betaContinuedFraction(b, a, 1 - x) / b;
}

double studentTCdf(double t, int df) {
  const double v = df;
  const double tail = 0.5 * incompleteBeta(v / 2, 0.5, v / (v + t * t));
  return t >= 0 ? 1 - tail : tail;
}

struct Summary {
  double mean = NAN, sd = NAN, low = NAN, high = NAN;
  std::size_t n = 0;
};

// Mean, sample standard deviation and the Student-t interval of the mean (none below two values).
Summary summarise(const std::vector<double>& x, double confidence) {
  Summary s;
  s.n = x.size();
  if (x.empty()) return s;
  double sum = 0;
  for (double v : x) sum += v;
  s.mean = sum / static_cast<double>(x.size());
  if (x.size() < 2) return s;
  double ss = 0;
  for (double v : x) ss += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(ss / static_cast<double>(x.size() - 1));
  const double half = studentTQuantile((1 + confidence) / 2, static_cast<int>(x.size()) - 1) * s.sd / std::sqrt(static_cast<double>(x.size()));
  s.low = s.mean - half;
  s.high = s.mean + half;
  return s;
}

std::optional<double> finiteStat(double v) { return std::isfinite(v) ? std::optional<double>(v) : std::nullopt; }

documents::SeriesSummary summaryRecord(const Summary& s) {
  return {static_cast<std::int64_t>(s.n), finiteStat(s.mean), finiteStat(s.sd), finiteStat(s.low), finiteStat(s.high)};
}

// A run's loss for the sensitivity: its final held-out loss capped at L0, L0 when it diverged.
double cappedLoss(const documents::StudyRun& run) {
  const double l0 = run.initial_loss.value_or(NAN);
  if (run.diverged || !run.final_heldout_loss) return l0;
  return std::min(*run.final_heldout_loss, l0);
}

bool stable(const documents::StudyRun& run) {
  return !run.diverged && run.final_heldout_loss && run.initial_loss && *run.final_heldout_loss < *run.initial_loss;
}

// Wortsman et al.'s LR sensitivity of one curve (a value per grid learning rate).
double sensitivity(const std::vector<double>& curve) {
  if (curve.empty()) return NAN;
  double sum = 0, best = std::numeric_limits<double>::infinity();
  for (double v : curve) {
    sum += v;
    best = std::min(best, v);
  }
  return sum / static_cast<double>(curve.size()) - best;
}

}  // namespace

double studentTQuantile(double p, int df) {
  if (!(p > 0 && p < 1) || df < 1) throw UsageError("studentTQuantile: p in (0, 1) and df >= 1 required");
  double lo = -1e6, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (studentTCdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {

// Each layer's value of one row of the metric table at an evaluation (not finite: empty)
documents::Series metricPerLayer(const std::vector<documents::EvalLayer>& layers, const documents::LayerMetric& row) {
  documents::Series v;
  for (const documents::EvalLayer& l : layers) v.push_back(finiteStat(l.metrics.*row.value));
  return v;
}

documents::Series gainMeans(const std::vector<documents::EvalLayer>& layers, bool q) {
  documents::Series v;
  for (const documents::EvalLayer& l : layers) {
    const std::optional<documents::RoleSummary>& g = q ? l.q_gain : l.k_gain;
    v.push_back(g ? g->mean : std::nullopt);
  }
  return v;
}

// A run's trajectories from its log as written: the loss at every logged step (step 0 is an
// evaluation only), and at every evaluation the held-out loss, each metric the trainer records per
// layer and the gains' means.
documents::RunTrajectory trajectoryOf(const std::vector<documents::TrainLogRecord>& log) {
  documents::RunTrajectory t;
  documents::EvalTrajectory& ev = t.eval;
  for (std::size_t i = 0; i < documents::kLayerMetrics.size(); ++i)
    if (documents::kLayerMetrics[i].trained) ev.metrics[i].emplace();
  for (const documents::TrainLogRecord& rec : log) {
    if (rec.trained) {
      t.train.step.push_back(rec.step);
      t.train.loss.push_back(rec.train_loss);
    }
    if (!rec.eval) continue;
    ev.step.push_back(rec.step);
    ev.heldout_loss.push_back(rec.eval->heldout_loss);
    for (std::size_t i = 0; i < documents::kLayerMetrics.size(); ++i)
      if (ev.metrics[i]) ev.metrics[i]->push_back(metricPerLayer(rec.eval->layers, documents::kLayerMetrics[i]));
    ev.q_gain_mean.push_back(gainMeans(rec.eval->layers, true));
    ev.k_gain_mean.push_back(gainMeans(rec.eval->layers, false));
  }
  return t;
}

}  // namespace

documents::StudyRun runRecord(const Cell& cell, const documents::TrainDocument& train, const std::vector<documents::TrainLogRecord>& log,
                              const std::string& dir, const std::string& train_json_sha256) {
  if (train.status != "finished" && train.status != "diverged")
    throw FormatError(dir + "/train.json: status \"" + train.status + "\": the run did not finish");
  documents::StudyRun r;
  static_cast<documents::RunOutcome&>(r) = train;  // its outcome as its train.json records it
  r.has_initial_train_loss = true;                 // recorded by every study run (null for a record without it)
  r.id = cell.id;
  r.index = static_cast<std::int64_t>(cell.index);
  r.arm = cell.arm;
  r.qk_norm = cell.qk_norm;
  r.n_layers = cell.n_layers;
  r.optimizer = cell.optimizer;
  r.lr = cell.lr;
  r.muon_lr = cell.muon_lr;
  r.seed = cell.seed;
  r.dir = dir;
  r.config_sha256 = train.config.sha256;
  r.train_json_sha256 = train_json_sha256;
  if (train.final_checkpoint) r.final_checkpoint_sha256 = train.final_checkpoint->sha256;
  r.parameters = train.model.parameters;
  if (train.timing) r.seconds = train.timing->seconds;
  r.trajectory = trajectoryOf(log);
  return r;
}

documents::StudyGrid gridRecord(const StudyManifest& m) {
  std::vector<std::uint64_t> seeds;
  for (const auto& c : m.cells)
    if (std::find(seeds.begin(), seeds.end(), c.seed) == seeds.end()) seeds.push_back(c.seed);
  return {m.arms, m.lrs, seeds, static_cast<std::int64_t>(m.cells.size())};
}

namespace {

// What an arm's learning rates add up to, one learning rate at a time (armAtLr)
struct ArmCurve {
  std::map<std::uint64_t, std::vector<double>> by_seed;  // seed → the capped curve over the grid
  std::vector<double> curve;                             // mean over seeds of the capped loss, per learning rate
  std::vector<double> spreads;                           // the finished runs' sd over seeds, per learning rate
  double largest_stable = NAN, best_lr = NAN, best_loss = NAN;
  std::int64_t diverged = 0;
  bool complete = true;
};

// An arm at one learning rate: its runs, the finished ones' summary, their range, the capped mean;
// the curve, stability, best and spread noted in `acc`.
documents::ArmLr armAtLr(const std::vector<const documents::StudyRun*>& mine, double lr, std::size_t seeds, double confidence, ArmCurve& acc) {
  documents::ArmLr out;
  out.lr = lr;
  std::vector<double> capped, finished;
  bool all_stable = false, any = false;
  for (const documents::StudyRun* r : mine) {
    if (r->lr != lr) continue;
    all_stable = (any ? all_stable : true) && stable(*r);
    any = true;
    out.runs.push_back(r->id);
    out.final_heldout_loss.push_back(r->final_heldout_loss);
    capped.push_back(cappedLoss(*r));
    acc.by_seed[r->seed].push_back(cappedLoss(*r));
    if (r->diverged) ++out.diverged;
    else if (r->final_heldout_loss) finished.push_back(*r->final_heldout_loss);
  }
  acc.diverged += out.diverged;
  if (out.runs.size() != seeds) acc.complete = false;
  const Summary cs = summarise(capped, confidence), fs = summarise(finished, confidence);
  if (!capped.empty()) acc.curve.push_back(cs.mean);
  if (all_stable) acc.largest_stable = lr;
  if (all_stable && (std::isnan(acc.best_loss) || fs.mean < acc.best_loss)) {
    acc.best_loss = fs.mean;
    acc.best_lr = lr;
  }
  if (std::isfinite(fs.sd)) acc.spreads.push_back(fs.sd);
  out.finished = summaryRecord(fs);
  if (!finished.empty())
    out.range = std::vector<std::optional<double>>{*std::min_element(finished.begin(), finished.end()), *std::max_element(finished.begin(), finished.end())};
  out.capped_mean = finiteStat(cs.mean);
  return out;
}

// Why an arm has no sensitivity: it needs a grid (two learning rates or more) and something that
// trained (with no run below L0 every capped loss is L0 and mean − min would read 0, "perfectly
// insensitive"); empty when it has one.
std::string sensitivityNote(const std::vector<const documents::StudyRun*>& mine, std::size_t lrs, bool whole) {
  bool any_stable = false;
  for (const documents::StudyRun* r : mine) any_stable = any_stable || stable(*r);
  if (lrs < 2) return "one learning rate: no sensitivity to measure";
  if (!any_stable) return "no run of the arm trained below the loss at initialisation";
  if (!whole) return "incomplete: not every learning rate has a run for every seed";
  return "";
}

documents::StudyArm armSummary(const std::string& name, const std::vector<const documents::StudyRun*>& mine, const documents::StudyGrid& grid,
                               double confidence) {
  ArmCurve acc;
  documents::StudyArm arm;
  for (double lr : grid.lrs) arm.per_lr.push_back(armAtLr(mine, lr, grid.seeds.size(), confidence, acc));
  const bool whole = acc.complete && acc.curve.size() == grid.lrs.size();
  const std::string note = sensitivityNote(mine, grid.lrs.size(), whole);
  for (const auto& [seed, c] : acc.by_seed)
    arm.lr_sensitivity_by_seed.push_back({seed, note.empty() && c.size() == grid.lrs.size() ? finiteStat(sensitivity(c)) : std::nullopt});
  double l0_sum = 0, spread = 0;
  for (const documents::StudyRun* r : mine) l0_sum += r->initial_loss.value_or(NAN);
  for (double s : acc.spreads) spread += s;
  const documents::StudyRun& first = *mine.front();
  arm.arm = name;
  arm.qk_norm = first.qk_norm;
  arm.n_layers = first.n_layers;
  arm.optimizer = first.optimizer;
  arm.runs = static_cast<std::int64_t>(mine.size());
  arm.diverged = acc.diverged;
  arm.complete = whole;
  arm.initial_loss = finiteStat(l0_sum / static_cast<double>(mine.size()));
  if (note.empty()) arm.lr_sensitivity = finiteStat(sensitivity(acc.curve));
  arm.has_lr_sensitivity_note = true;
  if (!note.empty()) arm.lr_sensitivity_note = note;
  arm.largest_stable_lr = finiteStat(acc.largest_stable);
  arm.best_lr = finiteStat(acc.best_lr);
  arm.best_loss = finiteStat(acc.best_loss);
  if (!acc.spreads.empty()) arm.seed_spread = spread / static_cast<double>(acc.spreads.size());
  return arm;
}

}  // namespace

std::vector<documents::StudyArm> analyseArms(const std::vector<documents::StudyRun>& runs, const documents::StudyGrid& grid, double confidence) {
  std::vector<documents::StudyArm> arms;
  for (const std::string& name : grid.arms) {
    std::vector<const documents::StudyRun*> mine;
    for (const auto& r : runs)
      if (r.arm == name) mine.push_back(&r);
    if (!mine.empty()) arms.push_back(armSummary(name, mine, grid, confidence));
  }
  return arms;
}

namespace {

// The matched pairs of two arms at one learning rate: the same seed on and off, their difference
// (on − off) where both finished, and its interval over seeds.
documents::ComparedLr compareAtLr(const std::vector<documents::StudyRun>& runs, const documents::StudyArm& on, const documents::StudyArm& off,
                                  double lr, double confidence) {
  auto find = [&](const std::string& arm, std::uint64_t seed) -> const documents::StudyRun* {
    for (const auto& r : runs)
      if (r.arm == arm && r.lr == lr && r.seed == seed) return &r;
    return nullptr;
  };
  documents::ComparedLr out;
  out.lr = lr;
  std::vector<double> diffs;
  for (const auto& r : runs) {
    if (r.arm != on.arm || r.lr != lr) continue;
    const documents::StudyRun* o = find(off.arm, r.seed);
    if (!o) continue;
    out.diverged.on += r.diverged;
    out.diverged.off += o->diverged;
    const bool both = !r.diverged && !o->diverged && r.final_heldout_loss && o->final_heldout_loss;
    const std::optional<double> d = both ? std::optional<double>(*r.final_heldout_loss - *o->final_heldout_loss) : std::nullopt;
    if (d) diffs.push_back(*d);
    out.pairs.push_back({r.seed, r.final_heldout_loss, o->final_heldout_loss, d});
  }
  out.difference = summaryRecord(summarise(diffs, confidence));
  return out;
}

}  // namespace

std::vector<documents::ArmComparison> compareArms(const std::vector<documents::StudyRun>& runs, const std::vector<documents::StudyArm>& arms,
                                                  double confidence) {
  std::vector<documents::ArmComparison> out;
  for (const auto& on : arms) {
    if (!on.qk_norm) continue;
    for (const auto& off : arms) {
      if (off.qk_norm || off.n_layers != on.n_layers || off.optimizer != on.optimizer) continue;
      documents::ArmComparison c;
      c.on = on.arm;
      c.off = off.arm;
      c.confidence = confidence;
      c.lr_sensitivity = {on.lr_sensitivity, off.lr_sensitivity};
      c.largest_stable_lr = {on.largest_stable_lr, off.largest_stable_lr};
      c.best_lr = {on.best_lr, off.best_lr};
      c.best_loss = {on.best_loss, off.best_loss};
      for (const documents::ArmLr& at : on.per_lr) c.per_lr.push_back(compareAtLr(runs, on, off, at.lr, confidence));
      out.push_back(std::move(c));
    }
  }
  return out;
}

namespace {

// A CSV cell as the document spells the value: empty for none, a string quoted where it needs it
// (RFC 4180; control characters as visible escapes), anything else as its JSON
template <class T>
std::string csvCell(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) return output::csvField(v);
  else return json(v).dump();
}
template <class T>
std::string csvCell(const std::optional<T>& v) {
  return v ? csvCell(*v) : std::string();
}

}  // namespace

std::string studyCsv(const documents::StudyDocument& study) {
  std::vector<double> thresholds;
  for (const auto& r : study.runs)
    for (const auto& t : r.steps_to_threshold)
      if (std::find(thresholds.begin(), thresholds.end(), t.threshold) == thresholds.end()) thresholds.push_back(t.threshold);
  std::ostringstream o;
  o << "id,arm,qk_norm,n_layers,optimizer,lr,muon_lr,seed,status,diverged_at_step,initial_loss,final_train_loss,final_heldout_loss,"
       "best_heldout_loss,steps_done,seconds";
  for (double t : thresholds) o << ",steps_to_" << json(t).dump();
  o << "\n";
  for (const auto& r : study.runs) {
    o << csvCell(r.id) << ',' << csvCell(r.arm) << ',' << csvCell(r.qk_norm) << ',' << csvCell(r.n_layers) << ',' << csvCell(r.optimizer)
      << ',' << csvCell(r.lr) << ',' << csvCell(r.muon_lr) << ',' << csvCell(r.seed) << ',' << csvCell(r.status) << ','
      << (r.divergence ? csvCell(r.divergence->step) : std::string()) << ',' << csvCell(r.initial_loss) << ','
      << csvCell(r.final_train_loss) << ',' << csvCell(r.final_heldout_loss) << ',' << csvCell(r.best_heldout_loss) << ','
      << csvCell(r.steps_done) << ',' << csvCell(r.seconds);
    for (double t : thresholds) {
      std::optional<std::int64_t> step;
      for (const auto& x : r.steps_to_threshold)
        if (x.threshold == t) step = x.step;
      o << ',' << csvCell(step);
    }
    o << "\n";
  }
  return o.str();
}

documents::StudyDocument assembleStudy(documents::StudyDocument doc, std::vector<documents::StudyRun> runs) {
  std::sort(runs.begin(), runs.end(), [](const documents::StudyRun& a, const documents::StudyRun& b) { return a.index < b.index; });
  doc.arms = analyseArms(runs, doc.grid, doc.confidence);
  doc.comparison = compareArms(runs, doc.arms, doc.confidence);
  doc.runs = std::move(runs);
  return doc;
}

}  // namespace omn::study
