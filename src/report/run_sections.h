// Internal to the report: the sections of a track of checkpoints (omn-audit/track@1) and of one
// training run (omn-audit/train@1): their summary rows and tables, from the documents alone.
#pragma once
#include <nlohmann/json.hpp>

#include "grid.h"

namespace omn::report {

// The findings a reader looks for first, appended to the summary.
void trackSummaryRows(Grid& g, const nlohmann::json& track);
void runSummaryRows(Grid& g, const nlohmann::json& train);

Grid trackGrid(const nlohmann::json& track);     // one row per checkpoint
Grid runGrid(const nlohmann::json& train);       // the run's record: steps, losses, time
Grid runEvalsGrid(const nlohmann::json& train);  // one row per held-out evaluation

}  // namespace omn::report
