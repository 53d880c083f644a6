// The warnings a reviewer must see first, from the documents of a report: an unverified checkpoint,
// a model pass's other inputs read without a pin (tokens, offsets, config.json), shards not all
// verified, one sequence (no interval), a control that did not reproduce, NaN conditions, failed
// restores, effects below the noise floor, a shard taken for the whole, an unrecorded tokenizer,
// historical rows, incomplete arms, unhashed checkpoints of a track, a run that diverged or did not
// finish, a profile of another checkpoint.
#include <cmath>

#include "omn/output/table.h"
#include "omn/report/html.h"

namespace omn::report {
using output::general;

namespace {

void sweepWarnings(std::vector<std::string>& w, const documents::InterventionDocument& r) {
  if (!r.control.reproduced_bitwise)
    w.push_back("The closing control differs from the opening one (largest NLL difference " +
                general(r.control.max_abs_nll_difference.value_or(INFINITY)) + ").");  // empty: infinite
  for (const auto& c : r.conditions) {
    if (c.result.non_finite) w.push_back("Condition " + c.id + " (" + c.label + ") has a non-finite perplexity.");
    if (!c.restore.ok) w.push_back("Condition " + c.id + ": the gains did not restore bitwise.");
    if (c.vs_control.below_noise_floor.value_or(false) && r.noise_floor)
      w.push_back("Condition " + c.id + " (" + c.label + "): its |ΔNLL| is below the noise floor of " + general(r.noise_floor->nats_per_token) +
                  " nats/token (" + r.noise_floor->basis + "): confirm it in fp32 before reading it as an effect.");
  }
}

void shardWarning(std::vector<std::string>& w, const std::optional<documents::ShardOf>& shard, bool study) {
  if (!shard) return;
  const std::string i = std::to_string(shard->index), n = std::to_string(shard->count);
  w.push_back("This is shard " + i + " of " + n + " (--shard " + i + "/" + n + "): it holds only its share of the " +
              (study ? "runs" : "conditions") + "; merge every shard (omn-audit merge) for the whole " + (study ? "study." : "sweep."));
}

// A result of a model pass: what its rows and tokens stand on, and what its checkpoint's shards did.
void evaluatedWarnings(std::vector<std::string>& w, const documents::TokensRecord& tokens, const documents::SelectionRecord& selection,
                       const documents::Scores& scores, const documents::EvalCheckpoint& checkpoint, bool sweep) {
  if (checkpoint.verified && *checkpoint.verified != "all")
    w.push_back("The checkpoint's shards were not all verified (checkpoint.verified: " + *checkpoint.verified + "): " +
                (sweep ? "pin every shard in the manifest's /checkpoint/shards to call the result verified."
                       : "eval pins the index only; run the evaluation from a manifest that pins every shard (/checkpoint/shards, "
                         "intervene) to call it verified."));
  if (scores.sequences.nll_sum.size() < 2)
    w.push_back("One sequence was scored: no interval and no p-value (a bootstrap over sequences needs at least two rows).");
  if (!tokens.tokenizer_revision)
    w.push_back("The tokenizer revision was not recorded (eval without --tokenizer-revision): the token set's meaning rests on "
                "its SHA-256 alone; not the reproduction standard.");
  if (selection.row_form == "historical")
    w.push_back("Rows in the historical form (EOS stripped, no document metadata): comparable with the historical record, "
                "but only a held-out set gives a publishable estimate.");
}

void unverifiedCheckpoints(std::vector<std::string>& w, const documents::Provenance& pv) {
  for (const auto& i : pv.inputs)
    if (i.role == "checkpoint" && !i.verified) w.push_back("The checkpoint " + i.path + " was not verified against an expected SHA-256.");
}

// A model pass's other inputs: each one that changes the numbers and was read without a pin (the
// token set, its offsets, a model folder's config.json), with the pin that verifies it.
void unverifiedInputs(std::vector<std::string>& w, const documents::Provenance& pv, bool sweep) {
  for (const auto& i : pv.inputs) {
    if (i.role == "checkpoint" || i.role == "manifest" || i.verified) continue;
    const std::string pin = i.role == "tokens"         ? (sweep ? "/tokens/sha256" : "--tokens-sha256")
                            : i.role == "offsets"      ? (sweep ? "/tokens/offsets_sha256" : "--offsets-sha256")
                            : i.role == "model-config" ? (sweep ? "/checkpoint/config_sha256" : "--config-sha256")
                                                       : "";
    w.push_back("The " + i.role + " file " + i.path + " was not verified against an expected SHA-256" + (pin.empty() ? "" : " (" + pin + " pins it)") + ".");
  }
}

void runWarnings(std::vector<std::string>& w, const documents::TrainDocument& run) {
  if (run.diverged) w.push_back("The training run diverged: " + documents::jsonText(run.divergence) + ".");
  else if (run.status != "finished")
    w.push_back("The training run is " + run.status + ", not finished: " + std::to_string(run.steps_done) + " of " + std::to_string(run.steps) +
                " steps.");
}

}  // namespace

std::vector<std::string> reportWarnings(const ReportInput& in) {
  std::vector<std::string> w;
  if (const documents::Provenance* pv = resultProvenance(in)) unverifiedCheckpoints(w, *pv);
  if (in.profile) unverifiedCheckpoints(w, in.profile->provenance);
  if (in.sweep) sweepWarnings(w, *in.sweep);
  if (in.sweep) shardWarning(w, in.sweep->shard, false);
  if (in.study) shardWarning(w, in.study->shard, true);
  if (in.sweep) evaluatedWarnings(w, in.sweep->tokens, in.sweep->selection, in.sweep->control.open.result, in.sweep->checkpoint, true);
  if (in.eval) evaluatedWarnings(w, in.eval->tokens, in.eval->selection, in.eval->result, in.eval->checkpoint, false);
  if (in.sweep) unverifiedInputs(w, in.sweep->provenance, true);
  if (in.eval) unverifiedInputs(w, in.eval->provenance, false);
  if (in.study)
    for (const auto& a : in.study->arms)
      if (!a.complete) w.push_back("Arm " + a.arm + " is incomplete: not every learning rate has a run for every seed.");
  if (in.track && in.track->summary.unverified > 0)
    w.push_back(std::to_string(in.track->summary.unverified) + " of " + std::to_string(in.track->summary.checkpoints) +
                " tracked checkpoints were read without hashing (track --digests, or a run's train.json, verifies them).");
  if (in.run) runWarnings(w, *in.run);
  const std::string* result_checkpoint = in.sweep ? &in.sweep->checkpoint.sha256 : in.eval ? &in.eval->checkpoint.sha256 : nullptr;
  if (in.profile && result_checkpoint && in.profile->checkpoint.sha256 != *result_checkpoint)
    w.push_back("The profile and the result come from different checkpoints.");
  return w;
}

}  // namespace omn::report
