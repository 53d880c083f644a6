// A Hugging Face tokenizer.json with a BPE model -- byte-level (GPT-2, Llama 3, Qwen3, OLMo2) or
// SentencePiece-style with byte fallback (Llama 2, Mistral, Gemma 3) -- encoding text as
// transformers.js does by default: added tokens found in the raw text first (data/added_tokens.h),
// then each stretch between them normalized, pre-tokenized and byte-pair encoded. Nothing is added
// around the ids: what the post-processor would add is reported, not applied. No libtorch.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/data/added_tokens.h"
#include "omn/data/bpe_model.h"
#include "omn/data/hf_pipeline.h"

namespace omn::data {

// What the post-processor adds around one sequence (TemplateProcessing's "single", Bert/Roberta's
// CLS and SEP); `understood` false for a post-processor this code does not read.
struct PostProcessorAdds {
  std::string type;  // "" when there is none
  bool understood = true;
  std::vector<std::uint32_t> before, after;
};

class HfTokenizer {
 public:
  // Reads and checks `path`; FormatError naming the file and the JSON pointer of anything that is
  // not supported (another model type, a normalizer or pre-tokenizer this code lacks, BPE dropout).
  static std::unique_ptr<HfTokenizer> load(const std::string& path);
  static std::unique_ptr<HfTokenizer> fromJson(const nlohmann::json& j, const std::string& label);

  // Appends the ids of `text` (well-formed UTF-8). Not thread-safe (the model caches pieces).
  void encode(std::string_view text, std::vector<std::uint32_t>& out);

  std::optional<std::uint32_t> idOf(std::string_view token) const { return model_->idOf(token); }
  std::uint64_t vocabularySize() const { return vocab_size_; }  // the largest id + 1
  const PostProcessorAdds& postProcessor() const { return post_; }
  // {"model": "BPE", "byte_fallback": ..., "normalizer": type, "pre_tokenizer": type, "added_tokens": n, ...}
  nlohmann::json describe() const { return description_; }

 private:
  HfTokenizer() = default;
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  std::unique_ptr<BpeModel> model_;
  std::unique_ptr<AddedTokenSplitter> splitter_;
  PostProcessorAdds post_;
  std::uint64_t vocab_size_ = 0;
  nlohmann::json description_;
  std::vector<std::string> pieces_;  // scratch
};

}  // namespace omn::data
