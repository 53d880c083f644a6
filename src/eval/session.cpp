#include "omn/eval/session.h"

#include "session_pins.h"

#include <spdlog/spdlog.h>

#include <filesystem>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>

#include <ATen/Parallel.h>

#include "omn/audit/run_directory.h"
#include "omn/errors.h"
#include "omn/eval/memory_preflight.h"
#include "omn/io/hash_beside.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/io/checkpoint.h"
#include "omn/io/tensor_index.h"
#include "omn/model/hf_config.h"
#include "omn/model/model_type_evidence.h"
#include "omn/model/products.h"
#include "omn/model/weights.h"
#include "omn/output/json_file.h"

namespace omn::eval {

namespace {

// The training length a run omn-audit trained records in its checkpoint's metadata (the run's
// config, /omn_audit/config/seq_len, stored as a JSON string); -1 where there is none.
std::int64_t trainedSeqLen(const nlohmann::json& metadata) {
  const auto it = metadata.find("omn_audit");
  if (it == metadata.end() || !it->is_string()) return -1;
  nlohmann::json run;
  try {  // the run's own record: its depth limited as every JSON the tool reads; unreadable, no length
    run = io::parseJson(it->get<std::string>(), "the checkpoint's /omn_audit metadata");
  } catch (const FormatError&) {
    return -1;
  }
  const nlohmann::json* v = run.is_object() && run.contains("config") && run["config"].is_object() && run["config"].contains("seq_len")
                                ? &run["config"]["seq_len"] : nullptr;
  return v && v->is_number_integer() && v->get<std::int64_t>() >= 2 ? v->get<std::int64_t>() : -1;
}

// The row length: as given, or (not given) the training length the checkpoint records; said on
// stderr, and recorded, when the rows pass the training length or the model's maximum.
void resolveRowLength(Session& s) {
  s.trained_seq_len = trainedSeqLen(s.ck->metadata);
  if (s.location.isFolder()) {
    const auto it = s.location.config.find("max_position_embeddings");
    if (it != s.location.config.end() && it->is_number_integer() && it->get<std::int64_t>() > 0) s.max_positions = it->get<std::int64_t>();
  }
  if (s.spec.seq_len_default) {
    s.seq_len_source = "default";
    if (s.trained_seq_len > 0) {
      s.spec.seq_len = s.trained_seq_len;
      s.seq_len_source = "training length";
      spdlog::info("rows of {} tokens: the training length the checkpoint records ({} sets another)", s.spec.seq_len, s.spec.names.seq_len);
    } else if (s.max_positions > 0 && s.spec.seq_len > s.max_positions) {
      s.spec.seq_len = s.max_positions;
      s.seq_len_source = "model maximum";
      spdlog::info("rows of {} tokens: {}'s max_position_embeddings ({} sets another)", s.spec.seq_len, s.location.config_path,
                   s.spec.names.seq_len);
    }
  }
  if (s.trained_seq_len > 0 && s.spec.seq_len > s.trained_seq_len)
    spdlog::warn("rows of {} tokens are past the training length the checkpoint records ({}): the model is scored where it never "
                 "trained (recorded as selection.past_training_length)", s.spec.seq_len, s.trained_seq_len);
  if (s.max_positions > 0 && s.spec.seq_len > s.max_positions)
    spdlog::warn("rows of {} tokens are past the model's maximum ({}'s max_position_embeddings {}) (recorded as "
                 "selection.past_training_length)", s.spec.seq_len, s.location.config_path, s.max_positions);
}

// A Hugging Face model folder: its weights file is the checkpoint, its config.json the
// architecture (returned; none for a file).
std::optional<model::HfArchitecture> locateWeights(Session& s, const SessionSpec& spec) {
  const OptionNames& n = spec.names;
  audit::refuseRunDirectory(spec.checkpoint);
  s.location = io::locateModel(spec.checkpoint);
  s.spec.checkpoint = s.location.weights;
  if (!spec.config_sha256.empty() && !s.location.isFolder())
    throw UsageError(n.config_sha256 + " pins a model folder's config.json; " + spec.checkpoint + " is a file, not a folder");
  if (!spec.digests_path.empty()) adoptDigestList(s, spec);
  if (!s.spec.config_sha256.empty())  // config.json gives the architecture: pinned, it is checked first
    io::requireSha256(s.location.config_path, io::normaliseSha256(s.spec.config_sha256, n.config_sha256), s.location.config_sha256);
  std::optional<model::HfArchitecture> hf;
  if (s.location.isFolder()) hf = model::readHfConfig(s.location.config, s.location.config_path);
  return hf;
}

// The checkpoint opened, its preset and configuration, and the dtype the model computes in.
void describeModel(Session& s, const SessionSpec& spec, const model::HfArchitecture* hf) {
  const std::string& weights = s.spec.checkpoint;
  io::OpenOptions oo;
  oo.state_key = spec.state_key;
  s.ck = io::openCheckpoint(weights, oo);
  s.preset = model::resolvePreset(spec.preset, s.ck->index, s.ck->metadata, weights, hf);
  if (hf && spec.preset.empty()) model::requireModelTypeAgreesWithTensors(s.preset, s.ck->index, *hf);
  s.config = model::inferConfig(s.preset, s.ck->index, weights);
  // a model folder's tie_word_embeddings ties the head to the embedding, as transformers does, even
  // where the weights hold an lm_head too: said when that head differs (profile compares them too)
  const auto tie = s.preset.architecture_from.find("tied_output");
  const io::TensorRef* head = s.config.tied_output ? s.ck->index.find(s.preset.tensorName("output", 0)) : nullptr;
  if (tie != s.preset.architecture_from.end() && head && !io::sameTensorBytes(*s.ck, s.ck->index.at(s.config.name("embedding")), *head))
    spdlog::warn("{} ties the output head to the embedding (as transformers does): the weights' '{}' differs from the embedding "
                 "and is not used", tie->second, head->name);
  s.dtype = model::workingDtype(spec.dtype, s.ck->index.at(s.config.name("wq", 0)).dtype);
  if (s.dtype == at::kHalf && s.device.is_cpu())  // auto on an fp16 checkpoint
    throw UsageError(spec.names.dtype + " auto: the checkpoint is fp16, which the CPU cannot multiply; use bf16 or fp32");
}

// the token set and the rows
void selectSessionRows(Session& s, const SessionSpec& spec) {
  s.tokens = readTokenSet(spec.tokens);
  requireTokenPins(s, s.tokens.sha256, s.tokens.offsets_sha256);  // a flag's pins or the --digests list's
  if (spec.out_of_vocab == OutOfVocabulary::Drop) dropOutOfVocabulary(s.tokens, s.config.vocab_size);
  checkVocabulary(s.tokens, s.config.vocab_size);
  s.row_form = spec.row_form;
  std::vector<Row> all = buildRows(s.tokens, s.row_form, s.spec.seq_len);
  s.rows_available = all.size();
  s.selection = selectRows(all.size(), spec.num_seqs, spec.selection, spec.selection_seed, spec.up_to, spec.names.num_seqs);
  for (std::size_t i : s.selection.indices) s.rows.push_back(std::move(all[i]));
  if (s.spec.batch <= 0) s.spec.batch = autoBatch(s.spec.seq_len, s.rows.size());
}

// The attention path chosen and the weights loaded; what cannot fit is refused with its figures
// before a weight is loaded (on the CPU: a GPU's memory is its own)
void loadSessionModel(Session& s, const SessionSpec& spec) {
  const OptionNames& n = spec.names;
  const model::AttentionShape shape{std::min<std::int64_t>(s.spec.batch, static_cast<std::int64_t>(s.rows.size())),
                                    s.config.n_heads, s.spec.seq_len};
  s.path = model::chooseAttention(spec.attention, s.device, s.dtype, anyRowPacked(s.rows), n.attention, n.dtype, shape);
  if (s.device.is_cpu()) {
    std::string source;
    const std::int64_t available = availableMemory(&source);
    requireMemory(s.config, s.dtype, s.path, shape, available, source, {n.attention, n.batch, n.seq_len});
  }
  s.model = std::make_unique<model::Transformer>(s.config, model::loadWeights(s.ck, s.config, s.dtype, s.device));
}

}  // namespace

void checkSessionSpec(const SessionSpec& spec) {
  const OptionNames& n = spec.names;
  if (spec.tokenizer_revision.empty() && spec.tokenizer_revision_required)
    throw UsageError(n.tokenizer_revision + " is required: the tokenization is recorded, never implied");
  if (spec.sha256.empty() && !spec.allow_unverified)
    throw UsageError("the checkpoint's sha256 is required (or pass --allow-unverified)");
  if (!spec.sha256.empty()) io::normaliseSha256(spec.sha256, n.sha256);
  if (!spec.tokens_sha256.empty()) io::normaliseSha256(spec.tokens_sha256, n.tokens_sha256);
  if (!spec.offsets_sha256.empty()) io::normaliseSha256(spec.offsets_sha256, n.offsets_sha256);
  if (!spec.offsets_sha256.empty() && spec.tokens.offsets.empty())
    throw UsageError(n.offsets_sha256 + " pins an offsets file, and none is given (" + n.offsets + ")");
  if (spec.device.rfind("cuda", 0) == 0 && !at::hasCUDA())
    throw UsageError(n.device + " " + spec.device + ": this libtorch has no CUDA support or no GPU is visible");
  if (spec.dtype == model::DtypeRequest::FP16 && at::Device(spec.device).is_cpu())
    throw UsageError(n.dtype + " fp16 on the CPU: libtorch has no fp16 matrix product there; use bf16 or fp32");
  model::checkAttentionRequest(spec.attention, at::Device(spec.device), spec.dtype, n.attention, n.dtype);
  for (const auto& [name, path] : {std::pair{&n.checkpoint, &spec.checkpoint}, {&n.tokens, &spec.tokens.path}, {&n.offsets, &spec.tokens.offsets}}) {
    struct stat st {};
    if (!path->empty() && ::stat(path->c_str(), &st) != 0)
      throw UsageError(*name + " " + *path + ": cannot open for reading: " + std::strerror(errno));
  }
}

std::unique_ptr<Session> openSession(const SessionSpec& spec) {
  auto s = std::make_unique<Session>();
  s->spec = spec;
  const OptionNames& n = spec.names;
  // every option that can be refused without the checkpoint is refused before it is hashed
  checkSessionSpec(spec);
  if (spec.tokenizer_revision.empty())
    spdlog::warn("no {}: the tokenizer revision is recorded as unknown (null); the result is a quick look, not the "
                 "reproduction standard (docs/eval.md)", n.tokenizer_revision);
  s->device = at::Device(spec.device);
  s->threads = at::get_num_threads();  // set by the command (model::useThreads), recorded here
  const std::optional<model::HfArchitecture> hf = locateWeights(*s, spec);
  const std::string expected = s->spec.sha256.empty() ? "" : io::normaliseSha256(s->spec.sha256, n.sha256);
  // The hash streams the whole checkpoint beside the parse and the weight loading (the parsers
  // execute nothing); nothing is evaluated before it is checked, and a wrong digest is reported
  // as such even when the file also fails to parse.
  const std::string& weights = s->spec.checkpoint;
  io::HashBeside hashing(weights, expected);
  try {
    describeModel(*s, spec, hf ? &*hf : nullptr);
    resolveRowLength(*s);
    selectSessionRows(*s, spec);
    loadSessionModel(*s, spec);
  } catch (...) {  // an integrity failure outranks the error it may have caused: the weights' first
    hashing.verify();
    requirePinnedFilesBeforeError(*s, spec);
    throw;
  }
  s->checkpoint_sha256 = hashing.verify();
  addShardPins(*s);
  s->shards = io::hashShards(*s->ck, s->spec.shard_sha256, s->spec.shard_sha256_where);  // the digest pins an index only
  if (!allShardsVerified(*s) && !expected.empty())
    spdlog::warn("{}: {} pins the index file only; its shards are NOT verified unless {} pins them: the result is not "
                 "called verified", weights, spec.sha256.empty() ? s->spec.shard_sha256_where : n.sha256, s->spec.shard_sha256_where);
  // the digest was read beside the mapping, by path: it describes the mapped file only if that
  // file did not change in between
  requireCheckpointUnchanged(*s, "while it was hashed and loaded", false);
  return s;
}

void requireCheckpointUnchanged(const Session& s, const std::string& when, bool rehash) {
  io::requireUnchanged(*s.ck, when);
  if (!rehash) return;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string now = io::sha256File(s.spec.checkpoint);
  spdlog::debug("checkpoint {}: SHA-256 read again {} in {:.3f} s", s.spec.checkpoint, when,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (now != s.checkpoint_sha256)
    throw IntegrityError("checkpoint " + s.spec.checkpoint + " changed during the run (noticed " + when +
                         "): its SHA-256 is now " + now + ", was " + s.checkpoint_sha256 +
                         " at the start, with size and mtime unchanged (rewritten in place and its time reset?)");
}

bool allShardsVerified(const Session& s) {
  return std::all_of(s.shards.begin(), s.shards.end(), [](const io::ShardDigest& d) { return d.verified; });
}

documents::EvalCheckpoint checkpointRecord(const Session& s) {
  documents::EvalCheckpoint c;
  c.path = s.spec.checkpoint;
  c.sha256 = s.checkpoint_sha256;
  c.sha256_verified = !s.spec.sha256.empty() && allShardsVerified(s);  // never said of an unpinned shard
  c.format = s.ck->format;
  c.state_key = s.ck->state_key;
  c.metadata = s.ck->metadata;
  if (!s.shards.empty()) {  // a sharded set: each shard's digest, and how much of the set was verified
    c.shards.emplace();
    std::size_t verified = !s.spec.sha256.empty();
    for (const auto& d : s.shards) c.shards->push_back({d.path, d.sha256, d.verified}), verified += d.verified;
    c.verified = verified == s.shards.size() + 1 ? "all" : verified ? "partial" : "none";
  }
  if (s.location.isFolder()) {  // config.json chose the architecture: its digest is part of the result
    const auto type = s.location.config.find("model_type");
    c.folder = documents::ModelFolder{s.location.given, s.location.config_path, s.location.config_sha256, !s.spec.config_sha256.empty(),
                                      type != s.location.config.end() && type->is_string() ? std::optional<std::string>(*type) : std::nullopt};
  }
  return c;
}

namespace {
// Which OpenBLAS kernels serve the fp32 products (OpenBLAS reads only its environment), and who
// chose them: omn-audit's plugin loader (SessionSpec::blas_coretype_chosen), the user, or OpenBLAS.
nlohmann::json blasJson(const SessionSpec& spec) {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  return {{"openblas_coretype", core ? nlohmann::json(core) : nlohmann::json(nullptr)},
          {"chosen_by", !spec.blas_coretype_chosen.empty() ? "omn-audit" : core ? "environment" : "openblas"}};
}
}  // namespace

// The working dtype as the --dtype flag and /model/dtype spell it (bf16, fp16, fp32).
std::string dtypeName(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16: return "bf16";
    case at::kHalf: return "fp16";
    case at::kFloat: return "fp32";
    default: return c10::toString(t);
  }
}

documents::EvalModel modelRecord(const Session& s) {
  const auto& w = s.model->weights();
  const nlohmann::json products = model::productsJson(s.dtype, s.device);
  documents::EvalModel m;
  m.config = model::toJson(s.config);
  m.preset = s.preset.name;
  m.preset_source = s.preset.source;
  m.dtype = dtypeName(s.dtype);
  m.device = s.device.str();
  m.attention = model::attentionName(s.path);
  m.attention_requested = io::choiceName(model::kAttentionRequests, s.spec.attention);
  m.threads = s.threads;
  m.batch = s.spec.batch;
  m.weights = {{"zero_copy", w.zero_copy}, {"copied", w.copied}};
  m.head_identical_to_embedding = w.head_identical_to_embedding;
  m.blas = blasJson(s.spec);
  m.products = documents::Products{products.at("bf16").get<std::string>(), products.at("reason").get<std::string>()};
  return m;
}

documents::TokensRecord tokensRecord(const Session& s) {
  documents::TokensRecord t;
  t.path = s.tokens.path;
  t.sha256 = s.tokens.sha256;
  t.format = io::choiceName(kTokenFormats, s.tokens.format);
  if (!s.spec.tokenizer_revision.empty()) t.tokenizer_revision = s.spec.tokenizer_revision;
  t.n_tokens = static_cast<std::int64_t>(s.tokens.tokens.size());
  t.n_documents = static_cast<std::int64_t>(s.tokens.doc_starts.size());
  t.eos = s.tokens.eos;
  t.offsets = s.tokens.offsets_path.empty() ? nlohmann::json(nullptr)
                                            : nlohmann::json{{"path", s.tokens.offsets_path}, {"sha256", s.tokens.offsets_sha256}};
  t.out_of_vocabulary = documents::OutOfVocabulary{
      io::choiceName(kOutOfVocabulary, s.spec.out_of_vocab),
      s.tokens.dropped_out_of_vocab < 0 ? std::nullopt : std::optional<std::int64_t>(s.tokens.dropped_out_of_vocab), s.config.vocab_size};
  return t;
}

documents::SelectionRecord selectionRecord(const Session& s) {
  auto known = [](std::int64_t n) { return n > 0 ? std::optional<std::int64_t>(n) : std::nullopt; };  // -1: not recorded
  documents::SelectionRecord r;
  r.row_form = rowFormName(s.row_form);
  r.seq_len = s.spec.seq_len;
  r.seq_len_source = s.seq_len_source;
  r.training_seq_len = known(s.trained_seq_len);
  r.model_max_positions = known(s.max_positions);
  r.past_training_length = (s.trained_seq_len > 0 && s.spec.seq_len > s.trained_seq_len) || (s.max_positions > 0 && s.spec.seq_len > s.max_positions);
  r.num_seqs = static_cast<std::int64_t>(s.rows.size());
  r.num_seqs_requested = static_cast<std::int64_t>(s.spec.num_seqs);
  r.up_to = s.spec.up_to;
  r.mode = io::choiceName(kSelectionModes, s.selection.mode);
  r.seed = s.selection.seed;
  r.rows_available = static_cast<std::int64_t>(s.rows_available);
  r.row_indices.assign(s.selection.indices.begin(), s.selection.indices.end());
  for (const auto& row : s.rows) r.row_token_offsets.push_back(static_cast<std::int64_t>(row.offset));
  return r;
}

}  // namespace omn::eval
