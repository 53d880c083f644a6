// The normalizer and pre-tokenizer steps of a Hugging Face tokenizer.json, built from their JSON
// and applied as transformers.js applies them (the reference the tests compare with). What a
// tokenizer.json holds that is not here is refused with the JSON pointer that names it. No libtorch.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::data {

// Reads one tokenizer.json: every failure is a FormatError "<label>: <pointer>: <what>".
class HfJson {
 public:
  explicit HfJson(std::string label) : label_(std::move(label)) {}
  [[noreturn]] void fail(const std::string& ptr, const std::string& what) const;
  const nlohmann::json& need(const nlohmann::json& j, const std::string& ptr, const char* key) const;
  std::string str(const nlohmann::json& j, const std::string& ptr) const;
  bool flag(const nlohmann::json& j, const std::string& ptr, const char* key, bool fallback) const;  // absent or null: fallback
  const std::string& label() const { return label_; }
  // "/pre_tokenizer/pretokenizers/0/type: \"X\" is not supported (supported: a, b)"
  [[noreturn]] void unsupported(const std::string& ptr, const std::string& value, const char* supported) const;

 private:
  std::string label_;
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual std::string apply(std::string text) const = 0;
  // null JSON: no normalizer (nullptr)
  static std::unique_ptr<Normalizer> fromJson(const nlohmann::json& j, const std::string& ptr, const HfJson& r);
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits (and maps) every piece; `section` is the index of the text's section among the added
  // tokens (data/added_tokens.h), which Metaspace's prepend_scheme "first" reads.
  virtual void apply(std::vector<std::string>& pieces, std::size_t section) const = 0;
  static std::unique_ptr<PreTokenizer> fromJson(const nlohmann::json& j, const std::string& ptr, const HfJson& r);
};

// GPT-2's byte-to-character table: byte b as the UTF-8 of a printable code point.
const std::vector<std::string>& byteLevelAlphabet();

}  // namespace omn::data
