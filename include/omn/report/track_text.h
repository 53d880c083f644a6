// A track document (omn-audit/track@1) as text: the terminal table (one row per checkpoint) and the
// CSV (one row per checkpoint × layer × role). No libtorch.
#pragma once
#include <ostream>
#include <string>

#include "omn/documents/track_document.h"

namespace omn::report {

void printTrack(std::ostream& out, const documents::TrackDocument& track);
std::string trackCsv(const documents::TrackDocument& track);

}  // namespace omn::report
