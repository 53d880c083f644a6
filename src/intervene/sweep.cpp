#include "omn/intervene/sweep.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "omn/documents/read_block.h"
#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/eval/divergence.h"
#include "omn/eval/evaluator.h"
#include "omn/io/journal.h"
#include "omn/io/json_reader.h"
#include "omn/io/sha256.h"
#include "omn/intervene/ops.h"
#include "omn/intervene/pass_record.h"
#include "omn/intervene/plan.h"
#include "omn/intervene/results.h"
#include "omn/model/products.h"
#include "omn/output/json_file.h"
#include "omn/output/progress.h"
#include "omn/output/provenance.h"
#include "omn/output/table.h"
#include "pass_runner.h"

namespace omn::intervene {

using nlohmann::json;
using detail::Against;
using detail::Pass;
using detail::PassRunner;

std::pair<std::string, std::string> checkSweepOutputs(const Manifest& m, const SweepOptions& o, const std::vector<std::string>& inputs) {
  const std::string out = o.output_json.empty() ? m.output_json : o.output_json;
  // --output replaces the manifest's whole /output block: its csv too, unless --csv is given
  const std::string csv = !o.output_csv.empty() ? o.output_csv : o.output_json.empty() ? m.output_csv : "";
  if (out.empty()) throw UsageError("no output: give --output or /output/json in the manifest");
  output::checkJournaledOutput(out, "the sweep's JSON output");
  output::checkDistinctOutputs({{"the JSON output", out}, {"the CSV output", csv}, {"the journal", out + ".journal"}});
  // --resume continues a run into its own outputs: with its journal present (its header is matched
  // against this run's inputs before anything is reused) they are not someone else's to protect
  struct stat journal {};
  const bool own = o.resume && ::stat((out + ".journal").c_str(), &journal) == 0;
  // (the JSON only: the CSV is not named in the journal, so an existing one is someone else's)
  output::checkOutputPath(out, o.force || own, inputs);
  if (!csv.empty()) output::checkOutputPath(csv, o.force, inputs);
  return {out, csv};
}

namespace {

// --- plan: the journal to write or resume, and whether the activation cache is used ----------------

// The journal of this run: a fresh one, or an interrupted run's when its inputs match, with the
// records it already holds by id (a condition whose restore failed is never reused: it runs again).
io::ResumedJournal openJournal(const std::string& jpath, const json& header, bool resume) {
  io::ResumedJournal r = io::resumeJournal(
      jpath, header, resume, "run",
      {"manifest_sha256", "checkpoint_sha256", "tokens_sha256", "model_code_fingerprint", "git_revision", "shard", "bf16_products", "batch", "options"},
      reusable);
  if (r.resumed) spdlog::info("resuming: {} finished record(s) in {}", r.done.size(), jpath);
  return r;
}

// The residual stream entering the first layer any condition touches, kept when it fits the budget.
bool planCache(const std::vector<Condition>& conditions, const GainState& gains, const eval::Evaluator& ev, int n_layers,
               const SweepOptions& o, eval::ActivationCache& cache) {
  if (!o.cache_activations) return false;
  int first = n_layers;
  for (const auto& c : conditions) first = std::min(first, gains.firstLayer(c));
  const std::size_t bytes = ev.cacheBytes();
  if (first == 0) {
    spdlog::info("--cache-activations: a condition touches layer 0, nothing to skip");
    return false;
  }
  if (bytes > o.cache_budget_bytes) {
    spdlog::warn("--cache-activations: the cache would take {:.3g} MiB, over the --cache-budget of {:.3g} MiB: not used",
                 static_cast<double>(bytes) / (1 << 20), static_cast<double>(o.cache_budget_bytes) / (1 << 20));
    return false;
  }
  cache.layer = first;
  return true;
}

}  // namespace

bool planMemory(const std::vector<Condition>& conditions, const GainState& gains, const eval::Evaluator& ev, int n_layers,
                const SweepOptions& o, eval::ActivationCache& cache) {
  const bool use_cache = planCache(conditions, gains, ev, n_layers, o, cache);
  // --kl keeps the control's final hidden states (the working dtype, every row) for the whole sweep
  // (the activation cache, when used, takes as much again: every row's [T, D] at its layer)
  if (o.kl && ev.cacheBytes() * (use_cache ? 2 : 1) > o.cache_budget_bytes)
    throw UsageError("--kl keeps the control's final hidden states: " + output::significant(static_cast<double>(ev.cacheBytes()) / (1 << 20), 3) +
                     " MiB" + (use_cache ? " beside the activation cache" : "") + ", over the --cache-budget of " +
                     output::significant(static_cast<double>(o.cache_budget_bytes) / (1 << 20), 3) + " MiB: raise --cache-budget or evaluate fewer rows");
  return use_cache;
}

namespace {

// The working dtype's noise floor: the manifest's /model/noise_floor, or the default for the dtype
// (bf16 and fp16: 1e-4 nats/token, what bf16 differs from fp32 by on the demo model,
// docs/PERFORMANCE.md; fp32: 1e-6).
std::pair<double, std::string> noiseFloor(const Manifest& m, at::ScalarType dtype) {
  if (m.noise_floor >= 0) return {m.noise_floor, "the manifest's /model/noise_floor"};
  if (dtype == at::kFloat) return {1e-6, "default for fp32"};
  return {1e-4, std::string("default for ") + (dtype == at::kHalf ? "fp16" : "bf16") + ": bf16 differs from fp32 by ~1e-4 nats/token"};
}

// --- record: what each pass leaves in the journal ----------------------------------------------------

PassRecord controlRecord(const char* id, Pass p, const GainState& gains) {
  PassRecord r;
  r.id = id;
  r.scores = recordedScores(std::move(p.scores));
  r.seconds = p.seconds;
  r.gain_sha256 = gains.digest();
  r.mechanism = std::move(p.mechanism);
  r.divergence = std::move(p.divergence);
  return r;
}

// One condition: apply, score (from the cache when it starts at or after the cached layer),
// restore, and the record with the restore's digest. The gains are restored on every path out.
PassRecord runCondition(const Condition& c, GainState& gains, PassRunner& passes, bool from_cache, int cache_layer, bool mechanism,
                        bool kl, const PassRecord& control_open) {
  AppliedGains applied = gains.apply(c);
  PassRecord r;
  r.control = false;
  r.id = c.id;
  r.label = c.label;
  r.op = documents::readBlock<documents::ConditionOp>(c.describe(), "condition " + c.id, "/op");
  r.manifest_pointer = c.pointer;
  r.touched = applied.touched;
  r.applied = {gains.digest(), std::move(applied.vectors)};  // the gains the pass ran with
  r.start_layer = from_cache ? cache_layer : 0;
  r.reported_perplexity = c.reported_perplexity;
  Pass pass;
  try {
    pass = passes.run(c.id + " " + c.label, false, from_cache, mechanism, kl ? Against::Compare : Against::Nothing, &gains.overlay());
  } catch (...) {
    gains.restore();
    throw;
  }
  gains.restore();
  if (mechanism && from_cache) {  // layers before the cache were not run: they equal the control's
    if (!control_open.mechanism || control_open.mechanism->size() < static_cast<std::size_t>(cache_layer))
      throw IntegrityError("the opening control's record has no --mechanism table for layers 0-" + std::to_string(cache_layer - 1) +
                           ": rerun the sweep without --resume");
    for (int l = 0; l < cache_layer; ++l) (*pass.mechanism)[static_cast<std::size_t>(l)] = (*control_open.mechanism)[static_cast<std::size_t>(l)];
  }
  r.scores = recordedScores(std::move(pass.scores));
  r.seconds = pass.seconds;
  r.mechanism = std::move(pass.mechanism);
  r.divergence = std::move(pass.divergence);
  r.restore.sha256 = gains.digest();
  r.restore.expected = gains.originalDigest();
  return r;
}

// The checkpoint must stay the file the session opened: its weights may be views into its mapping.
// Its identity is checked after every pass, before that pass is journaled (so the journal holds only
// passes run on the file as opened), and its SHA-256 is read again at the end, before the closing
// control is compared with the opening one: a changed file is named as such, never reported as "not
// deterministic".
void requireUnchanged(const eval::Session& s, const std::string& jpath, const std::string& when, bool rehash) {
  try {
    eval::requireCheckpointUnchanged(s, when, rehash);
  } catch (const IntegrityError& e) {
    throw IntegrityError(std::string(e.what()) + "; the passes finished before it are in " + jpath +
                         ": restore the file, then rerun with --resume");
  }
}

// This shard of a --shard run (none: the whole sweep)
std::optional<documents::ShardOf> shardOf(const SweepOptions& o) {
  if (o.shard_count <= 1) return std::nullopt;
  return documents::ShardOf{o.shard_index, o.shard_count};
}

// What a resumed journal must agree on: the inputs, the code, the shard and the options that change a record.
json journalHeader(const Manifest& m, const eval::Session& s, const SweepOptions& o) {
  const std::optional<documents::ShardOf> shard = shardOf(o);
  return {{"schema", "omn-audit/journal@1"},       {"manifest_sha256", m.sha256},
          {"checkpoint_sha256", s.checkpoint_sha256}, {"tokens_sha256", s.tokens.sha256},
          {"model_code_fingerprint", modelCodeFingerprint()}, {"git_revision", output::gitRevision()},
          {"shard", shard ? json(*shard) : json(nullptr)},
          {"bf16_products", model::productsJson(s.dtype, s.device)["bf16"]},
          {"batch", s.spec.batch},  // rows per pass change the rounding: a resume keeps the batch it began with
          {"options", {{"mechanism", o.mechanism}, {"kl", o.kl}}}};
}

// The digest a journaled pass is bound to (its /sweep_sha256): the journal's header (the sweep's
// inputs, code, shard, products, batch and options), the rows scored (eval::selectionRecord: their
// indices and token offsets) and the pass (a control's id; a condition's id, label, manifest pointer
// and definition). A record of any other sweep, rows or condition carries another digest.
std::string passBinding(const json& header, const json& rows, const json& pass) {
  const std::string text = json{{"header", header}, {"rows", rows}, {"pass", pass}}.dump();
  return io::sha256Bytes(text.data(), text.size());
}

json controlDefinition(const char* id) { return {{"id", id}}; }
json conditionDefinition(const Condition& c) {
  return {{"id", c.id}, {"label", c.label}, {"manifest_pointer", c.pointer}, {"op", c.describe()}};
}

// What every journaled record of this sweep must agree with (pass_record.h JournalExpectation).
struct SweepBinding {
  json header, rows;
  std::vector<std::int64_t> tokens;  // scored per row
  std::size_t mechanism_layers = 0;  // --mechanism: every pass's table has a row per layer
  bool kl = false;                   // --kl: every pass but the opening control has its sums
  SweepBinding(json h, const eval::Session& s, const SweepOptions& o)
      : header(std::move(h)), rows(eval::selectionRecord(s)), mechanism_layers(o.mechanism ? static_cast<std::size_t>(s.config.n_layers) : 0),
        kl(o.kl) {
    for (const eval::Row& r : s.rows) tokens.push_back(eval::scoredTokens(r));
  }
  JournalExpectation expect(const json& pass) const {
    return {passBinding(header, rows, pass), tokens, mechanism_layers, kl && pass.at("id") != "control_open"};
  }
};

// The passes of one sweep, in order: the opening control, each condition, the closing control. Each
// is taken from the journal when it holds it (bound to this sweep: refused otherwise), else run,
// checked and journaled.
struct SweepPasses {
  const eval::Session& s;
  const SweepOptions& o;
  GainState& gains;
  eval::ActivationCache& cache;
  const bool use_cache;
  io::ResumedJournal& resumed;
  PassRunner& passes;
  const std::string& jpath;
  const SweepBinding& binding;
  std::map<std::string, PassRecord> reused = {};  // the journal's records, each checked against this sweep (readJournal)

  // Every record the journal holds, read back and checked against the pass of this sweep it stands
  // for before any pass runs: one that is no pass of this sweep, or another sweep's, is refused
  // naming the journal's line.
  void readJournal(const std::vector<Condition>& todo) {
    for (const auto& [id, line] : resumed.done) {
      const bool control = id == "control_open" || id == "control_close";
      const auto c = std::find_if(todo.begin(), todo.end(), [&id = id](const Condition& x) { return x.id == id; });
      if (!control && c == todo.end())
        throw UsageError(resumed.where(id) + ": record " + id + " is no pass of this sweep (another manifest's or shard's): "
                         "remove the journal to start over");
      const json definition = control ? controlDefinition(id.c_str()) : conditionDefinition(*c);
      reused.emplace(id, recordFromJournal(line, resumed.where(id), control, binding.expect(definition)));
    }
  }
  const PassRecord* journaled(const std::string& id) const {
    const auto it = reused.find(id);
    return it == reused.end() ? nullptr : &it->second;
  }
  void append(const PassRecord& r, const json& definition) {
    resumed.journal.append(journalLine(r, binding.expect(definition).sweep_sha256));
  }

  PassRecord openingControl() {
    const Against kl_role = o.kl ? Against::Keep : Against::Nothing;
    if (const PassRecord* r = journaled("control_open")) {
      passes.skip();
      if (use_cache || o.kl) {  // neither is journaled: rebuild them with one pass over the control
        passes.addStep();
        passes.run("control (refilling the activation cache / the --kl reference)", use_cache, false, false, kl_role);
      }
      return *r;
    }
    PassRecord control_open = controlRecord("control_open", passes.run("control", use_cache, false, o.mechanism, kl_role), gains);
    requireUnchanged(s, jpath, "after the control pass", false);
    append(control_open, controlDefinition("control_open"));
    return control_open;
  }

  // each condition: apply, score, restore, verify, journal
  std::vector<PassRecord> conditions(const std::vector<Condition>& todo, const PassRecord& control_open) {
    std::vector<PassRecord> records;
    for (const Condition& c : todo) {
      if (const PassRecord* r = journaled(c.id)) {
        records.push_back(*r);
        passes.skip();
        continue;
      }
      const bool from_cache = use_cache && gains.firstLayer(c) >= cache.layer;
      PassRecord rec = runCondition(c, gains, passes, from_cache, cache.layer, o.mechanism, o.kl, control_open);
      requireUnchanged(s, jpath, "after condition " + c.id + " (" + c.label + ")", false);
      append(rec, conditionDefinition(c));
      if (!rec.restored())
        throw IntegrityError("condition " + c.id + " (" + c.label + "): the gains did not restore bitwise (SHA-256 " + rec.restore.sha256 +
                             ", expected " + rec.restore.expected + ")");
      records.push_back(std::move(rec));
    }
    return records;
  }

  // the control again (it must reproduce the first); the checkpoint's SHA-256 read again before it is kept
  PassRecord closingControl() {
    if (const PassRecord* r = journaled("control_close")) {
      requireUnchanged(s, jpath, "at the end of the sweep (SHA-256 read again)", true);
      return *r;
    }
    PassRecord control_close = controlRecord(
        "control_close", passes.run("control (closing)", false, false, o.mechanism, o.kl ? Against::Compare : Against::Nothing), gains);
    requireUnchanged(s, jpath, "after the control (closing) pass", false);
    requireUnchanged(s, jpath, "at the end of the sweep (SHA-256 read again)", true);
    append(control_close, controlDefinition("control_close"));
    return control_close;
  }
};

// The provenance of a sweep: its inputs as the manifest names them (relative to its directory).
documents::Provenance sweepProvenance(const Manifest& m, const eval::Session& s, output::ProvenanceInfo prov) {
  auto rel = [&](const std::string& p) { return io::relativeTo(p, m.path); };
  prov.device = s.device.str();
  prov.inputs = {{"manifest", rel(m.path), m.sha256, true},
                 {"checkpoint", rel(s.spec.checkpoint), s.checkpoint_sha256, !s.spec.sha256.empty()},
                 {"tokens", rel(s.tokens.path), s.tokens.sha256, !s.spec.tokens_sha256.empty()}};
  if (!s.tokens.offsets_path.empty())
    prov.inputs.push_back({"offsets", rel(s.tokens.offsets_path), s.tokens.offsets_sha256, !s.spec.offsets_sha256.empty()});
  if (s.location.isFolder())
    prov.inputs.push_back({"model-config", rel(s.location.config_path), s.location.config_sha256, !s.spec.config_sha256.empty()});
  prov.finished_utc = output::utcNow();
  return output::provenanceRecord(prov);
}

// The session's blocks with every path as the manifest names it: relative to the manifest's
// directory (no local absolute path).
void sessionBlocks(const Manifest& m, const eval::Session& s, documents::InterventionDocument& d) {
  auto rel = [&](const std::string& p) { return io::relativeTo(p, m.path); };
  d.checkpoint = eval::checkpointRecord(s);
  d.checkpoint.path = rel(s.spec.checkpoint);
  if (d.checkpoint.folder) {
    d.checkpoint.folder->path = rel(s.location.given);
    d.checkpoint.folder->config = rel(s.location.config_path);
  }
  d.model = eval::modelRecord(s);
  if (s.preset.source != "builtin" && s.preset.source.find('/') != std::string::npos)  // a preset file beside the manifest
    d.model.preset_source = rel(s.preset.source);
  d.tokens = eval::tokensRecord(s);
  d.tokens.path = rel(s.tokens.path);
  if (d.tokens.offsets.is_object()) d.tokens.offsets["path"] = rel(s.tokens.offsets_path);
  d.selection = eval::selectionRecord(s);
}

// The document's fixed part: provenance, inputs and what the sweep ran with.
documents::InterventionDocument documentBase(const Manifest& m, const eval::Session& s, const SweepOptions& o, const GainState& gains,
                                             const eval::ActivationCache& cache, bool use_cache, const output::ProvenanceInfo& prov) {
  documents::InterventionDocument d;
  d.provenance = sweepProvenance(m, s, prov);
  d.manifest = {io::relativeTo(m.path, m.path), m.sha256, m.verbatim, m.bytes};
  sessionBlocks(m, s, d);
  d.gains = {gains.checkpointDigest(), gains.originalDigest()};
  d.cache.enabled = use_cache;
  if (use_cache) {
    d.cache.layer = cache.layer;
    d.cache.bytes = static_cast<std::int64_t>(cache.bytes());
  }
  d.mechanism = o.mechanism;
  d.kl = o.kl;
  d.shard = shardOf(o);
  d.reported = m.reported;
  d.confirms = o.confirms;
  return d;
}

}  // namespace

documents::InterventionDocument runSweep(const Manifest& m, eval::Session& s, const SweepOptions& o) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  const auto [out, csv] = checkSweepOutputs(m, o, inputFiles(m));
  const int groups = eval::resolveGroups(m.groups, m.groups_given, s.rows.size());
  eval::checkGroups(groups, s.rows.size(), "manifest " + m.path + ": /groups");  // /rows/up_to may leave fewer rows
  const std::vector<Condition> conditions = shardConditions(m.conditions, o.shard_index, o.shard_count);

  // --- plan: the gains saved and every condition checked; the journal; the cache ----------------------
  GainState gains(*s.model, *s.ck);
  gains.loadSources(m.conditions);  // transplant's checkpoints, verified
  for (const auto& c : m.conditions) gains.check(c);
  for (const Equivalence& e : equivalences(conditions, s.config.n_layers))
    if (!e.sanity) spdlog::warn("{} equals {} by construction: {}", e.id, e.same == "control" ? std::string("the control") : e.same, e.why);
  const std::string jpath = out + ".journal";
  eval::Evaluator ev(*s.model, s.rows, s.path, s.spec.batch, s.device);
  eval::ActivationCache cache;
  const bool use_cache = planMemory(conditions, gains, ev, s.config.n_layers, o, cache);
  const SweepBinding binding(journalHeader(m, s, o), s, o);
  io::ResumedJournal resumed = openJournal(jpath, binding.header, o.resume);
  PassRunner runner(ev, cache, o, conditions.size() + 2, jpath);

  // --- run: control, conditions, control ------------------------------------------------------------
  SweepPasses passes{s, o, gains, cache, use_cache, resumed, runner, jpath, binding};
  passes.readJournal(conditions);
  ResultsInput in;
  in.control_open = passes.openingControl();
  in.conditions = passes.conditions(conditions, in.control_open);
  in.control_close = passes.closingControl();

  // --- the document ----------------------------------------------------------------------------------
  in.base = documentBase(m, s, o, gains, cache, use_cache, prov);
  in.bootstrap = m.bootstrap;
  in.family_size = m.family_size ? m.family_size : m.conditions.size();
  std::tie(in.noise_floor, in.noise_floor_basis) = noiseFloor(m, s.dtype);
  in.groups = eval::resolveGroups(m.groups, m.groups_given, s.rows.size());
  in.exact_control = s.device.is_cpu();
  const documents::InterventionDocument doc = assembleResults(in);
  output::writeFileAtomic(out, output::dumpJson(doc.toJson()));
  if (!csv.empty()) output::writeFileAtomic(csv, resultsCsv(doc));
  ::unlink(jpath.c_str());  // the result holds everything the journal did
  return doc;
}

}  // namespace omn::intervene
