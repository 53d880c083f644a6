// omn-audit profile CKPT: verify, show the envelope, profile every Q/K gain; with --baseline, the
// CI regression check (exit 3 on drift).
#include <spdlog/spdlog.h>

#include <iostream>
#include <optional>

#include "baseline.h"
#include "commands.h"
#include "digest_option.h"
#include "omn/audit/digest_list.h"
#include "omn/audit/profile_run.h"
#include "omn/audit/regression.h"
#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/model/preset.h"
#include "omn/output/json_file.h"
#include "omn/output/progress.h"
#include "omn/report/profile_text.h"

namespace omn::cli {

namespace {
struct ProfileArgs {
  audit::ProfileRequest req;
  std::string json_out, csv_out, baseline, tolerance;
  std::vector<std::string> count_ranges;
  bool force = false, quiet_tables = false, all_rows = false;
};

// The checks on the options and outputs, then the baseline and tolerance read (a typo must not
// cost a 3.5 GB hash), the profile, its tables, the gate's verdict, the documents written.
int runProfile(ProfileArgs& a) {
  applyCountRanges(a.count_ranges, a.req.options);
  if (a.baseline.empty() && !a.tolerance.empty()) throw UsageError("--tolerance needs --baseline");
  if (a.baseline.empty() && a.all_rows) throw UsageError("--all needs --baseline (it lists the checked statistics)");
  output::checkDistinctOutputs({{"--json", a.json_out}, {"--csv", a.csv_out}});
  // --json - / --csv -: standard output carries that document alone; the text goes to stderr
  std::ostream& text = output::isStdout(a.json_out) || output::isStdout(a.csv_out) ? std::cerr : std::cout;
  if (!a.req.digests_path.empty()) a.req.digests = audit::readDigestList(a.req.digests_path);
  std::vector<std::string> inputs = {a.req.checkpoint, a.baseline, a.tolerance, a.req.digests_path};
  for (const auto& f : audit::listedFiles(a.req.digests)) inputs.push_back(f);  // each file the list names is read
  for (const auto& out : {a.json_out, a.csv_out})
    if (!out.empty()) output::checkOutputPath(out, a.force, inputs);
  std::optional<audit::Baseline> baseline;
  std::optional<documents::ToleranceDocument> tolerance;
  if (!a.baseline.empty()) baseline = loadBaseline(a.baseline);
  if (!a.tolerance.empty()) tolerance = loadTolerance(a.tolerance);
  if (baseline) checkBaselineFirst(*baseline, tolerance, a.req.options, a.baseline, a.tolerance);
  a.req.progress = output::ProgressBar::stderrIsTerminal();
  documents::ProfileDocument profile = audit::profileCheckpoint(a.req);
  if (!a.quiet_tables) report::printProfile(text, profile);
  else if (spdlog::default_logger()->should_log(spdlog::level::info))  // what was verified is silent only with -q
    report::printVerification(std::cerr, profile);
  // with a baseline, the document carries the verdict (a CI job reads it, or the exit code)
  std::optional<audit::RegressionReport> rep;
  if (baseline) {
    rep = audit::checkRegression(profile, *baseline, tolerance, a.baseline);
    profile.regression = audit::regressionVerdict(*rep, a.baseline, a.tolerance);
  }
  if (!a.json_out.empty()) output::writeFileAtomic(a.json_out, output::dumpJson(profile.toJson()));
  if (!a.csv_out.empty()) output::writeFileAtomic(a.csv_out, report::profileCsv(profile));
  if (!rep) return 0;
  text << "\n";
  report::printRegression(text, *rep, a.all_rows);
  if (rep->drifted())  // exit 3, mapped in guard.h like every other typed error
    throw RegressionFound("DRIFT: " + std::to_string(rep->drifted()) + " statistic(s) outside tolerance of " + a.baseline);
  text << "OK: every statistic within tolerance\n";
  return 0;
}

}  // namespace

Command addProfileCommand(CLI::App& root) {
  auto a = std::make_shared<ProfileArgs>();
  auto* app = root.add_subcommand("profile", "verify a checkpoint and profile all of its Q/K-norm gains");
  app->footer("Examples:\n"
              "  omn-audit profile model.pt -o profile.json --csv profile.csv\n"
              "  omn-audit profile model.safetensors --digests SHA256SUMS --top-k 20\n"
              "  omn-audit profile Qwen3-1.7B/ --no-tables -o qwen3-profile.json\n"
              "  omn-audit profile omn-1.pt --baseline omn-1-reference --all");
  app->add_option("checkpoint", a->req.checkpoint, "torch.save file (.pt/.pth/.bin), .safetensors, *.safetensors.index.json, or a Hugging Face model folder (config.json beside the weights)")
      ->required();
  app->add_option("--sha256", a->req.expected_sha256, "expected SHA-256: a mismatch is exit 4 and nothing is reported")->check(givenDigest);
  app->add_option("--digests", a->req.digests_path,
                  "sha256sum-style list (\"<hex>  <path>\"): pins the checkpoint and, for a sharded index, each shard "
                  "(a mismatch is exit 4 naming the file); without it a shard is hashed but not verified")
      ->check(givenDigestList);
  app->add_option("--preset", a->req.preset, "built-in preset (" + model::builtinPresetList() + ") or a preset JSON file; default: detect");
  app->add_option("--state-key", a->req.state_key, "where the state dict sits in the envelope (\"model\", \"a/b\"); default: find it");
  app->add_option("--threshold", a->req.options.threshold, "report the share of gains above this value")->default_val(1.43);
  app->add_option("--hist-edges", a->req.options.hist_edges, "histogram edges, increasing")->delimiter(',')
      ->default_str("0,1,2,4,8,16,32");
  app->add_option("--hist-pivot", a->req.options.pivot, "an edge <= pivot belongs to the bin on its right")->default_val(1.0);
  addCountRangeOption(*app, a->count_ranges);
  app->add_option("--top-k", a->req.options.top_k, "how many of the largest coordinates to list")->default_val(10);
  app->add_option("--json,-o,--output", a->json_out, "write the profile document (omn-audit/profile@1) here (-o/--output as in every command)");
  app->add_option("--csv", a->csv_out, "write one row per layer and role here");
  app->add_option("--baseline", a->baseline,
                  "compare against an earlier --json output or a reference (configs/omn-1-reference-profile.json, "
                  "or the embedded 'omn-1-reference'); drift is exit 3");
  app->add_option("--tolerance", a->tolerance, "tolerances per statistic (omn-audit/tolerance@1)");
  app->add_flag("--all", a->all_rows, "with --baseline: list every checked statistic, not only drifted ones");
  app->add_flag("--no-tables", a->quiet_tables, "print no profile tables (the checkpoint's digest and whether it was verified still go to stderr, and the regression verdict)");
  app->add_flag("--force", a->force, "overwrite existing --json/--csv outputs");
  return {app, [a]() -> int { return runProfile(*a); }};
}

}  // namespace omn::cli
