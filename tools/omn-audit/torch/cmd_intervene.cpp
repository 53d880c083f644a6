// omn-audit intervene --manifest M: a sweep of gain interventions with provenance, paired
// uncertainty, a crash-safe journal (--resume) and sharding (--shard i/N, then `merge`).
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <iostream>
#include <optional>

#include "model_commands.h"
#include "session_options.h"
#include "shard_option.h"
#include "omn/errors.h"
#include "omn/model/threads.h"
#include "omn/intervene/manifest.h"
#include "omn/intervene/ops.h"
#include "omn/io/json_reader.h"
#include "omn/intervene/plan.h"
#include "omn/intervene/results.h"
#include "omn/output/json_file.h"
#include "omn/intervene/sweep.h"
#include "omn/output/progress.h"
#include "omn/output/provenance.h"
#include "../named_config.h"
#include "../plugin_commands.h"
#include "stop_signal.h"

namespace omn::cli {

namespace {

// The time estimate's measurement: one batch of rows to warm up, then as many batches as take about
// a second, timed; a first batch over 2 s (a large model) is timed once more, warm, unless it took
// over a minute. What the sweep adds to a plain pass is named, not timed.
void timePasses(const eval::Session& s, const intervene::Manifest& m, const intervene::SweepOptions& o, intervene::PlanFacts& f) {
  c10::InferenceMode guard;
  const std::size_t batch = static_cast<std::size_t>(std::max(1, s.spec.batch));
  auto tokens = [&](std::size_t rows) {
    std::size_t t = 0;
    for (std::size_t i = 0; i < rows; ++i) t += s.rows[i].tokens.size();
    return t;
  };
  auto timed = [&](std::size_t rows) {
    const eval::Evaluator ev(*s.model, {s.rows.begin(), s.rows.begin() + static_cast<std::ptrdiff_t>(rows)}, s.path, s.spec.batch,
                             s.device);
    const auto t0 = std::chrono::steady_clock::now();
    (void)ev.score();
    f.timed_rows = rows;
    f.timed_tokens = tokens(rows);
    f.timed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  timed(std::min(s.rows.size(), batch));
  if (f.timed_seconds <= 2.0) {
    const double batches = std::ceil(1.0 / std::max(f.timed_seconds, 1e-3));
    timed(std::min(s.rows.size(), batch * static_cast<std::size_t>(batches)));
  } else if (f.timed_seconds <= 60.0) {
    timed(f.timed_rows);  // the first read the mapped weights from disk
  }
  f.total_tokens = tokens(s.rows.size());
  f.machine = output::cpuModel() + ", " + std::to_string(s.threads) + " thread" + (s.threads == 1 ? "" : "s") + ", " +
              s.device.str();
  for (auto [on, what] : {std::pair{o.kl, "--kl"}, {o.mechanism, "--mechanism"}, {m.confirm_fp32, "/model/confirm_fp32"}})
    if (on) f.unmeasured += std::string(f.unmeasured.empty() ? "" : ", ") + what;
}

// --plan: the session opened and verified, every condition checked on the gains, nothing run
int printPlan(intervene::Manifest& m, const intervene::SweepOptions& o) {
  prepareSession(m.session, pluginHost());
  auto s = eval::openSession(m.session);
  // the groups as the run will split the rows it has (/rows/up_to may leave fewer than /groups)
  eval::checkGroups(eval::resolveGroups(m.groups, m.groups_given, s->rows.size()), s->rows.size(), "manifest " + m.path + ": /groups");
  intervene::GainState gains(*s->model, *s->ck);
  gains.loadSources(m.conditions);
  const std::vector<intervene::Condition> cs = intervene::shardConditions(m.conditions, o.shard_index, o.shard_count);
  intervene::PlanFacts f;
  f.n_layers = s->config.n_layers;
  f.rows = s->rows.size();
  f.seq_len = m.session.seq_len;
  output::ProgressBar bar("plan", cs.size(), o.progress && output::ProgressBar::stderrIsTerminal(), false, "conditions");
  bar.quietFor(1.0);  // a plan that takes more than a second says how far it is
  for (std::size_t i = 0; i < cs.size(); ++i) {
    gains.check(cs[i]);
    f.first_layers.push_back(gains.firstLayer(cs[i]));
    bar.update(i + 1);
  }
  bar.finish();
  // the budget the run would refuse is refused here too
  const eval::Evaluator ev(*s->model, s->rows, s->path, s->spec.batch, s->device);
  eval::ActivationCache cache;
  (void)intervene::planMemory(cs, gains, ev, s->config.n_layers, o, cache);
  timePasses(*s, m, o, f);
  intervene::printPlan(std::cout, m, cs, f);
  return 0;
}

// The options of a second sweep into `out` (no CSV; the rest as given)
intervene::SweepOptions withOutput(intervene::SweepOptions o, const std::string& out) {
  o.output_json = out;
  o.output_csv.clear();
  return o;
}

struct InterveneArgs {
  std::string manifest, shard;
  intervene::SweepOptions o;
  bool allow_unverified = false, plan = false;
  double cache_budget_mib = 2048;
  int threads = -1;  // -1: the manifest's /model/threads
  model::DtypeRequest dtype = model::DtypeRequest::Auto;
  bool dtype_given = false;  // false: the manifest's /model/dtype
  std::optional<int> batch;                  // none: the manifest's /model/batch
  std::optional<std::size_t> num_seqs;       // none: the manifest's /rows/num_seqs
};

// The run settings given as flags, over the manifest's /model (recorded in the result's /model as
// used); errors about them then name the flag, not the manifest's pointer.
void applyRunSettings(const InterveneArgs& a, eval::SessionSpec& s) {
  if (a.threads >= 0) s.threads = a.threads;
  if (a.dtype_given) {
    s.dtype = a.dtype;
    s.names.dtype = "--dtype";
  }
  if (a.batch) {
    s.batch = *a.batch;
    s.names.batch = "--batch";
  }
}

// --num-seqs: the rows scored, over /rows/num_seqs (a smaller panel for a quick look, or a larger
// one); recorded as selection.num_seqs. The manifest's /groups must still fit in them.
void applyRows(const InterveneArgs& a, intervene::Manifest& m) {
  if (!a.num_seqs) return;
  if (m.groups_given && static_cast<std::size_t>(m.groups) > *a.num_seqs)
    throw UsageError("--num-seqs " + std::to_string(*a.num_seqs) + ": fewer rows than the manifest's /groups (" +
                     std::to_string(m.groups) + "), which split them");
  m.session.num_seqs = *a.num_seqs;
  m.session.names.num_seqs = "--num-seqs";
}

// The sweep, in inference mode (the session's weights were loaded outside it)
documents::InterventionDocument sweepInInferenceMode(const intervene::Manifest& m, eval::Session& s, const intervene::SweepOptions& o) {
  c10::InferenceMode guard;
  return intervene::runSweep(m, s, o);
}

// /model/confirm_fp32: the conditions `doc` flags below the noise floor run again in fp32, into
// o.output_json, each naming the result it confirms (`out`); the first sweep's model is released first.
int confirmInFp32(const intervene::Manifest& m, const documents::InterventionDocument& doc, std::unique_ptr<eval::Session>& s,
                  intervene::SweepOptions o, const std::string& out, std::ostream& text) {
  if (s->dtype == at::kFloat) {
    text << "confirmation: the sweep ran in fp32 already\n";
    return 0;
  }
  const std::optional<intervene::Manifest> m2 = intervene::confirmationManifest(m, doc);
  if (!m2) {
    text << "confirmation: no condition below the noise floor, nothing to confirm in fp32\n";
    return 0;
  }
  s.reset();  // one model in memory at a time
  o.shard_index = 0;  // the flagged conditions of this run, all of them
  o.shard_count = 1;
  o.confirms = documents::Confirms{io::relativeTo(out, m.path), doc.model.dtype};
  auto s2 = eval::openSession(m2->session);
  const documents::InterventionDocument doc2 = sweepInInferenceMode(*m2, *s2, o);
  text << "confirmation in fp32 of the conditions below the noise floor:\n";
  intervene::printResultsTable(text, doc2);
  text << "result: " << o.output_json << "\n";
  return 0;
}

}  // namespace

Command addInterveneCommand(CLI::App& root) {
  auto a = std::make_shared<InterveneArgs>();
  auto* app = root.add_subcommand("intervene", pluginCommandHelp("intervene"));
  app->footer("Examples:\n"
              "  omn-audit intervene --manifest tiny-demo --plan\n"
              "  omn-audit intervene --manifest tiny-demo -o sweep.json --kl --mechanism\n"
              "  omn-audit intervene --manifest tiny-demo --shard 0/2 -o sweep.shard-0.json\n"
              "  omn-audit intervene --manifest tiny-demo --shard 1/2 -o sweep.shard-1.json\n"
              "  omn-audit intervene --manifest my-sweep.json --resume");
  app->add_option("--manifest", a->manifest,
                  "the sweep (omn-audit/manifest@1, docs/manifest.md): a file, or the name of one that ships with omn-audit "
                  "(tiny-demo, mini-demo, omn1-historical, omn1-bridge, omn1-reproduction), whose outputs then go to the current directory")
      ->required();
  app->add_option("--json,--output,-o", a->o.output_json, "result JSON (default: the manifest's /output/json); --json as in profile, eval and track");
  app->add_option("--csv", a->o.output_csv, "one CSV row per condition (default: the manifest's /output/csv; with -o, none unless --csv names one)");
  app->add_flag("--force", a->o.force, "overwrite existing outputs");
  app->add_flag("--resume", a->o.resume, "continue an interrupted sweep from its journal (inputs must match)");
  app->add_flag("--allow-unverified", a->allow_unverified, "accept a manifest whose checkpoint has no sha256");
  app->add_option("--shard", a->shard, "run shard i of N (i/N): conditions k with k mod N == i, plus the control");
  app->add_flag("--cache-activations", a->o.cache_activations,
                "keep the residual stream entering the first touched layer from the control pass; later conditions start there");
  app->add_option("--cache-budget", a->cache_budget_mib, "memory budget of the activation cache, MiB")->default_val(2048)
      ->check(finiteNonNegative);
  app->add_option("--threads", a->threads,
                  "CPU threads, over the manifest's /model/threads (0: OMP_NUM_THREADS when set, else every online CPU; "
                  "recorded as model.threads)")
      ->check(CLI::Range(0, model::kMaxThreads));
  addChoice(app, "--dtype", a->dtype, model::kDtypeRequests, "working dtype, over the manifest's /model/dtype; recorded as model.dtype")
      ->each([a](const std::string&) { a->dtype_given = true; })
      ->default_str("");
  app->add_option("--batch", a->batch,
                  "rows per forward pass, over the manifest's /model/batch (0: about 2,048 tokens a pass; recorded as model.batch)")
      ->check(CLI::Range(0, eval::kMaxBatch));
  app->add_option("--num-seqs", a->num_seqs, "rows to score, over the manifest's /rows/num_seqs (recorded as selection.num_seqs)")
      ->check(CLI::Range(std::size_t{1}, static_cast<std::size_t>(eval::kMaxNumSeqs)));
  app->add_flag("--mechanism", a->o.mechanism, "record attention entropy, max logit and Q/K RMS per layer and condition");
  app->add_flag("--kl", a->o.kl,
                "compare each condition's next-token distributions with the control's: KL, top-1 agreement, change in p(correct) "
                "(keeps the control's final hidden states, within --cache-budget)");
  app->add_flag("--plan", a->plan,
                "verify the inputs, check every condition and print the expanded conditions, their cost, the time the sweep would "
                "take (from the control timed on a few rows) and the ones equal by construction; write nothing");
  return {app, [a] {
            const ConfigArgument given = locateConfig(a->manifest, "manifests", "--manifest");
            intervene::Manifest m = intervene::loadManifest(given.path, a->allow_unverified);
            if (given.by_name) {  // a shipped manifest: its outputs here, never into the installation
              m.output_json = outputInCwd(m.output_json);
              m.output_csv = outputInCwd(m.output_csv);
            }
            applyRunSettings(*a, m.session);
            applyRows(*a, m);
            if (!a->shard.empty()) std::tie(a->o.shard_index, a->o.shard_count) = parseShard(a->shard);
            a->o.cache_budget_bytes = static_cast<std::size_t>(a->cache_budget_mib * 1024 * 1024);
            a->o.progress = true;
            if (a->plan) return printPlan(m, a->o);
            // outputs checked before the checkpoint is hashed: a typo must not cost the hash
            const std::vector<std::string> inputs = intervene::inputFiles(m);
            const std::string out = intervene::checkSweepOutputs(m, a->o, inputs).first;
            // /model/confirm_fp32: the conditions below the noise floor run again in fp32, into OUT.fp32.json
            const std::string confirm_out = m.confirm_fp32 ? intervene::confirmationPath(out) : "";
            if (!confirm_out.empty()) intervene::checkSweepOutputs(m, withOutput(a->o, confirm_out), inputs);
            prepareSession(m.session, pluginHost());  // threads and BLAS facts, at the edge
            auto s = eval::openSession(m.session);  // weights load outside inference mode
            a->o.stop = stopOnSignals();
            std::ostream& text = output::isStdout(a->o.output_csv) ? std::cerr : std::cout;  // --csv -: stdout is the CSV's
            const documents::InterventionDocument doc = sweepInInferenceMode(m, *s, a->o);
            intervene::printResultsTable(text, doc);
            text << "result: " << out << "\n";
            if (confirm_out.empty()) return 0;
            return confirmInFp32(m, doc, s, withOutput(a->o, confirm_out), out, text);
          }};
}

}  // namespace omn::cli
