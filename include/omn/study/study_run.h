// omn-audit study: every cell of a study manifest trained with omn-audit train's own loop, each in
// its run directory, each finished run journaled (so kill -9 + --resume redoes nothing finished and
// continues the run in flight from its last checkpoint), then the study document assembled.
#pragma once
#include <functional>
#include <string>

#include "omn/documents/study_document.h"
#include "omn/study/study_manifest.h"

namespace omn::study {

struct StudyOptions {
  std::string output_json, output_csv;  // override the manifest's /output
  bool force = false, resume = false, progress = false;
  int shard_index = 0, shard_count = 1;
  int threads = 0;
  std::function<bool()> stop;  // SIGINT/SIGTERM: the run in flight stops between two steps, exit 130
};

// Trains (or reuses) every cell of this shard, writes the study document (from its struct) and the
// CSV; returns the document.
documents::StudyDocument runStudy(const StudyManifest& m, const StudyOptions& o);

}  // namespace omn::study
