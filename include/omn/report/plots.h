// Figures from the JSON artifacts, never from the model: a profile (omn-audit/profile@1), a sweep
// result (omn-audit/intervention@1), a training study (omn-audit/study@1), a track of checkpoints
// (omn-audit/track@1) or one training run (omn-audit/train@1 with its log). Every figure has axis labels with units, a legend, and a
// caption with the checkpoint and token-set hash prefixes, so it says where it came from when
// pasted alone. Same JSON → byte-identical SVG. No libtorch.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::report {

struct Figure {
  std::string name;     // file name: "profile-layer-means.svg"
  std::string title;
  std::string caption;  // one line: what it shows and where it came from
  std::string svg;
  std::string csv;      // the data drawn, tidy: series,x,x_label,y,y_low,y_high (written beside the SVG)
  std::string csvName() const { return name.substr(0, name.size() - 4) + ".csv"; }
};

std::vector<Figure> profileFigures(const nlohmann::json& profile);
std::vector<Figure> sweepFigures(const nlohmann::json& results);
// `runs`: the run ids whose trajectories to draw; empty: the runs at the smaller of the arms'
// largest stable learning rates and at the next one up (first seed). Throws UsageError for an
// unknown id.
std::vector<Figure> studyFigures(const nlohmann::json& study, const std::vector<std::string>& runs = {});
std::vector<Figure> trackFigures(const nlohmann::json& track);
// One training run: its record (train.json, checked by train::checkRunRecord) and its log's records
// (train::parseLog): loss, learning rates, and per layer the largest attention logit and (QK-norm
// on) the Q/K gain means, over the steps.
std::vector<Figure> runFigures(const nlohmann::json& train, const std::vector<nlohmann::json>& log);

// By schema; throws UsageError naming the file for anything else.
// `runs` applies to a study only (see studyFigures); for anything else it must be empty.
std::vector<Figure> figuresFor(const nlohmann::json& doc, const std::string& path, const std::vector<std::string>& runs = {});

}  // namespace omn::report
