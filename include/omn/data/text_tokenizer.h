// A model's own tokenizer for `omn-audit tokenize`: a Hugging Face tokenizer.json (data/hf_tokenizer.h),
// a SentencePiece .model, or a model folder holding one. Where it is (locateTokenizer: core, no
// dependencies) and the tokenizer itself (openTokenizer: in omn-audit-text.so only, since
// SentencePiece and libtorch cannot share a process, src/data/corpus_build.cpp). No libtorch.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::data {

enum class TokenizerKind { HuggingFaceJson, SentencePiece };

struct TokenizerLocation {
  std::string given;         // as the user named it
  std::string path, sha256;  // the file read: its SHA-256 is the tokenization revision
  TokenizerKind kind = TokenizerKind::HuggingFaceJson;
  std::string config_path, config_sha256;  // tokenizer_config.json beside it, if any (BOS/EOS names)
};

// A file is a tokenizer.json when its first non-blank byte is "{", else a SentencePiece model; a
// folder holds tokenizer.json (preferred, as transformers loads it) or tokenizer.model. UsageError
// for a path that does not exist or a folder with neither.
TokenizerLocation locateTokenizer(const std::string& path);

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  // Appends the ids of `text` (well-formed UTF-8); nothing is added around them.
  virtual void encode(std::string_view text, std::vector<std::uint32_t>& out) = 0;
  virtual std::uint64_t vocabularySize() const = 0;
  virtual std::optional<std::uint32_t> idOf(std::string_view token) const = 0;
  // The tokenizer's own BOS or EOS ("bos", "eos"): tokenizer_config.json's bos_token/eos_token (else
  // the one token the post-processor puts before/after a text), the SentencePiece model's
  // bos_id/eos_id; nothing when it names none.
  virtual std::optional<std::uint32_t> declared(const std::string& role) const = 0;
  // What the tokenizer is, and what its post-processor would add (recorded, never applied):
  // {"kind", "model", "vocab_size", ..., "post_processor": {"type", "would_add_before", "would_add_after"}}
  virtual nlohmann::json describe() const = 0;
};

std::unique_ptr<TextTokenizer> openTokenizer(const TokenizerLocation& where);

}  // namespace omn::data
