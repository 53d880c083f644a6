#include "omn/intervene/manifest.h"

#include "manifest_conditions.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "omn/errors.h"
#include "omn/io/error_list.h"
#include "omn/io/json_document.h"
#include "omn/io/json_reader.h"
#include "omn/io/sha256.h"
#include "omn/json_pointer.h"
#include "omn/model/device_spec.h"

namespace omn::intervene {

using nlohmann::json;

namespace {

using Reader = io::JsonReader;

std::string resolvePath(const std::string& p, const std::string& manifest) { return io::resolveAgainst(p, manifest); }

// --- one function per block of the manifest (docs/manifest.md) --------------------------------------

// /checkpoint/shards: a sharded set's shards pinned by file name ({"model-00001-of-00002.safetensors": hex});
// /checkpoint/sha256 pins the index only (io::hashShards checks these, eval::checkpointRecord records them)
void parseShardDigests(const Reader& r, const json& v, const std::string& path, eval::SessionSpec& s) {
  if (!v.is_object()) r.fail("/checkpoint/shards", std::string("expected an object mapping each shard's file name to its SHA-256, got ") + v.type_name());
  s.shard_sha256_where = "manifest " + path + ": /checkpoint/shards";
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string ptr = "/checkpoint/shards/" + escapePointerToken(it.key());
    s.shard_sha256[it.key()] = io::normaliseSha256(r.str(*it, ptr), "manifest " + path + ": " + ptr);
  }
}

void parseCheckpoint(const Reader& r, const json& j, const std::string& path, bool allow_unverified, eval::SessionSpec& s) {
  const json& ck = r.object(r.need(j, "", "checkpoint"), "/checkpoint", {"path", "sha256", "config_sha256", "shards", "preset", "state_key"});
  s.checkpoint = resolvePath(r.str(r.need(ck, "/checkpoint", "path"), "/checkpoint/path"), path);
  if (const json* v = r.opt(ck, "sha256")) {
    try {
      s.sha256 = io::normaliseSha256(r.str(*v, "/checkpoint/sha256"), "manifest " + path + ": /checkpoint/sha256");
    } catch (const UsageError& e) {
      throw UsageError(e.what());
    }
  } else if (!allow_unverified) {
    r.fail("/checkpoint/sha256", "required (the checkpoint must be verified; pass --allow-unverified to run without)");
  }
  if (const json* v = r.opt(ck, "preset")) {  // a built-in name, or a preset file beside the manifest
    s.preset = r.str(*v, "/checkpoint/preset");
    if (s.preset.find('/') != std::string::npos || (s.preset.size() > 5 && s.preset.substr(s.preset.size() - 5) == ".json"))
      s.preset = resolvePath(s.preset, path);
  }
  if (const json* v = r.opt(ck, "state_key")) s.state_key = r.str(*v, "/checkpoint/state_key");
  if (const json* v = r.opt(ck, "config_sha256"))  // a model folder's config.json
    s.config_sha256 = io::normaliseSha256(r.str(*v, "/checkpoint/config_sha256"), "manifest " + path + ": /checkpoint/config_sha256");
  if (const json* v = r.opt(ck, "shards")) parseShardDigests(r, *v, path, s);
  s.allow_unverified = allow_unverified;
}

void parseTokens(const Reader& r, const json& j, const std::string& path, eval::SessionSpec& s) {
  const json& tk = r.object(r.need(j, "", "tokens"), "/tokens",
                            {"path", "sha256", "format", "eos", "offsets", "offsets_sha256", "tokenizer_revision", "out_of_vocabulary"});
  s.tokens.path = resolvePath(r.str(r.need(tk, "/tokens", "path"), "/tokens/path"), path);
  s.tokens_sha256 = io::normaliseSha256(r.str(r.need(tk, "/tokens", "sha256"), "/tokens/sha256"),
                                        "manifest " + path + ": /tokens/sha256");
  if (const json* v = r.opt(tk, "format")) s.tokens.format = r.choice(*v, "/tokens/format", eval::kTokenFormats);
  if (const json* v = r.opt(tk, "eos")) s.tokens.eos = r.integer(*v, "/tokens/eos", 0);
  if (const json* v = r.opt(tk, "offsets")) s.tokens.offsets = resolvePath(r.str(*v, "/tokens/offsets"), path);
  if (s.tokens.eos && !s.tokens.offsets.empty()) r.fail("/tokens/offsets", "give eos or offsets, not both");
  if (const json* v = r.opt(tk, "offsets_sha256")) {
    if (s.tokens.offsets.empty()) r.fail("/tokens/offsets_sha256", "pins an offsets file, and /tokens/offsets gives none");
    s.offsets_sha256 = io::normaliseSha256(r.str(*v, "/tokens/offsets_sha256"), "manifest " + path + ": /tokens/offsets_sha256");
  }
  if (const json* v = r.opt(tk, "out_of_vocabulary")) s.out_of_vocab = r.choice(*v, "/tokens/out_of_vocabulary", eval::kOutOfVocabulary);
  s.tokenizer_revision = r.str(r.need(tk, "/tokens", "tokenizer_revision"), "/tokens/tokenizer_revision");
  if (s.tokenizer_revision.empty()) r.fail("/tokens/tokenizer_revision", "must not be empty");
}

void parseRows(const Reader& r, const json& j, eval::SessionSpec& s) {
  const json& rw = r.object(r.need(j, "", "rows"), "/rows", {"seq_len", "num_seqs", "up_to", "selection", "seed", "form"});
  s.seq_len = r.integer(r.need(rw, "/rows", "seq_len"), "/rows/seq_len", 2);
  s.num_seqs = static_cast<std::size_t>(r.integer(r.need(rw, "/rows", "num_seqs"), "/rows/num_seqs", 1, eval::kMaxNumSeqs));
  if (const json* v = r.opt(rw, "up_to")) s.up_to = r.boolean(*v, "/rows/up_to");
  if (const json* v = r.opt(rw, "selection")) s.selection = r.choice(*v, "/rows/selection", eval::kSelectionModes);
  if (const json* v = r.opt(rw, "seed")) s.selection_seed = static_cast<std::uint64_t>(r.integer(*v, "/rows/seed", 0));
  if (const json* v = r.opt(rw, "form")) s.row_form = r.choice(*v, "/rows/form", eval::kRowForms);
}

void parseStatistics(const Reader& r, const json& j, Manifest& m) {
  const auto& s = m.session;
  if (const json* v = r.opt(j, "groups")) {
    m.groups = static_cast<int>(r.integer(*v, "/groups", 1, std::numeric_limits<int>::max()));
    m.groups_given = true;
  }
  if (m.groups_given && static_cast<std::size_t>(m.groups) > s.num_seqs)
    r.fail("/groups", "more groups (" + std::to_string(m.groups) + ") than /rows/num_seqs (" + std::to_string(s.num_seqs) + ")");
  if (const json* b = r.opt(j, "bootstrap")) {
    r.object(*b, "/bootstrap", {"resamples", "seed", "confidence", "multiplicity"});
    if (const json* v = r.opt(*b, "multiplicity")) m.bootstrap.multiplicity = r.choice(*v, "/bootstrap/multiplicity", eval::kMultiplicity);
    if (const json* v = r.opt(*b, "resamples")) m.bootstrap.resamples = static_cast<int>(r.integer(*v, "/bootstrap/resamples", 1, 100000000));
    if (const json* v = r.opt(*b, "seed")) m.bootstrap.seed = static_cast<std::uint64_t>(r.integer(*v, "/bootstrap/seed", 0));
    if (const json* v = r.opt(*b, "confidence")) {
      m.bootstrap.confidence = r.num(*v, "/bootstrap/confidence");
      if (!(m.bootstrap.confidence > 0 && m.bootstrap.confidence < 1)) r.fail("/bootstrap/confidence", "expected a number in (0, 1)");
    }
  }
}

void parseModel(const Reader& r, const json& j, eval::SessionSpec& s, double& noise_floor, bool& confirm_fp32) {
  if (const json* md = r.opt(j, "model")) {
    r.object(*md, "/model", {"attention", "dtype", "device", "batch", "threads", "noise_floor", "confirm_fp32"});
    if (const json* v = r.opt(*md, "noise_floor")) {
      noise_floor = r.num(*v, "/model/noise_floor");
      if (!(noise_floor >= 0) || !std::isfinite(noise_floor)) r.fail("/model/noise_floor", "expected nats per token >= 0");
    }
    if (const json* v = r.opt(*md, "confirm_fp32")) confirm_fp32 = r.boolean(*v, "/model/confirm_fp32");
    if (const json* v = r.opt(*md, "attention")) s.attention = r.choice(*v, "/model/attention", model::kAttentionRequests);
    if (const json* v = r.opt(*md, "dtype")) s.dtype = r.choice(*v, "/model/dtype", model::kDtypeRequests);
    if (const json* v = r.opt(*md, "device")) s.device = model::checkDeviceSpec(r.str(*v, "/model/device"), r.label() + ": /model/device");
    if (const json* v = r.opt(*md, "batch")) s.batch = static_cast<int>(r.integer(*v, "/model/batch", 0, eval::kMaxBatch));  // 0: auto
    if (const json* v = r.opt(*md, "threads")) s.threads = static_cast<int>(r.integer(*v, "/model/threads", 0, 4096));
  }
}

void parseOutput(const Reader& r, const json& j, const std::string& path, Manifest& m) {
  if (const json* o = r.opt(j, "output")) {
    r.object(*o, "/output", {"json", "csv"});
    if (const json* v = r.opt(*o, "json")) m.output_json = resolvePath(r.str(*v, "/output/json"), path);
    if (const json* v = r.opt(*o, "csv")) m.output_csv = resolvePath(r.str(*v, "/output/csv"), path);
    if (!m.output_csv.empty() && m.output_csv == m.output_json) r.fail("/output/csv", "the same file as /output/json");
  }
}

}  // namespace

Manifest parseManifest(const json& j, const std::string& path, const std::string& sha256, bool allow_unverified) {
  const Reader r("manifest " + path);
  Manifest m;
  m.path = path;
  m.sha256 = sha256;
  m.verbatim = j;
  r.object(j, "", {"schema", "description", "checkpoint", "tokens", "rows", "groups", "bootstrap", "model", "conditions", "output", "reported"});
  r.schema(j, "omn-audit/manifest@1");
  if (const json* d = r.opt(j, "description")) r.str(*d, "/description");
  auto& s = m.session;
  // an error about an option names where the manifest set it, not a CLI flag
  for (auto [field, ptr] : {std::pair{&s.names.sha256, "/checkpoint/sha256"}, {&s.names.config_sha256, "/checkpoint/config_sha256"},
                            {&s.names.tokenizer_revision, "/tokens/tokenizer_revision"},
                            {&s.names.attention, "/model/attention"},
                            {&s.names.dtype, "/model/dtype"}, {&s.names.device, "/model/device"},
                            {&s.names.batch, "/model/batch"}, {&s.names.seq_len, "/rows/seq_len"},
                            {&s.names.checkpoint, "/checkpoint/path"}, {&s.names.tokens, "/tokens/path"}, {&s.names.offsets, "/tokens/offsets"},
                            {&s.names.tokens_sha256, "/tokens/sha256"}, {&s.names.offsets_sha256, "/tokens/offsets_sha256"},
                            {&s.names.num_seqs, "/rows/num_seqs"}})
    *field = r.label() + ": " + ptr;
  // each section read on its own, unless it is read against one that failed; every mistake in one error
  io::ErrorList errors(r.label());
  errors.check([&] { parseCheckpoint(r, j, path, allow_unverified, s); });
  errors.check([&] { parseTokens(r, j, path, s); });
  if (errors.check([&] { parseRows(r, j, s); })) errors.check([&] { parseStatistics(r, j, m); });  // groups <= rows
  errors.check([&] { parseModel(r, j, s, m.noise_floor, m.confirm_fp32); });
  errors.check([&] { parseOutput(r, j, path, m); });
  const bool reported_failed = !errors.check([&] { detail::parseReported(r, j, m); });
  errors.check([&] { detail::parseConditions(r, j, m, reported_failed, errors); });
  errors.throwIfAny();
  return m;
}

Manifest loadManifest(const std::string& path, bool allow_unverified) {
  const std::string text = io::readTextFile(path, "manifest");  // a FIFO or device is refused, not waited on
  const json j = io::parseJson(text, "manifest " + path);
  Manifest m = parseManifest(j, path, io::sha256Bytes(text.data(), text.size()), allow_unverified);
  m.bytes = text;
  return m;
}

std::optional<Manifest> confirmationManifest(const Manifest& m, const documents::InterventionDocument& result) {
  std::set<std::string> below;
  for (const documents::SweepCondition& c : result.conditions)
    if (c.vs_control.below_noise_floor.value_or(false)) below.insert(c.id);
  if (below.empty()) return std::nullopt;
  Manifest c = m;
  c.session.dtype = model::DtypeRequest::FP32;
  c.session.names.dtype = "/model/confirm_fp32";
  c.conditions.clear();
  for (const Condition& x : m.conditions)
    if (below.count(x.id)) c.conditions.push_back(x);
  c.confirm_fp32 = false;
  c.family_size = m.family_size ? m.family_size : m.conditions.size();  // the hypotheses are the whole manifest's
  c.noise_floor = -1;  // fp32's own floor
  return c;
}

std::vector<std::string> inputFiles(const Manifest& m) {
  std::vector<std::string> in = eval::sessionInputFiles(m.session);
  in.push_back(m.path);
  for (const auto& c : m.conditions)
    for (const auto& st : c.steps)
      if (!st.source.path.empty()) in.push_back(st.source.path);
  return in;
}

std::string confirmationPath(const std::string& out) {
  const std::filesystem::path p(out);
  return (p.parent_path() / (p.stem().string() + ".fp32" + p.extension().string())).string();
}

std::vector<Condition> shardConditions(const std::vector<Condition>& all, int index, int count) {
  if (count < 1 || index < 0 || index >= count)
    throw UsageError("--shard: expected i/N with 0 <= i < N, got " + std::to_string(index) + "/" + std::to_string(count));
  std::vector<Condition> out;
  for (std::size_t k = 0; k < all.size(); ++k)
    if (static_cast<int>(k % static_cast<std::size_t>(count)) == index) out.push_back(all[k]);
  return out;
}

}  // namespace omn::intervene
