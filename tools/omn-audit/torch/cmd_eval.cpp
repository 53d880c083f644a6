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
            for (const auto& out : {a->json_out, a->dump_logits, trace_path})
              if (!out.empty()) output::checkOutputPath(out, a->force, {a->o.session.checkpoint, a->o.session.tokens.path});
            // --groups against --num-seqs before the checkpoint is hashed (the row count is known
            // only once the token set is read; checked again then)
            if (a->o.groups < 1 || static_cast<std::size_t>(a->o.groups) > a->o.session.num_seqs)
              eval::checkGroups(a->o.groups, a->o.session.num_seqs);
            output::ProvenanceInfo prov;
            prov.started_utc = output::utcNow();
            prepareSession(a->o.session, pluginHost());  // threads and BLAS facts, at the edge
            auto s = eval::openSession(a->o.session);  // weights load outside inference mode
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
            nlohmann::json doc = {{"schema", "omn-audit/eval@1"}};
            prov.device = s->device.str();
            prov.inputs.push_back({"checkpoint", s->spec.checkpoint, s->checkpoint_sha256, !s->spec.sha256.empty()});
            if (s->location.isFolder())
              prov.inputs.push_back({"model-config", s->location.config_path, s->location.config_sha256, !s->spec.config_sha256.empty()});
            prov.inputs.push_back({"tokens", s->tokens.path, s->tokens.sha256, false});
            if (!s->tokens.offsets_path.empty())
              prov.inputs.push_back({"offsets", s->tokens.offsets_path, s->tokens.offsets_sha256, false});
            prov.finished_utc = output::utcNow();
            doc["provenance"] = output::provenance(prov);
            doc["checkpoint"] = eval::checkpointJson(*s);
            doc["model"] = eval::modelJson(*s);
            doc["tokens"] = eval::tokensJson(*s);
            doc["selection"] = eval::selectionJson(*s);
            doc["result"] = eval::scoresJson(sc, a->o.bootstrap, a->o.groups);
            doc["timing"] = {{"seconds", secs}, {"tokens_per_second", static_cast<double>(sc.totalTokens()) / secs}};
            const auto& r = doc["result"];
            std::ostream& text = output::isStdout(a->json_out) ? std::cerr : std::cout;  // --json -: stdout is the JSON's
            text << "perplexity " << output::fixed(sc.perplexity(), 4) << "  [" << output::ciLabel(a->o.bootstrap.confidence) << " "
                      << (r["perplexity_ci"]["low"].is_null() ? "nan" : output::fixed(r["perplexity_ci"]["low"], 4))
                      << ", " << (r["perplexity_ci"]["high"].is_null() ? "nan" : output::fixed(r["perplexity_ci"]["high"], 4))
                      << "]  over " << sc.totalTokens() << " tokens in " << sc.nll_sum.size() << " sequences\n";
            text << "model " << s->preset.name << ", " << model::attentionName(s->path) << " attention, "
                      << eval::dtypeName(s->dtype) << ", " << s->device.str() << ", " << s->threads << " threads: "
                      << output::fixed(static_cast<double>(sc.totalTokens()) / secs, 1) << " tokens/s\n";
            output::Table t({"group", "sequences", "tokens", "perplexity"});
            for (std::size_t g = 0; g < r["groups"].size(); ++g) {
              const auto& x = r["groups"][g];
              t.add({std::to_string(g), std::to_string(x["count"].get<long long>()), std::to_string(x["tokens"].get<long long>()),
                     x["perplexity"].is_null() ? "nan" : output::fixed(x["perplexity"], 4)});
            }
            t.print(text);
            if (!a->json_out.empty()) output::writeFileAtomic(a->json_out, output::dumpJson(doc));
            return 0;
          }};
}

}  // namespace omn::cli
