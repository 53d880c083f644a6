// A track document (omn-audit/track@1) as text: the terminal table (one row per checkpoint) and the
// CSV (one row per checkpoint × layer × role). No libtorch.
#pragma once
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace omn::report {

void printTrack(std::ostream& out, const nlohmann::json& track);
std::string trackCsv(const nlohmann::json& track);

}  // namespace omn::report
