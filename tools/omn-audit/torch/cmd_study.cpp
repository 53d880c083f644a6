// omn-audit study --manifest M [--resume|--force] [--shard i/N]: a grid of training runs (QK-norm
// on/off × learning rates × seeds), LR sensitivity and the matched comparison.
#include <iostream>

#include "model_commands.h"
#include "shard_option.h"
#include "training_heap.h"
#include "omn/model/threads.h"
#include "omn/output/json_file.h"
#include "omn/errors.h"
#include "omn/output/progress.h"
#include "omn/output/table.h"
#include "omn/study/study_run.h"
#include "../named_config.h"
#include "../plugin_commands.h"
#include "stop_signal.h"
#include "machine_hints.h"

namespace omn::cli {

namespace {

std::string num(const std::optional<double>& v, int digits) { return v ? output::fixed(*v, digits) : "-"; }
std::string sig(const std::optional<double>& v) { return v ? output::significant(*v, 3) : "-"; }

}  // namespace

void printStudySummary(std::ostream& out, const documents::StudyDocument& doc) {
  output::Table t({"arm", "runs", "diverged", "LR sensitivity", "largest stable LR", "best LR", "best held-out loss", "seed sd"});
  for (const documents::StudyArm& a : doc.arms)
    t.add({a.arm, std::to_string(a.runs), std::to_string(a.diverged), num(a.lr_sensitivity, 4), sig(a.largest_stable_lr), sig(a.best_lr),
           num(a.best_loss, 4), num(a.seed_spread, 4)});
  t.print(out);
}

Command addStudyCommand(CLI::App& root) {
  auto o = std::make_shared<study::StudyOptions>();
  auto manifest = std::make_shared<std::string>();
  auto shard = std::make_shared<std::string>();
  auto* app = root.add_subcommand("study", pluginCommandHelp("study"));
  app->footer("Examples:\n"
              "  omn-audit study --manifest qk-lr-tiny --shard 0/2 -o cell-0.json\n"
              "  omn-audit study --manifest qk-lr-tiny --shard 1/2 -o cell-1.json\n"
              "  omn-audit study --manifest qk-lr-tiny --threads 1 --resume");
  app->add_option("--manifest", *manifest,
                  "study manifest (omn-audit/study-manifest@1): a file, or the name of one that ships with omn-audit (qk-lr-tiny, "
                  "ablation-tiny, ...: configs/studies/), whose outputs then go to the current directory")
      ->required();
  app->add_option("--json,-o,--output", o->output_json, "the study document (omn-audit/study@1; default: the manifest's /output/json)");
  app->add_option("--csv", o->output_csv, "also one CSV row per run");
  app->add_flag("--resume", o->resume, "continue an interrupted study: finished runs are kept, the run in flight continues from its last checkpoint");
  app->add_flag("--force", o->force, "overwrite the outputs and replace run directories of another study");
  app->add_option("--shard", *shard, "run only cells k with k mod N == i (then omn-audit merge)");
  app->add_option("--threads", o->threads, "CPU threads per run (0: OMP_NUM_THREADS when set, else every online CPU)")->check(CLI::Range(0, model::kMaxThreads));
  return {app, [=] {
            if (o->resume && o->force) throw UsageError("--resume and --force: choose one");
            if (!shard->empty()) std::tie(o->shard_index, o->shard_count) = parseShard(*shard);
            const ConfigArgument given = locateConfig(*manifest, "studies", "--manifest");
            // a shipped study, by name: its document and runs here, never into the installation
            const study::StudyManifest m = study::loadStudyManifest(
                given.path, given.by_name ? study::OutputPlacement::CurrentDirectory : study::OutputPlacement::AsWritten);
            o->progress = output::ProgressBar::stderrIsTerminal();
            keepFreedMemoryInHeap();
            o->stop = stopOnSignals();
            warnAboutMachine(o->threads, pluginHost());
            const documents::StudyDocument doc = study::runStudy(m, *o);
            std::ostream& text = output::isStdout(o->output_csv) ? std::cerr : std::cout;  // --csv -: stdout is the CSV's
            printStudySummary(text, doc);
            text << "study      " << doc.runs.size() << " runs in " << doc.runs_dir << "\n";
            return 0;
          }};
}

}  // namespace omn::cli
