// omn-audit train --config C --out DIR [--resume] [--force]: train an OMN-style model from scratch.
#include <iostream>

#include "model_commands.h"
#include "training_heap.h"
#include "omn/errors.h"
#include "omn/output/progress.h"
#include "omn/output/table.h"
#include "omn/train/trainer.h"
#include "../named_config.h"
#include "omn/train/resume.h"
#include "../plugin_commands.h"
#include "stop_signal.h"
#include "machine_hints.h"

namespace omn::cli {

namespace {

// What the run came to: its status and size, the model, the losses, and where its files are.
void printRunSummary(std::ostream& out, const std::string& dir, const documents::TrainDocument& doc) {
  auto num = [](const std::optional<double>& v) { return v ? output::fixed(*v, 4) : std::string("-"); };
  out << "run        " << dir << " (" << doc.status << " after " << doc.steps_done << " of " << doc.steps << " steps, " << doc.tokens_seen
      << " tokens)\n";
  out << "model      " << doc.model.parameters << " parameters, QK-norm " << (doc.model.qk_norm ? "on" : "off") << ", optimizer "
      << doc.optimizer.kind << "\n";
  out << "loss       L0 (held-out at step 0) " << num(doc.initial_loss) << ", final train " << num(doc.final_train_loss) << ", held-out "
      << num(doc.final_heldout_loss) << " (unigram baseline " << num(doc.heldout_unigram_cross_entropy) << ")\n";
  if (doc.diverged && doc.divergence)
    out << "diverged   at step " << doc.divergence->step << ": " << doc.divergence->reason << "\n";
  else
    out << "wrote      " << dir << "/final.pt and " << dir << "/train.json\n";
}

}  // namespace

Command addTrainCommand(CLI::App& root) {
  auto a = std::make_shared<train::TrainOptions>();
  auto config = std::make_shared<std::string>();
  auto corpus = std::make_shared<std::string>();
  auto* app = root.add_subcommand("train", pluginCommandHelp("train"));
  app->footer("Examples:\n"
              "  omn-audit train --config tiny -o runs/tiny --threads 1\n"
              "  omn-audit train --config tiny -o runs/tiny --resume");
  app->add_option("--config", *config,
                  "training config (omn-audit/train-config@1): a file, or the name of one that ships with omn-audit (tiny, small: "
                  "configs/train/)")
      ->required();
  app->add_option("--out,-o,--output", a->out_dir, "run directory: checkpoints/, final.pt, train.json, log.jsonl (-o/--output as in every command)")->required();
  app->add_option("--corpus", *corpus, "use this corpus (directory or corpus.json) instead of the config's /corpus");
  app->add_flag("--resume", a->resume, "continue the run in --out from its last checkpoint (same config, same corpus); a run that finished is left as it is (exit 0)");
  app->add_flag("--force", a->force, "start over in an --out that holds a run (its files are replaced)");
  app->add_option("--threads", a->threads, "CPU threads (0: OMP_NUM_THREADS when set, else every online CPU)")
      ->check(CLI::Range(0, 4096));
  app->add_option("--dump-grads", a->dump_grads, "write the first step's gradients here (torch.save; parity checks)");
  return {app, [=] {
            a->config = train::loadTrainConfig(locateConfig(*config, "train", "--config").path);
            if (!corpus->empty()) a->config.corpus = *corpus;
            if (a->resume && a->force) throw UsageError("--resume and --force: choose one");
            a->progress = output::ProgressBar::stderrIsTerminal();
            keepFreedMemoryInHeap();
            a->stop = stopOnSignals();
            a->resume_command = "omn-audit train --config " + *config + " --out " + a->out_dir +
                                (corpus->empty() ? "" : " --corpus " + *corpus) + " --resume";
            warnAboutMachine(a->threads, pluginHost());
            // --resume of a finished run (its final checkpoint verified): nothing left to run, as study --resume
            const std::optional<documents::TrainDocument> done = a->resume ? train::finishedRun(train::RunPaths(a->out_dir), a->config) : std::nullopt;
            if (done) std::cout << "resume     the run finished already; nothing to resume (its final.pt matches train.json)\n";
            const documents::TrainDocument doc = done ? *done : train::runTraining(*a);
            printRunSummary(std::cout, a->out_dir, doc);
            return 0;
          }};
}

}  // namespace omn::cli
