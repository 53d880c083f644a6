// An eval result (omn-audit/eval@1, docs/schema/eval.schema.json; docs/eval.md), typed, and the parts
// a sweep result shares with it: the checkpoint as read, the model as run, the token set, the rows
// selected and the scores of one pass. The blocks the schema leaves open -- the checkpoint's
// metadata, the model's config, how its weights were held -- stay as written. No libtorch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/documents/checkpoint_record.h"
#include "omn/documents/provenance.h"

namespace omn::documents {

struct EvalCheckpoint {
  std::string path, sha256;
  bool sha256_verified = false;
  std::string format, state_key;
  nlohmann::json metadata;
  std::optional<std::vector<ShardFile>> shards;  // a sharded set
  std::optional<std::string> verified;           // a sharded set: "all", "partial" or "none"
  std::optional<ModelFolder> folder;
};

struct Products {
  std::string bf16, reason;  // how bf16 matrix products ran, and why
};

struct EvalModel {
  nlohmann::json config;  // the model's config (model/config.h) as written
  std::string preset;     // its preset's name (config/preset, which the schema requires)
  std::string preset_source, dtype, device, attention, attention_requested;
  std::int64_t threads = 0, batch = 0;
  nlohmann::json weights;  // how the weights are held (zero-copy, copied)
  bool head_identical_to_embedding = false;
  std::optional<nlohmann::json> blas;
  std::optional<Products> products;  // absent before 2026-12-02
  // The config's layer count (empty when absent).
  std::optional<std::int64_t> nLayers() const;
};

struct OutOfVocabulary {
  std::string policy;
  std::optional<std::int64_t> dropped;
  std::int64_t vocab_size = 0;
};

struct TokensRecord {
  std::string path, sha256, format;
  std::optional<std::string> tokenizer_revision;  // empty: not given (a quick look, never a manifest)
  std::int64_t n_tokens = 0, n_documents = 0;
  std::optional<std::int64_t> eos;
  nlohmann::json offsets;  // the document offsets' file, or null
  std::optional<OutOfVocabulary> out_of_vocabulary;
};

struct SelectionRecord {
  std::string row_form;  // "packed", "per-document" or "historical"
  std::int64_t seq_len = 0;
  std::optional<std::string> seq_len_source;
  std::optional<std::optional<std::int64_t>> training_seq_len, model_max_positions;  // absent, null or a count
  std::optional<bool> past_training_length;
  std::int64_t num_seqs = 0;
  std::optional<std::int64_t> num_seqs_requested;
  std::optional<bool> up_to;
  std::string mode;  // "first" or "seeded"
  std::uint64_t seed = 0;
  std::int64_t rows_available = 0;
  std::vector<std::int64_t> row_indices, row_token_offsets;
};

struct SequenceScores {
  std::vector<std::optional<double>> nll_sum;  // empty: not finite
  std::vector<std::int64_t> tokens;
};

struct PerplexityInterval {
  std::optional<double> low, high;
  double confidence = 0;
  std::int64_t resamples = 0;
  std::uint64_t seed = 0;
  std::string method;
};

struct ScoreGroup {
  std::int64_t first = 0, count = 0;
  std::optional<double> nll_sum;
  std::int64_t tokens = 0;
  std::optional<double> perplexity;
};

// The scores of one pass over the rows (eval.schema.json $defs/scores).
struct Scores {
  SequenceScores sequences;
  std::optional<double> nll_sum;
  std::int64_t tokens = 0;
  std::optional<double> mean_nll, perplexity;
  bool non_finite = false;
  PerplexityInterval perplexity_ci;
  std::vector<ScoreGroup> groups;
};

struct EvalTiming {
  double seconds = 0, tokens_per_second = 0;
};

struct EvalDocument {
  Provenance provenance;
  EvalCheckpoint checkpoint;
  EvalModel model;
  TokensRecord tokens;
  SelectionRecord selection;
  Scores result;
  EvalTiming timing;

  static EvalDocument fromJson(const nlohmann::json& doc, const std::string& label);
  nlohmann::json toJson() const;
};

// Shared with the intervention document.
void from_json(const nlohmann::json& j, EvalCheckpoint& v);
void to_json(nlohmann::json& j, const EvalCheckpoint& v);
void from_json(const nlohmann::json& j, EvalModel& v);
void to_json(nlohmann::json& j, const EvalModel& v);
void from_json(const nlohmann::json& j, TokensRecord& v);
void to_json(nlohmann::json& j, const TokensRecord& v);
void from_json(const nlohmann::json& j, SelectionRecord& v);
void to_json(nlohmann::json& j, const SelectionRecord& v);
void from_json(const nlohmann::json& j, Scores& v);
void to_json(nlohmann::json& j, const Scores& v);
void from_json(const nlohmann::json& j, SequenceScores& v);
void to_json(nlohmann::json& j, const SequenceScores& v);

}  // namespace omn::documents
