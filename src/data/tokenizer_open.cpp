// The tokenizers behind data/text_tokenizer.h. Built into omn-audit-text.so only: Debian's
// libsentencepiece carries protobuf-lite symbols that clash with libtorch's (src/data/corpus_build.cpp).
#include <sentencepiece_processor.h>

#include "omn/data/hf_tokenizer.h"
#include "omn/data/text_tokenizer.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"

namespace omn::data {
using nlohmann::json;

namespace {

json idList(const std::vector<std::uint32_t>& ids) { return json(ids); }

class HfTextTokenizer : public TextTokenizer {
 public:
  explicit HfTextTokenizer(const TokenizerLocation& where) : tok_(HfTokenizer::load(where.path)) {
    if (!where.config_path.empty()) config_ = io::readJsonFile(where.config_path, "tokenizer config");
  }
  void encode(std::string_view text, std::vector<std::uint32_t>& out) override { tok_->encode(text, out); }
  std::uint64_t vocabularySize() const override { return tok_->vocabularySize(); }
  std::optional<std::uint32_t> idOf(std::string_view token) const override { return tok_->idOf(token); }
  std::optional<std::uint32_t> declared(const std::string& role) const override {
    const std::string key = role + "_token";
    if (!config_.is_object() || !config_.contains(key)) {  // else the one token the post-processor puts there
      const PostProcessorAdds& p = tok_->postProcessor();
      const auto& side = role == "bos" ? p.before : p.after;
      if (p.understood && side.size() == 1) return side[0];
      return std::nullopt;
    }
    const json& v = config_[key];  // "<bos>" or {"content": "<bos>", "__type": "AddedToken"}
    const json& name = v.is_object() && v.contains("content") ? v["content"] : v;
    if (!name.is_string()) return std::nullopt;
    return tok_->idOf(name.get<std::string>());
  }
  json describe() const override {
    json d = tok_->describe();
    d["kind"] = "tokenizer.json";
    const PostProcessorAdds& p = tok_->postProcessor();
    d["post_processor"] = {{"type", p.type.empty() ? json(nullptr) : json(p.type)},
                           {"would_add_before", p.understood ? idList(p.before) : json(nullptr)},
                           {"would_add_after", p.understood ? idList(p.after) : json(nullptr)}};
    return d;
  }

 private:
  std::unique_ptr<HfTokenizer> tok_;
  json config_;
};

class SentencePieceTokenizer : public TextTokenizer {
 public:
  explicit SentencePieceTokenizer(const TokenizerLocation& where) {
    if (const auto st = sp_.Load(where.path); !st.ok())
      throw FormatError("tokenizer " + where.path + ": not a SentencePiece model, nor a tokenizer.json: " + st.ToString());
  }
  void encode(std::string_view text, std::vector<std::uint32_t>& out) override {
    std::vector<int> ids;
    if (const auto st = sp_.Encode(text, &ids); !st.ok()) throw FormatError("SentencePiece: " + st.ToString());
    for (int id : ids) out.push_back(static_cast<std::uint32_t>(id));
  }
  std::uint64_t vocabularySize() const override { return static_cast<std::uint64_t>(sp_.GetPieceSize()); }
  std::optional<std::uint32_t> idOf(std::string_view token) const override {
    const int id = sp_.PieceToId(token);
    if (id < 0 || (id == sp_.unk_id() && sp_.IdToPiece(id) != token)) return std::nullopt;
    return static_cast<std::uint32_t>(id);
  }
  std::optional<std::uint32_t> declared(const std::string& role) const override {
    const int id = role == "bos" ? sp_.bos_id() : role == "eos" ? sp_.eos_id() : -1;
    if (id < 0) return std::nullopt;
    return static_cast<std::uint32_t>(id);
  }
  json describe() const override {
    return {{"kind", "sentencepiece"}, {"vocab_size", sp_.GetPieceSize()}, {"bos_id", sp_.bos_id()}, {"eos_id", sp_.eos_id()},
            {"unk_id", sp_.unk_id()},
            {"post_processor", {{"type", nullptr}, {"would_add_before", json::array()}, {"would_add_after", json::array()}}}};
  }

 private:
  sentencepiece::SentencePieceProcessor sp_;
};

}  // namespace

std::unique_ptr<TextTokenizer> openTokenizer(const TokenizerLocation& where) {
  if (where.kind == TokenizerKind::HuggingFaceJson) return std::make_unique<HfTextTokenizer>(where);
  return std::make_unique<SentencePieceTokenizer>(where);
}

}  // namespace omn::data
