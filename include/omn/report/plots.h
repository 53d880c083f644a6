// Figures from the documents (read as their structs, documents/), never from the model: a profile (omn-audit/profile@1), a sweep
// result (omn-audit/intervention@1), a training study (omn-audit/study@1), a track of checkpoints
// (omn-audit/track@1) or one training run (omn-audit/train@1 with its log). Every figure has axis labels with units, a legend, and a
// caption with the checkpoint and token-set hash prefixes, so it says where it came from when
// pasted alone. Same document → byte-identical SVG. No libtorch.
#pragma once
#include <string>
#include <vector>

#include "omn/documents/intervention_document.h"
#include "omn/documents/profile_document.h"
#include "omn/documents/study_document.h"
#include "omn/documents/track_document.h"
#include "omn/documents/train_document.h"

namespace omn::report {

struct Figure {
  std::string name;     // file name: "profile-layer-means.svg"
  std::string title;
  std::string caption;  // one line: what it shows and where it came from
  std::string svg;
  std::string csv;      // the data drawn, tidy: series,x,x_label,y,y_low,y_high (written beside the SVG)
  std::string csvName() const { return name.substr(0, name.size() - 4) + ".csv"; }
};

std::vector<Figure> profileFigures(const documents::ProfileDocument& profile);
std::vector<Figure> sweepFigures(const documents::InterventionDocument& results);
// `runs`: the run ids whose trajectories to draw; empty: the runs at the smaller of the arms'
// largest stable learning rates and at the next one up (first seed). Throws UsageError for an
// unknown id.
std::vector<Figure> studyFigures(const documents::StudyDocument& study, const std::vector<std::string>& runs = {});
std::vector<Figure> trackFigures(const documents::TrackDocument& track);
// One training run: its record (train.json, checked by train::checkRunRecord) and its log's records
// (train::parseLog): loss, learning rates, and per layer the largest attention logit and (QK-norm
// on) the Q/K gain means, over the steps.
std::vector<Figure> runFigures(const documents::TrainDocument& train, const std::vector<documents::TrainLogRecord>& log);

}  // namespace omn::report
