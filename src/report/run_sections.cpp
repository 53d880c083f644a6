#include "run_sections.h"

#include <string>

#include "omn/output/table.h"

namespace omn::report {
using nlohmann::json;

namespace {
std::string count(const json& v) { return v.is_number() ? v.dump() : "—"; }
// a loss a run has not measured yet (null in train.json) is "—", not NaN
std::string lossCell(const json& v) { return v.is_number() ? f(v, 4) : "—"; }
std::string trackLayerMeans(const json& layer) { return f(layer["q"]["mean"], 3) + " / " + f(layer["k"]["mean"], 3); }
}  // namespace

void trackSummaryRows(Grid& g, const json& t) {
  const json& sum = t["summary"];
  g.rows.push_back({"checkpoints tracked", count(sum["checkpoints"]) + " (" + count(sum["verified"]) + " verified by SHA-256)"});
  if (t["checkpoints"].empty()) return;
  const json& last = t["checkpoints"].back();
  const json& s = last["statistics"];
  const std::string at = last["step"].is_number() ? "step " + last["step"].dump() : last["path"].get<std::string>();
  g.rows.push_back({"Q/K gains at " + at, count(s["count"]) + " values, mean " + f(s["mean"], 4) + ", range [" + f(s["min"], 4) + ", " +
                                              f(s["max"], 4) + "], " + count(s["count_negative"]) + " negative"});
}

void runSummaryRows(Grid& g, const json& r) {
  g.rows.push_back({"run", r["name"].get<std::string>() + ": " + r["status"].get<std::string>() + ", " + count(r["steps_done"]) + " of " +
                               count(r["steps"]) + " steps"});
  g.rows.push_back({"held-out loss (nats/token): final, best", lossCell(r["final_heldout_loss"]) + ", " + lossCell(r["best_heldout_loss"])});
}

Grid trackGrid(const json& t) {
  const std::size_t n_layers = t["checkpoints"].empty() ? 0 : t["checkpoints"][0]["layers"].size();
  Grid g{{"step", "checkpoint", "verified", "mean (×)", "min (×)", "max (×)", "negative (count)"}, {}};
  if (n_layers) g.head.push_back("layer 0 Q / K mean (×)");
  if (n_layers > 1) g.head.push_back("layer " + std::to_string(n_layers - 1) + " Q / K mean (×)");
  for (const auto& c : t["checkpoints"]) {
    const json& s = c["statistics"];
    std::vector<std::string> row = {c["step"].is_number() ? c["step"].dump() : "—", c["path"].get<std::string>(),
                                    c["sha256_verified"].get<bool>() ? "sha256" : "no", f(s["mean"], 4), f(s["min"], 4), f(s["max"], 4),
                                    count(s["count_negative"])};
    if (n_layers) row.push_back(trackLayerMeans(c["layers"][0]));
    if (n_layers > 1) row.push_back(trackLayerMeans(c["layers"][n_layers - 1]));
    g.rows.push_back(std::move(row));
  }
  return g;
}

Grid runGrid(const json& r) {
  const json& timing = r["timing"];
  Grid g{{"field", "value"},
         {{"name", r["name"].get<std::string>()},
          {"status", r["status"].get<std::string>()},
          {"steps done (count)", count(r["steps_done"])},
          {"tokens seen (count)", count(r["tokens_seen"])},
          {"initial loss (nats/token)", lossCell(r["initial_loss"])},
          {"final training loss (nats/token)", lossCell(r["final_train_loss"])},
          {"final held-out loss (nats/token)", lossCell(r["final_heldout_loss"])},
          {"best held-out loss (nats/token)", lossCell(r["best_heldout_loss"])},
          {"held-out unigram cross-entropy (nats/token)", lossCell(r["heldout_unigram_cross_entropy"])},
          {"QK-norm", r["model"]["qk_norm"].get<bool>() ? "on" : "off"},
          {"parameters (count)", count(r["model"]["parameters"])},
          {"optimizer", r["optimizer"]["kind"].get<std::string>()},
          {"dtype", r["dtype"].get<std::string>()},
          {"threads (count)", count(r["threads"])}}};
  if (timing.is_object() && timing["seconds"].is_number())
    g.rows.push_back({"training time (s)", output::fixed(timing["seconds"].get<double>(), 1)});
  if (timing.is_object() && timing["tokens_per_second"].is_number())
    g.rows.push_back({"throughput (tokens/s)", output::fixed(timing["tokens_per_second"].get<double>(), 0)});
  if (r["diverged"].get<bool>()) g.rows.push_back({"diverged", r["divergence"].dump()});
  return g;
}

Grid runEvalsGrid(const json& r) {
  Grid g{{"step", "held-out loss (nats/token)"}, {}};
  for (const auto& e : r["evals"]) g.rows.push_back({e["step"].dump(), lossCell(e["heldout_loss"])});
  return g;
}

}  // namespace omn::report
