// Internal to the report: the sections of a sweep, an eval result, a study and a profile (the
// track's and the run's are run_sections.h), and the provenance of any document -- tables and
// summary rows, from the documents' structs alone.
#pragma once
#include <string>

#include "grid.h"
#include "omn/documents/eval_document.h"
#include "omn/documents/intervention_document.h"
#include "omn/documents/profile_document.h"
#include "omn/documents/provenance.h"
#include "omn/documents/study_document.h"

namespace omn::report {

// sweep and eval results (result_sections.cpp)
Grid sweepGrid(const documents::InterventionDocument& r);     // the control, then one row per condition
bool hasReported(const documents::InterventionDocument& r);   // values reported elsewhere to show beside
Grid reportedGrid(const documents::InterventionDocument& r);  // reported against measured
std::string reportedNote(const documents::InterventionDocument& r);
Grid evalGrid(const documents::EvalDocument& r);              // one row per group of sequences
std::string ciCell(const documents::PerplexityInterval& ci, int decimals);  // "[low, high]", or why there is none
// The findings a reader looks for first, appended to the summary.
void sweepSummaryRows(Grid& g, const documents::InterventionDocument& r);
void evalSummaryRows(Grid& g, const documents::EvalDocument& r);

// a study (study_sections.cpp)
Grid studyArmsGrid(const documents::StudyDocument& s);
Grid studyComparisonGrid(const documents::StudyDocument& s);
void studySummaryRows(Grid& g, const documents::StudyDocument& s);

// a profile (profile_sections.cpp)
Grid profileSummary(const documents::ProfileDocument& p);
Grid profileLayers(const documents::ProfileDocument& p);
void profileSummaryRows(Grid& g, const documents::ProfileDocument& p);

// provenance (provenance_section.cpp): which build wrote a document, on what, from which inputs;
// for a result of a model pass, also what it evaluated
Grid provenanceGrid(const documents::Provenance& pv);
Grid provenanceGrid(const documents::Provenance& pv, const documents::TokensRecord& tokens, const documents::EvalModel& model,
                    const documents::SelectionRecord& selection);

}  // namespace omn::report
