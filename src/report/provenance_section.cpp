// The provenance section of the report: for each document, which build wrote it, on what, from which
// inputs; for a result of a model pass, also the tokenizer, the model and the rows it evaluated.
#include "sections.h"

namespace omn::report {

Grid provenanceGrid(const documents::Provenance& pv) {
  Grid g{{"field", "value"},
         {{"tool", pv.tool},
          {"version", pv.version},
          {"git_revision", pv.git_revision},
          {"model_code_fingerprint", pv.model_code_fingerprint},
          {"libtorch", pv.libtorch},
          {"device", pv.device},
          {"host_threads", std::to_string(pv.host_threads)},
          {"started_utc", pv.started_utc},
          {"finished_utc", pv.finished_utc}}};
  for (const auto& in : pv.inputs)  // (a track's checkpoint read without hashing has no digest)
    g.rows.push_back({"input: " + in.role, in.path + (in.sha256 ? "  sha256 " + *in.sha256 : "  (not hashed)") +
                                               (in.verified ? "  (verified)" : "  (not verified)")});
  return g;
}

Grid provenanceGrid(const documents::Provenance& pv, const documents::TokensRecord& tokens, const documents::EvalModel& model,
                    const documents::SelectionRecord& selection) {
  Grid g = provenanceGrid(pv);
  g.rows.push_back({"tokenizer revision", tokens.tokenizer_revision.value_or("unknown (not recorded)")});
  g.rows.push_back({"model", model.preset + ", " + model.attention + " attention, " + model.dtype + ", " + model.device});
  g.rows.push_back({"rows", std::to_string(selection.num_seqs) + " × " + std::to_string(selection.seq_len) + " tokens, " +
                                selection.row_form + ", " + selection.mode});
  return g;
}

}  // namespace omn::report
