#include "omn/intervene/sweep.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <map>

#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/eval/evaluator.h"
#include "omn/io/journal.h"
#include "omn/intervene/ops.h"
#include "omn/intervene/results.h"
#include "omn/output/json_file.h"
#include "omn/output/progress.h"
#include "omn/output/provenance.h"
#include "omn/output/table.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

json mechanismJson(const std::vector<model::LayerMechanism>& m) {
  json a = json::array();
  for (std::size_t l = 0; l < m.size(); ++l)
    a.push_back({{"layer", l},
                 {"mean_attention_entropy", output::finiteOrNull(m[l].mean_entropy)},
                 {"max_logit", output::finiteOrNull(m[l].max_logit)},
                 {"q_rms", output::finiteOrNull(m[l].q_rms)},
                 {"k_rms", output::finiteOrNull(m[l].k_rms)}});
  return a;
}

}  // namespace

std::pair<std::string, std::string> checkSweepOutputs(const Manifest& m, const SweepOptions& o, const std::vector<std::string>& inputs) {
  const std::string out = o.output_json.empty() ? m.output_json : o.output_json;
  // --output replaces the manifest's whole /output block: its csv too, unless --csv is given
  const std::string csv = !o.output_csv.empty() ? o.output_csv : o.output_json.empty() ? m.output_csv : "";
  if (out.empty()) throw UsageError("no output: give --output or /output/json in the manifest");
  output::checkJournaledOutput(out, "the sweep's JSON output");
  output::checkDistinctOutputs({{"the JSON output", out}, {"the CSV output", csv}, {"the journal", out + ".journal"}});
  for (const auto& p : {out, csv})
    if (!p.empty()) output::checkOutputPath(p, o.force, inputs);
  return {out, csv};
}

json runSweep(const Manifest& m, eval::Session& s, const SweepOptions& o) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  std::vector<std::string> inputs = {m.path, s.spec.checkpoint, s.tokens.path};
  if (!s.tokens.offsets_path.empty()) inputs.push_back(s.tokens.offsets_path);
  const auto [out, csv] = checkSweepOutputs(m, o, inputs);
  const std::vector<Condition> conditions = shardConditions(m.conditions, o.shard_index, o.shard_count);

  // --- the model state: gains saved, their digest known; every condition checked up front ---------
  GainState gains(*s.model, *s.ck);
  for (const auto& c : m.conditions) gains.check(c);

  // --- the journal: a fresh one, or the one of an interrupted run when its inputs match -----------
  const std::string jpath = out + ".journal";
  const json shard = o.shard_count > 1 ? json{{"index", o.shard_index}, {"count", o.shard_count}} : json(nullptr);
  const json header = {{"schema", "omn-audit/journal@1"},       {"manifest_sha256", m.sha256},
                       {"checkpoint_sha256", s.checkpoint_sha256}, {"tokens_sha256", s.tokens.sha256},
                       {"model_code_fingerprint", modelCodeFingerprint()}, {"shard", shard},
                       {"options", {{"mechanism", o.mechanism}}}};
  std::map<std::string, json> done;
  const bool have_journal = ::access(jpath.c_str(), F_OK) == 0;
  if (have_journal && !o.resume)
    throw UsageError("journal " + jpath + " of an interrupted run exists: continue it with --resume, or remove it");
  io::Journal journal = have_journal ? io::Journal::resume(jpath) : io::Journal::create(jpath, header);
  if (have_journal) {
    const std::string diff = io::journalMismatch(journal.header(), header,
                                                 {"manifest_sha256", "checkpoint_sha256", "tokens_sha256",
                                                  "model_code_fingerprint", "shard", "options"});
    if (!diff.empty()) throw UsageError("cannot resume from " + jpath + ": " + diff);
    for (const auto& r : journal.records()) {
      // a condition whose restore failed is never reused: the sweep stopped there, it runs again
      if (r.contains("restore") && !r["restore"].value("ok", false)) continue;
      done[r.at("id").get<std::string>()] = r;
    }
    spdlog::info("resuming: {} finished record(s) in {}", done.size(), jpath);
  }

  // The checkpoint must stay the file the session opened: its weights may be views into its
  // mapping. Its identity is checked after every pass, before that pass is journaled (so the
  // journal holds only passes run on the file as opened), and its SHA-256 is read again at the end,
  // before the closing control is compared with the opening one: a changed file is named as such,
  // never reported as "not deterministic".
  auto requireUnchanged = [&](const std::string& when, bool rehash) {
    try {
      eval::requireCheckpointUnchanged(s, when, rehash);
    } catch (const IntegrityError& e) {
      throw IntegrityError(std::string(e.what()) + "; the passes finished before it are in " + jpath +
                           ": restore the file, then rerun with --resume");
    }
  };

  eval::Evaluator ev(*s.model, s.rows, s.path, s.spec.batch, s.device);
  const bool tty = o.progress && output::ProgressBar::stderrIsTerminal();

  // the activation cache: the residual stream entering the first layer any condition touches
  eval::ActivationCache cache;
  bool use_cache = false;
  if (o.cache_activations) {
    int first = s.config.n_layers;
    for (const auto& c : conditions) first = std::min(first, gains.firstLayer(c));
    const std::size_t bytes = ev.cacheBytes();
    if (first == 0) spdlog::info("--cache-activations: a condition touches layer 0, nothing to skip");
    else if (bytes > o.cache_budget_bytes)
      spdlog::warn("--cache-activations: the cache would take {} MiB, over the {} MiB budget: not used", bytes >> 20,
                   o.cache_budget_bytes >> 20);
    else {
      use_cache = true;
      cache.layer = first;
    }
  }

  std::size_t total_steps = conditions.size() + 2, step = 0, passes_run = 0;
  double sweep_seconds = 0;  // time spent in the passes run so far (for the ETA)
  auto score = [&](const std::string& what, bool capture, bool from_cache, json* mech_out) {
    ++step;
    output::ProgressBar bar("[" + std::to_string(step) + "/" + std::to_string(total_steps) + "] " + what, ev.size(), tty, false,
                            "rows");
    eval::ScoreOptions so;
    std::int64_t tokens_done = 0;
    const auto started = std::chrono::steady_clock::now();
    so.progress = [&](const eval::Progress& p) {
      tokens_done = p.tokens_done;
      // the sweep's ETA: the passes left at the mean duration of the passes run so far
      const double here = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double frac = static_cast<double>(p.rows_done) / static_cast<double>(std::max<std::size_t>(1, p.rows_total));
      const double per_pass = (sweep_seconds + here) / (static_cast<double>(passes_run) + frac);
      const double eta = per_pass * (static_cast<double>(total_steps - step) + (1 - frac));
      bar.update(p.rows_done, "ppl " + output::fixed(std::exp(p.nll_done / std::max<std::int64_t>(1, p.tokens_done)), 3) + ", " +
                                  output::fixed(static_cast<double>(p.tokens_done) / std::max(here, 1e-9), 0) + " tok/s, sweep ETA " +
                                  output::fixed(eta, 0) + " s");
    };
    so.stop = o.stop;
    std::vector<model::LayerMechanism> mech;
    if (mech_out) so.mech = &mech;
    if (capture || from_cache) so.cache = &cache;
    so.capture = capture;
    so.from_cache = from_cache;
    const auto t0 = std::chrono::steady_clock::now();
    eval::SequenceScores sc = ev.score(so);
    bar.finish();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sweep_seconds += secs;
    ++passes_run;
    if (sc.nll_sum.size() < ev.size())
      throw Interrupted("interrupted during " + what + "; finished conditions are in " + jpath + ": rerun with --resume");
    if (mech_out) *mech_out = mechanismJson(mech);
    if (!tty)
      spdlog::info("{}: perplexity {:.4f} ({} tokens, {:.1f} s, {:.0f} tokens/s)", what, sc.perplexity(), sc.totalTokens(), secs,
                   static_cast<double>(tokens_done) / std::max(secs, 1e-9));
    return std::make_pair(sc, secs);
  };

  // the unmodified checkpoint, scored: the record journaled for the control
  auto controlPass = [&](const char* id, const std::string& what, bool capture) {
    json mech;
    auto [sc, secs] = score(what, capture, false, o.mechanism ? &mech : nullptr);
    requireUnchanged("after the " + what + " pass", false);
    return json{{"id", id}, {"kind", "control"}, {"scores", scoresRaw(sc)}, {"seconds", secs},
                {"gain_sha256", gains.digest()}, {"mechanism", mech}};
  };

  // --- the control, first ----------------------------------------------------------------------
  json control_open;
  if (done.count("control_open")) {
    control_open = done["control_open"];
    ++step;
    if (use_cache) {  // the cache is not journaled: rebuild it with one pass over the control
      score("control (refilling the activation cache)", true, false, nullptr);
      ++total_steps;
    }
  } else {
    control_open = controlPass("control_open", "control", use_cache);
    journal.append(control_open);
  }

  // --- each condition: apply, score, restore, verify ------------------------------------------
  std::vector<json> records;
  for (const Condition& c : conditions) {
    if (done.count(c.id)) {
      records.push_back(done[c.id]);
      ++step;
      continue;
    }
    const std::vector<std::string> touched = gains.apply(c);
    const bool from_cache = use_cache && gains.firstLayer(c) >= cache.layer;
    json mech;
    eval::SequenceScores sc;
    double secs = 0;
    try {
      std::tie(sc, secs) = score(c.id + " " + c.label, false, from_cache, o.mechanism ? &mech : nullptr);
    } catch (...) {
      gains.restore();
      throw;
    }
    gains.restore();
    requireUnchanged("after condition " + c.id + " (" + c.label + ")", false);
    const std::string after = gains.digest();
    const bool ok = after == gains.originalDigest();
    if (o.mechanism && from_cache)  // layers before the cache were not run: they equal the control's
      for (int l = 0; l < cache.layer; ++l) mech[static_cast<std::size_t>(l)] = control_open["mechanism"][static_cast<std::size_t>(l)];
    json rec = {{"id", c.id},
                {"kind", "condition"},
                {"label", c.label},
                {"op", c.describe()},
                {"manifest_pointer", c.pointer},
                {"touched", touched},
                {"start_layer", from_cache ? cache.layer : 0},
                {"scores", scoresRaw(sc)},
                {"seconds", secs},
                {"restore", {{"sha256", after}, {"expected", gains.originalDigest()}, {"ok", ok}}},
                {"mechanism", mech}};
    journal.append(rec);
    records.push_back(rec);
    if (!ok)
      throw IntegrityError("condition " + c.id + " (" + c.label + "): the gains did not restore bitwise (SHA-256 " + after +
                           ", expected " + gains.originalDigest() + ")");
  }

  // --- the control again: it must reproduce the first -------------------------------------------
  json control_close;
  if (done.count("control_close")) {
    control_close = done["control_close"];
  } else {
    control_close = controlPass("control_close", "control (closing)", false);
  }
  requireUnchanged("at the end of the sweep (SHA-256 read again)", true);
  if (!done.count("control_close")) journal.append(control_close);

  // --- the document -----------------------------------------------------------------------------
  prov.device = s.device.str();
  prov.inputs = {{"manifest", m.path, m.sha256, true},
                 {"checkpoint", s.spec.checkpoint, s.checkpoint_sha256, !s.spec.sha256.empty()},
                 {"tokens", s.tokens.path, s.tokens.sha256, !s.spec.tokens_sha256.empty()}};
  if (!s.tokens.offsets_path.empty()) prov.inputs.push_back({"offsets", s.tokens.offsets_path, s.tokens.offsets_sha256, false});
  prov.finished_utc = output::utcNow();
  ResultsInput in;
  in.base = {{"schema", "omn-audit/intervention@1"},
             {"provenance", output::provenance(prov)},
             {"manifest", {{"path", m.path}, {"sha256", m.sha256}, {"verbatim", m.verbatim}}},
             {"checkpoint", eval::checkpointJson(s)},
             {"model", eval::modelJson(s)},
             {"tokens", eval::tokensJson(s)},
             {"selection", eval::selectionJson(s)},
             {"gains", {{"checkpoint_sha256", gains.checkpointDigest()}, {"working_sha256", gains.originalDigest()}}},
             {"cache", {{"enabled", use_cache}, {"layer", use_cache ? json(cache.layer) : json(nullptr)},
                        {"bytes", use_cache ? json(cache.bytes()) : json(nullptr)}}},
             {"mechanism", o.mechanism},
             {"shard", shard}};
  in.control_open = control_open;
  in.control_close = control_close;
  in.conditions = records;
  in.bootstrap = m.bootstrap;
  in.groups = m.groups;
  in.exact_control = s.device.is_cpu();
  const json doc = assembleResults(in);
  output::writeFileAtomic(out, output::dumpJson(doc));
  if (!csv.empty()) output::writeFileAtomic(csv, resultsCsv(doc));
  ::unlink(jpath.c_str());  // the result holds everything the journal did
  return doc;
}

}  // namespace omn::intervene
