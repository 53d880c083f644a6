#include "omn/documents/run_outcome.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::write;
using nlohmann::json;

void from_json(const json& j, Divergence& v) {
  get(j, "step", v.step);
  get(j, "reason", v.reason);
}
void to_json(json& j, const Divergence& v) { j = {{"step", v.step}, {"reason", v.reason}}; }

std::string jsonText(const std::optional<Divergence>& divergence) { return write(divergence).dump(); }

void from_json(const json& j, ThresholdStep& v) {
  get(j, "threshold", v.threshold);
  get(j, "step", v.step);
}
void to_json(json& j, const ThresholdStep& v) { j = {{"threshold", v.threshold}, {"step", write(v.step)}}; }

void from_json(const json& j, RunOutcome& v) {
  get(j, "status", v.status);
  get(j, "steps", v.steps);
  get(j, "steps_done", v.steps_done);
  get(j, "initial_loss", v.initial_loss);
  v.has_initial_train_loss = j.contains("initial_train_loss");
  get(j, "initial_train_loss", v.initial_train_loss);
  get(j, "final_train_loss", v.final_train_loss);
  get(j, "final_heldout_loss", v.final_heldout_loss);
  get(j, "best_heldout_loss", v.best_heldout_loss);
  get(j, "diverged", v.diverged);
  get(j, "divergence", v.divergence);
  get(j, "steps_to_threshold", v.steps_to_threshold);
}
void to_json(json& j, const RunOutcome& v) {
  j = {{"status", v.status},
       {"steps", v.steps},
       {"steps_done", v.steps_done},
       {"initial_loss", write(v.initial_loss)},
       {"final_train_loss", write(v.final_train_loss)},
       {"final_heldout_loss", write(v.final_heldout_loss)},
       {"best_heldout_loss", write(v.best_heldout_loss)},
       {"diverged", v.diverged},
       {"divergence", write(v.divergence)},
       {"steps_to_threshold", write(v.steps_to_threshold)}};
  if (v.has_initial_train_loss) j["initial_train_loss"] = write(v.initial_train_loss);
}

}  // namespace omn::documents
