#include "omn/documents/eval_document.h"

#include "json_fields.h"

namespace omn::documents {

using fields::get;
using fields::putIfSet;
using fields::write;
using nlohmann::json;

void from_json(const json& j, EvalCheckpoint& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "sha256_verified", v.sha256_verified);
  get(j, "format", v.format);
  get(j, "state_key", v.state_key);
  get(j, "metadata", v.metadata);
  get(j, "shards", v.shards);
  get(j, "verified", v.verified);
  get(j, "folder", v.folder);
}
void to_json(json& j, const EvalCheckpoint& v) {
  j = {{"path", v.path},     {"sha256", v.sha256},       {"sha256_verified", v.sha256_verified},
       {"format", v.format}, {"state_key", v.state_key}, {"metadata", v.metadata}};
  putIfSet(j, "shards", v.shards);
  putIfSet(j, "verified", v.verified);
  putIfSet(j, "folder", v.folder);
}

void from_json(const json& j, Products& v) {
  get(j, "bf16", v.bf16);
  get(j, "reason", v.reason);
}
void to_json(json& j, const Products& v) { j = {{"bf16", v.bf16}, {"reason", v.reason}}; }

void from_json(const json& j, EvalModel& v) {
  get(j, "config", v.config);
  try {
    get(v.config, "preset", v.preset);
  } catch (fields::FieldError& e) {
    e.prepend("config");
    throw;
  }
  get(j, "preset_source", v.preset_source);
  get(j, "dtype", v.dtype);
  get(j, "device", v.device);
  get(j, "attention", v.attention);
  get(j, "attention_requested", v.attention_requested);
  get(j, "threads", v.threads);
  get(j, "batch", v.batch);
  get(j, "weights", v.weights);
  get(j, "head_identical_to_embedding", v.head_identical_to_embedding);
  get(j, "blas", v.blas);
  get(j, "products", v.products);
}
void to_json(json& j, const EvalModel& v) {
  j = {{"config", v.config},
       {"preset_source", v.preset_source},
       {"dtype", v.dtype},
       {"device", v.device},
       {"attention", v.attention},
       {"attention_requested", v.attention_requested},
       {"threads", v.threads},
       {"batch", v.batch},
       {"weights", v.weights},
       {"head_identical_to_embedding", v.head_identical_to_embedding}};
  putIfSet(j, "blas", v.blas);
  putIfSet(j, "products", v.products);
}

std::optional<std::int64_t> EvalModel::nLayers() const {
  const auto it = config.is_object() ? config.find("n_layers") : config.end();
  if (it == config.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

void from_json(const json& j, OutOfVocabulary& v) {
  get(j, "policy", v.policy);
  get(j, "dropped", v.dropped);
  get(j, "vocab_size", v.vocab_size);
}
void to_json(json& j, const OutOfVocabulary& v) { j = {{"policy", v.policy}, {"dropped", write(v.dropped)}, {"vocab_size", v.vocab_size}}; }

void from_json(const json& j, TokensRecord& v) {
  get(j, "path", v.path);
  get(j, "sha256", v.sha256);
  get(j, "format", v.format);
  get(j, "tokenizer_revision", v.tokenizer_revision);
  get(j, "n_tokens", v.n_tokens);
  get(j, "n_documents", v.n_documents);
  get(j, "eos", v.eos);
  get(j, "offsets", v.offsets);
  get(j, "out_of_vocabulary", v.out_of_vocabulary);
}
void to_json(json& j, const TokensRecord& v) {
  j = {{"path", v.path},
       {"sha256", v.sha256},
       {"format", v.format},
       {"tokenizer_revision", write(v.tokenizer_revision)},
       {"n_tokens", v.n_tokens},
       {"n_documents", v.n_documents},
       {"eos", write(v.eos)},
       {"offsets", v.offsets}};
  putIfSet(j, "out_of_vocabulary", v.out_of_vocabulary);
}

void from_json(const json& j, SelectionRecord& v) {
  get(j, "row_form", v.row_form);
  get(j, "seq_len", v.seq_len);
  get(j, "seq_len_source", v.seq_len_source);
  get(j, "training_seq_len", v.training_seq_len);
  get(j, "model_max_positions", v.model_max_positions);
  get(j, "past_training_length", v.past_training_length);
  get(j, "num_seqs", v.num_seqs);
  get(j, "num_seqs_requested", v.num_seqs_requested);
  get(j, "up_to", v.up_to);
  get(j, "mode", v.mode);
  get(j, "seed", v.seed);
  get(j, "rows_available", v.rows_available);
  get(j, "row_indices", v.row_indices);
  get(j, "row_token_offsets", v.row_token_offsets);
}
void to_json(json& j, const SelectionRecord& v) {
  j = {{"row_form", v.row_form}, {"seq_len", v.seq_len},   {"num_seqs", v.num_seqs},
       {"mode", v.mode},         {"seed", v.seed},         {"rows_available", v.rows_available},
       {"row_indices", v.row_indices}, {"row_token_offsets", v.row_token_offsets}};
  putIfSet(j, "seq_len_source", v.seq_len_source);
  putIfSet(j, "training_seq_len", v.training_seq_len);
  putIfSet(j, "model_max_positions", v.model_max_positions);
  putIfSet(j, "past_training_length", v.past_training_length);
  putIfSet(j, "num_seqs_requested", v.num_seqs_requested);
  putIfSet(j, "up_to", v.up_to);
}

void from_json(const json& j, SequenceScores& v) {
  get(j, "nll_sum", v.nll_sum);
  get(j, "tokens", v.tokens);
}
void to_json(json& j, const SequenceScores& v) { j = {{"nll_sum", write(v.nll_sum)}, {"tokens", v.tokens}}; }

void from_json(const json& j, PerplexityInterval& v) {
  get(j, "low", v.low);
  get(j, "high", v.high);
  get(j, "confidence", v.confidence);
  get(j, "resamples", v.resamples);
  get(j, "seed", v.seed);
  get(j, "method", v.method);
}
void to_json(json& j, const PerplexityInterval& v) {
  j = {{"low", write(v.low)},         {"high", write(v.high)}, {"confidence", v.confidence},
       {"resamples", v.resamples}, {"seed", v.seed},          {"method", v.method}};
}

void from_json(const json& j, ScoreGroup& v) {
  get(j, "first", v.first);
  get(j, "count", v.count);
  get(j, "nll_sum", v.nll_sum);
  get(j, "tokens", v.tokens);
  get(j, "perplexity", v.perplexity);
}
void to_json(json& j, const ScoreGroup& v) {
  j = {{"first", v.first}, {"count", v.count}, {"nll_sum", write(v.nll_sum)}, {"tokens", v.tokens}, {"perplexity", write(v.perplexity)}};
}

void from_json(const json& j, Scores& v) {
  get(j, "sequences", v.sequences);
  get(j, "nll_sum", v.nll_sum);
  get(j, "tokens", v.tokens);
  get(j, "mean_nll", v.mean_nll);
  get(j, "perplexity", v.perplexity);
  get(j, "non_finite", v.non_finite);
  get(j, "perplexity_ci", v.perplexity_ci);
  get(j, "groups", v.groups);
}
void to_json(json& j, const Scores& v) {
  j = {{"sequences", v.sequences},
       {"nll_sum", write(v.nll_sum)},
       {"tokens", v.tokens},
       {"mean_nll", write(v.mean_nll)},
       {"perplexity", write(v.perplexity)},
       {"non_finite", v.non_finite},
       {"perplexity_ci", v.perplexity_ci},
       {"groups", write(v.groups)}};
}

void from_json(const json& j, EvalTiming& v) {
  get(j, "seconds", v.seconds);
  get(j, "tokens_per_second", v.tokens_per_second);
}
void to_json(json& j, const EvalTiming& v) { j = {{"seconds", v.seconds}, {"tokens_per_second", v.tokens_per_second}}; }

void from_json(const json& j, EvalDocument& v) {
  get(j, "provenance", v.provenance);
  get(j, "checkpoint", v.checkpoint);
  get(j, "model", v.model);
  get(j, "tokens", v.tokens);
  get(j, "selection", v.selection);
  get(j, "result", v.result);
  get(j, "timing", v.timing);
}

EvalDocument EvalDocument::fromJson(const json& doc, const std::string& label) { return fields::readAs<EvalDocument>(doc, label); }

json EvalDocument::toJson() const {
  return {{"schema", "omn-audit/eval@1"}, {"provenance", provenance}, {"checkpoint", checkpoint}, {"model", model},
          {"tokens", tokens},             {"selection", selection},   {"result", result},         {"timing", timing}};
}

}  // namespace omn::documents
