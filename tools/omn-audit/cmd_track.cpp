// omn-audit track CKPT|DIR...: the Q/K gains of many checkpoints as a trajectory over training
// steps; with --baseline, drift flagged per step (exit 3 when any step drifted).
#include <iostream>

#include "baseline.h"
#include "commands.h"
#include "digest_option.h"
#include "omn/audit/digest_list.h"
#include "omn/audit/track.h"
#include "omn/errors.h"
#include "omn/model/preset.h"
#include "omn/output/json_file.h"
#include "omn/report/track_text.h"

namespace omn::cli {

Command addTrackCommand(CLI::App& root) {
  auto r = std::make_shared<audit::TrackRequest>();
  auto json_out = std::make_shared<std::string>();
  auto csv_out = std::make_shared<std::string>();
  auto order = std::make_shared<std::string>("step");
  auto force = std::make_shared<bool>(false);
  auto* app = root.add_subcommand("track", "profile the Q/K gains of many checkpoints (a run's steps) as a trajectory; drift per step");
  app->footer("Examples:\n"
              "  omn-audit track runs/tiny -o track.json --csv track.csv\n"
              "  omn-audit track runs/tiny/checkpoints/step-??????.pt --digests checkpoints.sha256 --baseline profile.json  # exit 3 on drift\n"
              "  omn-audit track a.pt b.pt c.pt --order given --count-range '(32,inf)'");
  app->add_option("checkpoints", r->inputs, "checkpoint files and directories (a run directory: checkpoints/*.pt and final.pt)")->required();
  app->add_option("--digests", r->digests_path,
                  "sha256sum-style list (\"<hex>  <path>\"): the checkpoints it names are hashed and verified (mismatch: exit 4); "
                  "the others are read without hashing")
      ->check(givenDigestList);
  app->add_option("--order", *order, "step (the step in each checkpoint's metadata) | given (the order on the command line)")
      ->check(CLI::IsMember({"step", "given"}));
  app->add_option("--preset", r->preset, "built-in preset (" + model::builtinPresetList() + ") or a preset JSON file; default: detect");
  app->add_option("--state-key", r->state_key, "where the state dict sits in the envelope; default: find it");
  app->add_option("--threshold", r->options.threshold, "count the gains above this value")->default_val(1.43);
  auto count_ranges = std::make_shared<std::vector<std::string>>();
  addCountRangeOption(*app, *count_ranges);
  app->add_option("--baseline", r->baseline_path, "flag each step's drift against this profile (--json of profile) or reference");
  app->add_option("--tolerance", r->tolerance_path, "tolerances per statistic (omn-audit/tolerance@1), with --baseline");
  app->add_option("--json,-o,--output", *json_out, "write the track document (omn-audit/track@1) here (-o/--output as in every command)");
  app->add_option("--csv", *csv_out, "write one row per checkpoint, layer and role here");
  app->add_flag("--force", *force, "overwrite existing --json/--csv outputs");
  return {app, [=] {
            if (!r->tolerance_path.empty() && r->baseline_path.empty()) throw UsageError("--tolerance needs --baseline");
            applyCountRanges(*count_ranges, r->options);
            output::checkDistinctOutputs({{"--json", *json_out}, {"--csv", *csv_out}});
            // --json - / --csv -: standard output carries that document alone; the text goes to stderr
            std::ostream& text = output::isStdout(*json_out) || output::isStdout(*csv_out) ? std::cerr : std::cout;
            r->order = *order == "given" ? audit::TrackOrder::Given : audit::TrackOrder::Step;
            // the checkpoints, and what is read through each input (a run directory's train.json)
            const std::vector<std::string> checkpoints = audit::expandTrackInputs(r->inputs);
            std::vector<std::string> inputs = checkpoints;
            inputs.insert(inputs.end(), r->inputs.begin(), r->inputs.end());
            for (const auto& p : {r->baseline_path, r->tolerance_path, r->digests_path})
              if (!p.empty()) inputs.push_back(p);
            // everything parsed before the first checkpoint is read; each file the list names is read
            if (!r->digests_path.empty()) r->digests = audit::readDigestList(r->digests_path);
            for (const auto& f : audit::listedFiles(r->digests)) inputs.push_back(f);
            for (const auto& out : {*json_out, *csv_out})
              if (!out.empty()) output::checkOutputPath(out, *force, inputs);
            if (!r->baseline_path.empty()) r->baseline = loadBaseline(r->baseline_path);
            if (!r->tolerance_path.empty()) r->tolerance = loadTolerance(r->tolerance_path);
            if (r->baseline) checkBaselineFirst(*r->baseline, r->tolerance, r->options, r->baseline_path, r->tolerance_path);
            const documents::TrackDocument track = audit::trackCheckpoints(*r, checkpoints);
            report::printTrack(text, track);
            if (!json_out->empty()) output::writeFileAtomic(*json_out, output::dumpJson(track.toJson()));
            if (!csv_out->empty()) output::writeFileAtomic(*csv_out, report::trackCsv(track));
            if (track.summary.drifted.value_or(0) > 0)
              throw RegressionFound("DRIFT: " + std::to_string(*track.summary.drifted) + " checkpoint(s) outside tolerance of " +
                                    r->baseline_path);
            return 0;
          }};
}

}  // namespace omn::cli
