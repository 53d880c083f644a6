#include "omn/intervene/plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "omn/io/terminal_text.h"
#include "omn/output/table.h"

namespace omn::intervene {

namespace {

// A condition that only multiplies attention logits: the layers it acts on and the factor.
struct LogitFactor {
  std::vector<int> layers;
  double factor = 1;
};

bool logitFactor(const Condition& c, int n_layers, LogitFactor& out) {
  if (c.steps.size() != 1) return false;
  const Step& s = c.steps.front();
  if (s.coordinates.kind != Coordinates::All) return false;
  out.layers = s.layers.resolve(n_layers, s.pointer);
  switch (s.op) {
    case Op::Scale: out.factor = s.target == Target::QK ? s.value * s.value : s.value; return true;
    case Op::Compensate: out.factor = 1; return true;
    case Op::Noise:
      if (s.value != 0) return false;
      out.factor = 1;
      return true;
    default: return false;
  }
}

std::string factorText(double f) { return output::general(f); }

// "40 s", "3.2 min", "1.5 h"
std::string duration(double seconds) {
  if (seconds < 90) return output::significant(seconds, 2) + " s";
  if (seconds < 5400) return output::significant(seconds / 60, 2) + " min";
  return output::significant(seconds / 3600, 2) + " h";
}

}  // namespace

std::vector<Equivalence> equivalences(const std::vector<Condition>& conditions, int n_layers) {
  std::vector<Equivalence> out;
  std::map<std::pair<std::vector<int>, double>, const Condition*> by_factor;
  std::map<std::string, const Condition*> by_op;  // the recorded op, as JSON text
  for (const Condition& c : conditions) {
    // the recorded op with every layer set resolved: "all" and "0-27" on 28 layers are one op
    nlohmann::json d = c.describe();
    for (std::size_t k = 0; k < c.steps.size(); ++k)
      (c.steps.size() == 1 ? d : d["steps"][k])["layers"] = c.steps[k].layers.resolve(n_layers, c.steps[k].pointer);
    const std::string op = d.dump();
    if (const auto it = by_op.find(op); it != by_op.end()) {
      out.push_back({c.id, it->second->id, "the same op on the same layers"});
      continue;
    }
    by_op.emplace(op, &c);
    LogitFactor f;
    if (!logitFactor(c, n_layers, f)) continue;
    if (f.factor == 1 || f.layers.empty()) {
      const bool sanity = c.steps.front().op == Op::Compensate;
      out.push_back({c.id, "control",
                     std::string(sanity ? "compensate is the sanity control: " : "") + "it multiplies every attention logit by " +
                         factorText(f.factor) + ": only the stored dtype's rounding of the new gains can differ",
                     sanity});
      continue;
    }
    const auto key = std::make_pair(f.layers, f.factor);
    if (const auto it = by_factor.find(key); it != by_factor.end()) {
      out.push_back({c.id, it->second->id,
                     "both multiply the attention logits of the same layers by " + factorText(f.factor) +
                         " (logits are bilinear in the Q and K gains): only rounding can differ"});
      continue;
    }
    by_factor.emplace(key, &c);
  }
  return out;
}

void printPlan(std::ostream& os, const Manifest& m, const std::vector<Condition>& conditions, const PlanFacts& f) {
  const int cache_layer = f.first_layers.empty() ? 0 : *std::min_element(f.first_layers.begin(), f.first_layers.end());
  const int with_cache = f.n_layers - std::min(cache_layer, f.n_layers);
  output::Table t({"id", "condition", "manifest", "first layer", "layers per pass", "with --cache-activations"});
  t.add({"-", "control (twice: first and last)", "", "", std::to_string(f.n_layers), std::to_string(f.n_layers)});
  for (std::size_t i = 0; i < conditions.size(); ++i)
    t.add({conditions[i].id, conditions[i].label, conditions[i].pointer, std::to_string(f.first_layers[i]), std::to_string(f.n_layers),
           std::to_string(with_cache)});
  t.print(os);
  const std::size_t n = conditions.size();
  const std::size_t tokens = f.rows * f.seq_len;
  os << "plan: " << n << " condition" << (n == 1 ? "" : "s") << " and the control twice = " << n + 2 << " passes of " << f.rows
     << " rows x " << f.seq_len << " tokens (" << tokens << " tokens each), " << (n + 2) * static_cast<std::size_t>(f.n_layers)
     << " layer-passes";
  if (cache_layer > 0 && n > 0)
    os << "; with --cache-activations (cache at layer " << cache_layer << ") "
       << 2 * static_cast<std::size_t>(f.n_layers) + n * static_cast<std::size_t>(with_cache) << " layer-passes";
  os << "\n";
  if (f.timed_tokens > 0 && f.total_tokens > 0) {
    // seconds per token of a pass, times the tokens of every pass; with the cache a pass still runs
    // the embedding, the head and the scoring in full, so no cached figure is given
    const double per_token = f.timed_seconds / static_cast<double>(f.timed_tokens);
    const double full = per_token * static_cast<double>(f.total_tokens) * static_cast<double>(n + 2);
    os << "estimate: " << duration(full) << " on this machine (" << io::terminalSafe(f.machine, 200) << "; one pass of "
       << f.timed_rows << " row" << (f.timed_rows == 1 ? "" : "s") << " took " << output::significant(f.timed_seconds, 3) << " s)";
    if (cache_layer > 0 && n > 0) os << "; less with --cache-activations";
    if (!f.unmeasured.empty()) os << "; " << f.unmeasured << " not timed: more";
    os << "\n";
  }
  for (const Equivalence& e : equivalences(conditions, f.n_layers)) {
    const auto c = std::find_if(conditions.begin(), conditions.end(), [&](const Condition& x) { return x.id == e.id; });
    os << (e.sanity ? "check: " : "warning: ") << e.id << " (" << io::terminalSafe(c->label, 200) << ") equals " << (e.same == "control" ? std::string("the control") : e.same)
       << " by construction: " << e.why << "\n";
  }
  os << "manifest " << m.path << " (sha256 " << m.sha256 << "): no condition was run, nothing was written\n";
}

}  // namespace omn::intervene
