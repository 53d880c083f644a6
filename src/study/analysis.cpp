#include "omn/study/analysis.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "omn/errors.h"
#include "omn/output/json_file.h"
#include "omn/output/table.h"
#include "omn/train/evaluation.h"

namespace omn::study {

using nlohmann::json;

namespace {

double numOr(const json& v, double fallback) { return v.is_number() ? v.get<double>() : fallback; }

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

json summaryJson(const Summary& s) {
  using output::finiteOrNull;
  return {{"n", s.n}, {"mean", finiteOrNull(s.mean)}, {"sd", finiteOrNull(s.sd)}, {"ci_low", finiteOrNull(s.low)},
          {"ci_high", finiteOrNull(s.high)}};
}

// A run's loss for the sensitivity: its final held-out loss capped at L0, L0 when it diverged.
double cappedLoss(const json& run) {
  const double l0 = numOr(run["initial_loss"], NAN);
  if (run["diverged"].get<bool>() || !run["final_heldout_loss"].is_number()) return l0;
  return std::min(run["final_heldout_loss"].get<double>(), l0);
}

bool stable(const json& run) {
  return !run["diverged"].get<bool>() && run["final_heldout_loss"].is_number() && run["initial_loss"].is_number() &&
         run["final_heldout_loss"].get<double>() < run["initial_loss"].get<double>();
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

json runRecord(const Cell& cell, const json& train, const std::vector<json>& log, const std::string& dir,
               const std::string& train_json_sha256) {
  json train_steps = json::array(), train_loss = json::array();
  json ev_step = json::array(), ev_loss = json::array(), ev_q = json::array(), ev_k = json::array();
  json ev_metric = json::object();  // per metric of train::kLayerMetrics: a per-layer series per evaluation
  for (const train::LayerMetric& m : train::kLayerMetrics) ev_metric[m.key] = json::array();
  for (const json& rec : log) {
    if (rec.contains("train_loss")) {  // step 0 is an evaluation only
      train_steps.push_back(rec.at("step"));
      train_loss.push_back(rec["train_loss"]);
    }
    if (!rec.contains("eval") || !rec["eval"].is_object()) continue;
    const json& e = rec["eval"];
    ev_step.push_back(rec["step"]);
    ev_loss.push_back(e.value("heldout_loss", json(nullptr)));
    json per_layer = json::object(), q = json::array(), k = json::array();
    for (const train::LayerMetric& m : train::kLayerMetrics) per_layer[m.key] = json::array();
    for (const json& l : e.value("layers", json::array())) {
      for (const train::LayerMetric& m : train::kLayerMetrics) per_layer[m.key].push_back(l.value(m.key, json(nullptr)));
      q.push_back(l.contains("q_gain") && l["q_gain"].is_object() ? l["q_gain"].value("mean", json(nullptr)) : json(nullptr));
      k.push_back(l.contains("k_gain") && l["k_gain"].is_object() ? l["k_gain"].value("mean", json(nullptr)) : json(nullptr));
    }
    for (const train::LayerMetric& m : train::kLayerMetrics) ev_metric[m.key].push_back(per_layer[m.key]);
    ev_q.push_back(q);
    ev_k.push_back(k);
  }
  const std::string status = train.value("status", "");
  if (status != "finished" && status != "diverged")
    throw FormatError(dir + "/train.json: status \"" + status + "\": the run did not finish");
  json eval_series = {{"step", ev_step}, {"heldout_loss", ev_loss}, {"q_gain_mean", ev_q}, {"k_gain_mean", ev_k}};
  eval_series.update(ev_metric);
  return {{"id", cell.id},
          {"index", cell.index},
          {"arm", cell.arm},
          {"qk_norm", cell.qk_norm},
          {"n_layers", cell.n_layers},
          {"optimizer", cell.optimizer},
          {"lr", cell.lr},
          {"muon_lr", cell.muon_lr ? json(*cell.muon_lr) : json(nullptr)},
          {"seed", cell.seed},
          {"dir", dir},
          {"config_sha256", train.at("config").value("sha256", "")},
          {"train_json_sha256", train_json_sha256},
          {"final_checkpoint_sha256",
           train.contains("final_checkpoint") ? train["final_checkpoint"].value("sha256", json(nullptr)) : json(nullptr)},
          {"parameters", train.at("model").value("parameters", json(nullptr))},
          {"status", status},
          {"diverged", train.value("diverged", false)},
          {"divergence", train.value("divergence", json(nullptr))},
          {"initial_loss", train.value("initial_loss", json(nullptr))},
          {"initial_train_loss", train.value("initial_train_loss", json(nullptr))},
          {"final_train_loss", train.value("final_train_loss", json(nullptr))},
          {"final_heldout_loss", train.value("final_heldout_loss", json(nullptr))},
          {"best_heldout_loss", train.value("best_heldout_loss", json(nullptr))},
          {"steps", train.value("steps", json(nullptr))},
          {"steps_done", train.value("steps_done", json(nullptr))},
          {"steps_to_threshold", train.value("steps_to_threshold", json::array())},
          {"seconds", train.contains("timing") ? train["timing"].value("seconds", json(nullptr)) : json(nullptr)},
          {"trajectory",
           {{"train", {{"step", train_steps}, {"loss", train_loss}}}, {"eval", eval_series}}}};
}

json gridJson(const StudyManifest& m) {
  std::vector<std::uint64_t> seeds;
  for (const auto& c : m.cells)
    if (std::find(seeds.begin(), seeds.end(), c.seed) == seeds.end()) seeds.push_back(c.seed);
  return {{"arms", m.arms}, {"lrs", m.lrs}, {"seeds", seeds}, {"cells", m.cells.size()}};
}

json analyseArms(const std::vector<json>& runs, const json& grid, double confidence) {
  using output::finiteOrNull;
  const std::vector<double> lrs = grid.at("lrs").get<std::vector<double>>();
  json arms = json::array();
  for (const auto& arm_name : grid.at("arms")) {
    std::vector<const json*> mine;
    for (const auto& r : runs)
      if (r.at("arm") == arm_name) mine.push_back(&r);
    if (mine.empty()) continue;
    std::map<std::uint64_t, std::vector<double>> by_seed;  // seed → the capped curve over the grid
    json per_lr = json::array();
    std::vector<double> curve;  // mean over seeds of the capped loss, per learning rate
    double largest_stable = NAN, best_lr = NAN, best_loss = NAN;
    std::vector<double> spreads;
    std::size_t diverged_total = 0;
    bool complete = true;
    for (double lr : lrs) {
      std::vector<const json*> at;
      for (const json* r : mine)
        if (r->at("lr").get<double>() == lr) at.push_back(r);
      std::vector<double> capped, finished;
      json ids = json::array(), losses = json::array();
      std::size_t diverged = 0;
      bool all_stable = !at.empty();
      for (const json* r : at) {
        ids.push_back(r->at("id"));
        losses.push_back(r->at("final_heldout_loss"));
        capped.push_back(cappedLoss(*r));
        by_seed[r->at("seed").get<std::uint64_t>()].push_back(cappedLoss(*r));
        if (r->at("diverged").get<bool>()) ++diverged;
        else if (r->at("final_heldout_loss").is_number()) finished.push_back(r->at("final_heldout_loss").get<double>());
        all_stable = all_stable && stable(*r);
      }
      diverged_total += diverged;
      if (at.size() != grid.at("seeds").size()) complete = false;
      const Summary cs = summarise(capped, confidence), fs = summarise(finished, confidence);
      if (!capped.empty()) curve.push_back(cs.mean);
      if (all_stable) largest_stable = lr;
      if (all_stable && (std::isnan(best_loss) || fs.mean < best_loss)) {
        best_loss = fs.mean;
        best_lr = lr;
      }
      if (std::isfinite(fs.sd)) spreads.push_back(fs.sd);
      json range = finished.empty() ? json(nullptr)
                                    : json{*std::min_element(finished.begin(), finished.end()), *std::max_element(finished.begin(), finished.end())};
      per_lr.push_back({{"lr", lr},
                        {"runs", ids},
                        {"diverged", diverged},
                        {"final_heldout_loss", losses},
                        {"finished", summaryJson(fs)},
                        {"range", range},
                        {"capped_mean", finiteOrNull(cs.mean)}});
    }
    // the sensitivity needs a grid (two learning rates or more) and something that trained: with no
    // run below L0 every capped loss is L0 and mean − min would read 0, "perfectly insensitive"
    bool any_stable = false;
    for (const json* r : mine) any_stable = any_stable || stable(*r);
    const bool whole = complete && curve.size() == lrs.size();
    std::string note;
    if (lrs.size() < 2) note = "one learning rate: no sensitivity to measure";
    else if (!any_stable) note = "no run of the arm trained below the loss at initialisation";
    else if (!whole) note = "incomplete: not every learning rate has a run for every seed";
    json by_seed_json = json::array();
    for (const auto& [seed, c] : by_seed)
      by_seed_json.push_back({{"seed", seed}, {"lr_sensitivity", note.empty() && c.size() == lrs.size() ? finiteOrNull(sensitivity(c)) : json(nullptr)}});
    double l0_sum = 0;
    for (const json* r : mine) l0_sum += numOr(r->at("initial_loss"), NAN);
    double spread = 0;
    for (double s : spreads) spread += s;
    const json& first = *mine.front();
    arms.push_back({{"arm", arm_name},
                    {"qk_norm", first.at("qk_norm")},
                    {"n_layers", first.at("n_layers")},
                    {"optimizer", first.at("optimizer")},
                    {"runs", mine.size()},
                    {"diverged", diverged_total},
                    {"complete", whole},
                    {"initial_loss", finiteOrNull(l0_sum / static_cast<double>(mine.size()))},
                    {"per_lr", per_lr},
                    {"lr_sensitivity", note.empty() ? finiteOrNull(sensitivity(curve)) : json(nullptr)},
                    {"lr_sensitivity_note", note.empty() ? json(nullptr) : json(note)},
                    {"lr_sensitivity_by_seed", by_seed_json},
                    {"largest_stable_lr", finiteOrNull(largest_stable)},
                    {"best_lr", finiteOrNull(best_lr)},
                    {"best_loss", finiteOrNull(best_loss)},
                    {"seed_spread", spreads.empty() ? json(nullptr) : json(spread / static_cast<double>(spreads.size()))}});
  }
  return arms;
}

json compareArms(const std::vector<json>& runs, const json& arms, double confidence) {
  using output::finiteOrNull;
  auto find = [&](const json& arm, double lr, std::uint64_t seed) -> const json* {
    for (const auto& r : runs)
      if (r.at("arm") == arm && r.at("lr").get<double>() == lr && r.at("seed").get<std::uint64_t>() == seed) return &r;
    return nullptr;
  };
  json out = json::array();
  for (const auto& on : arms) {
    if (!on.at("qk_norm").get<bool>()) continue;
    for (const auto& off : arms) {
      if (off.at("qk_norm").get<bool>() || off.at("n_layers") != on.at("n_layers") || off.at("optimizer") != on.at("optimizer"))
        continue;
      json per_lr = json::array();
      for (const auto& at : on.at("per_lr")) {
        const double lr = at.at("lr").get<double>();
        std::vector<double> diffs;
        json pairs = json::array();
        std::size_t on_div = 0, off_div = 0;
        for (const auto& r : runs) {
          if (r.at("arm") != on.at("arm") || r.at("lr").get<double>() != lr) continue;
          const std::uint64_t seed = r.at("seed").get<std::uint64_t>();
          const json* o = find(off.at("arm"), lr, seed);
          if (!o) continue;
          on_div += r.at("diverged").get<bool>();
          off_div += o->at("diverged").get<bool>();
          const bool both = !r.at("diverged").get<bool>() && !o->at("diverged").get<bool>() && r.at("final_heldout_loss").is_number() &&
                            o->at("final_heldout_loss").is_number();
          const json d = both ? json(r["final_heldout_loss"].get<double>() - o->at("final_heldout_loss").get<double>()) : json(nullptr);
          if (both) diffs.push_back(d.get<double>());
          pairs.push_back({{"seed", seed}, {"on", r.at("final_heldout_loss")}, {"off", o->at("final_heldout_loss")}, {"difference", d}});
        }
        per_lr.push_back({{"lr", lr},
                          {"pairs", pairs},
                          {"diverged", {{"on", on_div}, {"off", off_div}}},
                          {"difference", summaryJson(summarise(diffs, confidence))}});
      }
      out.push_back({{"on", on.at("arm")},
                     {"off", off.at("arm")},
                     {"confidence", confidence},
                     {"lr_sensitivity", {{"on", on.at("lr_sensitivity")}, {"off", off.at("lr_sensitivity")}}},
                     {"largest_stable_lr", {{"on", on.at("largest_stable_lr")}, {"off", off.at("largest_stable_lr")}}},
                     {"best_lr", {{"on", on.at("best_lr")}, {"off", off.at("best_lr")}}},
                     {"best_loss", {{"on", on.at("best_loss")}, {"off", off.at("best_loss")}}},
                     {"per_lr", per_lr}});
    }
  }
  return out;
}

std::string studyCsv(const json& study) {
  std::vector<double> thresholds;
  for (const auto& r : study.at("runs"))
    for (const auto& t : r.at("steps_to_threshold"))
      if (std::find(thresholds.begin(), thresholds.end(), t.at("threshold").get<double>()) == thresholds.end())
        thresholds.push_back(t.at("threshold").get<double>());
  auto cell = [](const json& v) {
    if (v.is_null()) return std::string();
    if (v.is_string()) return output::csvField(v.get<std::string>());  // RFC 4180 quoting; control characters as visible escapes
    return v.dump();
  };
  std::ostringstream o;
  o << "id,arm,qk_norm,n_layers,optimizer,lr,muon_lr,seed,status,diverged_at_step,initial_loss,final_train_loss,final_heldout_loss,"
       "best_heldout_loss,steps_done,seconds";
  for (double t : thresholds) o << ",steps_to_" << json(t).dump();
  o << "\n";
  for (const auto& r : study.at("runs")) {
    o << cell(r["id"]) << ',' << cell(r["arm"]) << ',' << cell(r["qk_norm"]) << ',' << cell(r["n_layers"]) << ','
      << cell(r["optimizer"]) << ',' << cell(r["lr"]) << ',' << cell(r["muon_lr"]) << ',' << cell(r["seed"]) << ','
      << cell(r["status"]) << ',' << (r["divergence"].is_object() ? cell(r["divergence"]["step"]) : std::string()) << ','
      << cell(r["initial_loss"]) << ',' << cell(r["final_train_loss"]) << ',' << cell(r["final_heldout_loss"]) << ','
      << cell(r["best_heldout_loss"]) << ',' << cell(r["steps_done"]) << ',' << cell(r["seconds"]);
    for (double t : thresholds) {
      json step;
      for (const auto& x : r["steps_to_threshold"])
        if (x["threshold"].get<double>() == t) step = x["step"];
      o << ',' << cell(step);
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace omn::study

namespace omn::study {

nlohmann::json assembleStudy(nlohmann::json doc, std::vector<nlohmann::json> runs) {
  std::sort(runs.begin(), runs.end(), [](const json& a, const json& b) { return a.at("index").get<std::size_t>() < b.at("index").get<std::size_t>(); });
  const double confidence = doc.at("confidence").get<double>();
  const json arms = analyseArms(runs, doc.at("grid"), confidence);
  doc["comparison"] = compareArms(runs, arms, confidence);
  doc["arms"] = arms;
  doc["runs"] = runs;
  return doc;
}

}  // namespace omn::study
