// One pass of a sweep, typed: the control before and after, or one condition, with the raw numbers
// every derived figure is recomputed from (results.h). The sweep builds it, the journal stores it
// (one line, `journalLine`) and a resume reads it back; `merge` reads it back from a shard's result
// document, typed. Its journal line is written and read here only; its parts are the document's
// (documents/intervention_document.h), written by their one to_json. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/intervention_document.h"
#include "omn/eval/bootstrap.h"

namespace omn::intervene {

// A condition's identity (the document's: what it was, what it changed, the restore after it) is its
// base; a control uses only its id ("control_open", "control_close"; a condition's is "c3").
struct PassRecord : documents::ConditionIdentity {
  bool control = true;          // the checkpoint as is; else a condition
  eval::SequenceScores scores;  // per sequence: the NLL sum (NaN where it was not finite: recordedScores), the tokens scored
  double seconds = 0;
  // per layer (--mechanism) and against the control's next-token distributions (--kl: the per-sequence
  // sums of eval::divergenceSums), as the document holds them; empty when not asked for
  documents::MechanismTable mechanism;
  std::optional<documents::DivergenceSums> divergence;
  std::string gain_sha256;  // a control: the gains it ran with
  std::optional<double> reported_perplexity;  // a condition: the manifest's /reported value, shown, never computed with

  // the gains after the restore (restore.sha256) equal what they must (restore.expected)
  bool restored() const { return restore.sha256 == restore.expected; }
};

// A pass's scores as a record holds them: a sum that is not finite (+inf when the logits overflow)
// is NaN, as the journal and the document write it (null) and read it back, so a fresh pass, a
// resumed one and a merged one compute the same statistics.
eval::SequenceScores recordedScores(eval::SequenceScores s);

// What a journaled record must agree with before a resume reuses it: the digest of the pass it
// stands for in this sweep (its "sweep_sha256": the sweep's inputs, rows and the pass's own
// definition, made by the sweep), the tokens each row scores (eval::scoredTokens), and the parts
// this sweep's options give the pass: --mechanism's table (one row per layer, in order) and --kl's
// sums (every pass but the opening control, which is their reference). A record spliced from
// another sweep's journal, one whose numbers no pass can produce, or one lacking (or holding) a part
// the options call for (or do not) is refused.
struct JournalExpectation {
  std::string sweep_sha256;
  std::vector<std::int64_t> tokens;
  std::size_t mechanism_layers = 0;  // 0: no table
  bool divergence = false;
};

// The journal line of a pass, bound to its sweep by `sweep_sha256` (JournalExpectation).
nlohmann::json journalLine(const PassRecord& r, const std::string& sweep_sha256);
// A journal's record read back as the pass the sweep expects there (`control`: a control, else a
// condition); `where` names the journal and its line in errors (UsageError at the key, at /kind,
// at /sweep_sha256 for another sweep's record, at /scores for a count that is not the row's or an
// NLL sum that is negative).
PassRecord recordFromJournal(const nlohmann::json& line, const std::string& where, bool control, const JournalExpectation& expect);
// Whether a resume may reuse a journaled record: a control, or a condition whose gains restored
// bitwise (one that did not runs again). A record too damaged to tell is reused, so that
// recordFromJournal refuses it at its key instead of the sweep silently running it again.
bool reusable(const nlohmann::json& line);
// What a result document holds of a pass, read back (merge): its control pass ("open", "close") as
// `id`, or one of its conditions (a null NLL sum: NaN, as the record holds it).
PassRecord controlFromResult(const documents::ControlPass& block, const std::string& id);
PassRecord conditionFromResult(const documents::SweepCondition& condition);

// A condition's fixed part in the result document, made from its record: what it was, did and
// restored (results.cpp adds its result and statistics).
documents::SweepCondition conditionIdentity(const PassRecord& r);

}  // namespace omn::intervene
