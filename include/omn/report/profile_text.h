// A profile document as people read it: text tables on stdout, and CSV rows per layer.
#pragma once
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "omn/audit/regression.h"
#include "omn/documents/profile_document.h"

namespace omn::report {

void printProfile(std::ostream& os, const documents::ProfileDocument& profile);
// The checkpoint and what its digest checked: all that --no-tables still prints.
void printVerification(std::ostream& os, const documents::ProfileDocument& profile);
std::string profileCsv(const documents::ProfileDocument& profile);  // one row per layer: Q and K moments, asymmetry
void printRegression(std::ostream& os, const audit::RegressionReport& rep, bool all_rows);

// A profile's count ranges (/statistics/counts) as (label, count), lowest range first: the rows the
// text and the HTML report show.
std::vector<std::pair<std::string, long long>> countRows(const documents::ProfileStatistics& statistics);

}  // namespace omn::report
