// `omn-audit track`: the Q/K gains of many checkpoints (the steps of a training run, or any list
// or directory) as a training-health trajectory — per-layer Q and K mean/std/min/max and the
// headline statistics at every step, ordered by the step in each checkpoint's metadata, with
// drift against a baseline profile flagged per step. Each checkpoint is profiled by the same
// profileCheckpoint as `profile`; only the gain records are read unless a digest is given for it
// (then the whole file is hashed and checked). No libtorch. docs/track.md.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "omn/audit/digest_list.h"
#include "omn/audit/profile.h"
#include "omn/audit/regression.h"
#include "omn/documents/tolerance_document.h"
#include "omn/documents/track_document.h"

namespace omn::audit {

enum class TrackOrder { Step, Given };

struct TrackRequest {
  std::vector<std::string> inputs;            // checkpoints and directories (a run directory: checkpoints/ and final.pt)
  std::map<std::string, std::string> digests;  // path → expected SHA-256 (from a sha256sum-style file)
  std::string digests_path;
  std::string preset, state_key;
  ProfileOptions options;
  TrackOrder order = TrackOrder::Step;
  std::optional<Baseline> baseline;            // empty: no drift check
  std::optional<documents::ToleranceDocument> tolerance;
  std::string baseline_path, tolerance_path;
};

// The checkpoints an input names: a file as itself; a directory's checkpoint files (*.pt, *.pth,
// *.bin, *.safetensors; not the optimizer's *.optim.pt), to two levels, in name order.
std::vector<std::string> expandTrackInputs(const std::vector<std::string>& inputs);

// The track document (omn-audit/track@1) of `checkpoints`, what expandTrackInputs(req.inputs) found
// (the caller has checked its outputs against them). Throws IntegrityError on a digest mismatch.
documents::TrackDocument trackCheckpoints(const TrackRequest& req, const std::vector<std::string>& checkpoints);

}  // namespace omn::audit
