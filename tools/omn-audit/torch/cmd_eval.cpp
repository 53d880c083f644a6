// omn-audit eval: score a held-out token set; perplexity with bootstrap CI and groups; raw JSON.
#include <c10/core/InferenceMode.h>
#include <spdlog/spdlog.h>

#include <torch/csrc/autograd/profiler_legacy.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include "model_commands.h"
#include "omn/audit/digest_list.h"
#include "omn/errors.h"
#include "omn/model/threads.h"
#include "omn/eval/bootstrap.h"
#include "omn/eval/evaluator.h"
#include "omn/output/json_file.h"
#include "omn/output/npy.h"
#include "omn/output/progress.h"
#include "omn/output/provenance.h"
#include "omn/output/table.h"
#include "omn/eval/session.h"
#include "session_options.h"
#include "../plugin_commands.h"

namespace omn::cli {

namespace {
struct EvalArgs {
  EvalOptions o;
  std::string json_out, dump_logits;
  bool force = false;
};

// The eval@1 document of one pass: provenance (the inputs as given), the session's blocks, the
// scores recomputed from the per-sequence sums, the timing.
documents::EvalDocument evalDocument(const eval::Session& s, const eval::SequenceScores& sc, const EvalOptions& o, double secs,
                                     output::ProvenanceInfo prov) {
  prov.device = s.device.str();
  prov.inputs.push_back({"checkpoint", s.spec.checkpoint, s.checkpoint_sha256, !s.spec.sha256.empty()});
  if (s.location.isFolder())
    prov.inputs.push_back({"model-config", s.location.config_path, s.location.config_sha256, !s.spec.config_sha256.empty()});
  prov.inputs.push_back({"tokens", s.tokens.path, s.tokens.sha256, !s.spec.tokens_sha256.empty()});
  if (!s.tokens.offsets_path.empty())
    prov.inputs.push_back({"offsets", s.tokens.offsets_path, s.tokens.offsets_sha256, !s.spec.offsets_sha256.empty()});
  prov.finished_utc = output::utcNow();
  documents::EvalDocument doc;
  doc.provenance = output::provenanceRecord(prov);
  doc.checkpoint = eval::checkpointRecord(s);
  doc.model = eval::modelRecord(s);
  doc.tokens = eval::tokensRecord(s);
  doc.selection = eval::selectionRecord(s);
  doc.result = eval::scoresRecord(sc, o.bootstrap, o.groups);
  doc.timing = {secs, static_cast<double>(sc.totalTokens()) / secs};
  return doc;
}

// The perplexity and its interval, the model as run, and each group's perplexity
void printEval(std::ostream& text, const eval::Session& s, const eval::SequenceScores& sc, const documents::EvalDocument& doc,
               const EvalOptions& o, double secs) {
  const documents::Scores& r = doc.result;
  auto f4 = [](const std::optional<double>& v) { return v ? output::fixed(*v, 4) : std::string("nan"); };
  const bool one = r.sequences.nll_sum.size() < eval::kMinBootstrapSequences;  // no interval: a bootstrap needs two
  text << "perplexity " << output::fixed(sc.perplexity(), 4) << "  ["
       << (one ? std::string("no interval: one sequence") : output::ciLabel(o.bootstrap.confidence) + " " + f4(r.perplexity_ci.low) + ", " + f4(r.perplexity_ci.high))
       << "]  over " << r.tokens << " tokens in " << r.sequences.nll_sum.size() << " sequences\n";
  text << "model " << s.preset.name << ", " << model::attentionName(s.path) << " attention, " << eval::dtypeName(s.dtype) << ", "
       << s.device.str() << ", " << s.threads << " threads: " << output::fixed(static_cast<double>(r.tokens) / secs, 1) << " tokens/s\n";
  output::Table t({"group", "sequences", "tokens", "perplexity"});
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    const documents::ScoreGroup& x = r.groups[g];
    t.add({std::to_string(g), std::to_string(x.count), std::to_string(x.tokens), f4(x.perplexity)});
  }
  t.print(text);
}
}  // namespace

Command addEvalCommand(CLI::App& root) {
  auto a = std::make_shared<EvalArgs>();
  auto* app = root.add_subcommand("eval", pluginCommandHelp("eval"));
  app->footer("Examples:\n"
              "  omn-audit eval model.pt --tokens heldout.bin --token-format u16 --eos 1 --seq-len 128 --num-seqs 512\n"
              "  omn-audit eval Qwen3-1.7B/ --tokens heldout.npy --offsets heldout.offsets.npy --seq-len 512 --num-seqs 16 --dtype fp32 -o eval.json");
  addSessionOptions(app, a->o);
  app->add_option("--json,-o,--output", a->json_out, "write the raw result (omn-audit/eval@1) here (-o/--output as in every command)");
  app->add_option("--dump-logits", a->dump_logits, "write the float32 logits of the first row as .npy (parity checks)");
  app->add_flag("--force", a->force, "overwrite existing outputs");
  return {app, [a] {
            finishSessionOptions(a->o);
            // OMN_AUDIT_PROFILE=trace.json: a Chrome trace of every ATen op (performance work); an output
            // like the others (never over an input or another output, replaced only with --force)
            const char* trace_env = std::getenv("OMN_AUDIT_PROFILE");
            const std::string trace_path = trace_env ? trace_env : "";
            output::checkDistinctOutputs({{"--json", a->json_out}, {"--dump-logits", a->dump_logits}, {"OMN_AUDIT_PROFILE", trace_path}});
            if (output::isStdout(a->dump_logits) || output::isStdout(trace_path))
              throw UsageError("--dump-logits and OMN_AUDIT_PROFILE write files; only --json may be '-' (standard output)");
            // the list first: every file it names is an input too
            if (!a->o.session.digests_path.empty()) a->o.session.digests = audit::readDigestList(a->o.session.digests_path);
            for (const auto& out : {a->json_out, a->dump_logits, trace_path})
              if (!out.empty()) output::checkOutputPath(out, a->force, eval::sessionInputFiles(a->o.session));
            // --groups against --num-seqs before the checkpoint is hashed (the row count is known
            // only once the token set is read; checked again then)
            if (a->o.groups_given && static_cast<std::size_t>(a->o.groups) > a->o.session.num_seqs)
              eval::checkGroups(a->o.groups, a->o.session.num_seqs);
            output::ProvenanceInfo prov;
            prov.started_utc = output::utcNow();
            prepareSession(a->o.session, pluginHost());  // threads and BLAS facts, at the edge
            auto s = eval::openSession(a->o.session);  // weights load outside inference mode
            a->o.groups = eval::resolveGroups(a->o.groups, a->o.groups_given, s->rows.size());
            eval::checkGroups(a->o.groups, s->rows.size());  // before any row is scored
            c10::InferenceMode guard;
            // the trace is collected in memory and written like every output (atomically, a failed
            // write is exit 5): libtorch's own file writer ignores write errors
            std::ostringstream trace_text;
            std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
            if (!trace_path.empty()) trace = std::make_unique<torch::autograd::profiler::RecordProfile>(trace_text);
            eval::Evaluator ev(*s->model, s->rows, s->path, s->spec.batch, s->device);
            const bool tty = output::ProgressBar::stderrIsTerminal();
            output::ProgressBar bar("eval", ev.size(), tty, false, "rows");
            const auto t0 = std::chrono::steady_clock::now();
            eval::ScoreOptions so;
            so.progress = [&](const eval::Progress& p) {
              const double ppl = std::exp(p.nll_done / std::max<std::int64_t>(1, p.tokens_done));
              bar.update(p.rows_done, "ppl " + output::fixed(ppl, 3));
              if (!tty) spdlog::debug("eval: {}/{} rows, running perplexity {:.4f}", p.rows_done, p.rows_total, ppl);
            };
            const eval::SequenceScores sc = ev.score(so);
            bar.finish();
            const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (trace) {  // after the timing: serialising the events is not the model's time
              trace.reset();  // the events are written out when the recording ends
              output::writeFileAtomic(trace_path, trace_text.str());
            }
            // the scores stand on the checkpoint as hashed at the start: still that file, by identity and digest
            eval::requireCheckpointUnchanged(*s, "after scoring", true);
            if (!a->dump_logits.empty()) {
              const at::Tensor l = ev.rowLogits(0).contiguous();
              output::writeNpyFloat32(a->dump_logits, l.data_ptr<float>(), {l.size(0), l.size(1)});
            }
            const documents::EvalDocument doc = evalDocument(*s, sc, a->o, secs, prov);
            printEval(output::isStdout(a->json_out) ? std::cerr : std::cout, *s, sc, doc, a->o, secs);  // --json -: stdout is the JSON's
            if (!a->json_out.empty()) output::writeFileAtomic(a->json_out, output::dumpJson(doc.toJson()));
            return 0;
          }};
}

}  // namespace omn::cli
