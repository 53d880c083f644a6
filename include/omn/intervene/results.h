// The sweep result document (omn-audit/intervention@1, docs/schema/intervention.schema.json),
// assembled from raw per-condition records — by the sweep itself, and again by `merge` from
// shard outputs, so both give the same bytes. Every derived number (perplexity, CIs, paired
// differences) is recomputed here from the raw per-sequence NLL sums, into the document's struct
// (documents/intervention_document.h); JSON is written from it at the edge. No libtorch.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "omn/documents/intervention_document.h"
#include "omn/eval/bootstrap.h"
#include "omn/intervene/pass_record.h"

namespace omn::intervene {

// The control as every output names it (CSV, the text table, the report): id "control", this label.
inline constexpr const char* kControlLabel = "control (the checkpoint as is)";

struct ResultsInput {
  // what the sweep ran on and with: provenance, manifest, checkpoint, model, tokens, selection,
  // gains, cache, shard, reported, confirms (its control and conditions are assembled here)
  documents::InterventionDocument base;
  PassRecord control_open, control_close;
  std::vector<PassRecord> conditions;  // in manifest order
  eval::BootstrapSpec bootstrap;
  std::size_t family_size = 0;  // the manifest's condition count (multiplicity's m), in every shard
  // the working dtype's numerical noise floor, nats/token: an effect smaller than this is flagged
  // (vs_control.below_noise_floor) as indistinguishable from the dtype's rounding
  double noise_floor = 0;
  std::string noise_floor_basis;
  int groups = 5;
  bool exact_control = true;  // CPU: the closing control must equal the opening bitwise
};

// Throws IntegrityError when exact_control and the closing control differs from the opening one.
documents::InterventionDocument assembleResults(const ResultsInput& in);

std::string resultsCsv(const documents::InterventionDocument& results);
void printResultsTable(std::ostream& os, const documents::InterventionDocument& results);

}  // namespace omn::intervene
