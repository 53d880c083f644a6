#include "omn/data/hf_tokenizer.h"

#include <algorithm>
#include <unordered_map>

#include "omn/errors.h"
#include "omn/io/json_document.h"

namespace omn::data {
using nlohmann::json;

namespace {

std::uint32_t tokenId(const json& v, const std::string& ptr, const HfJson& r) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > INT32_MAX) r.fail(ptr, "expected a token id");
  return static_cast<std::uint32_t>(v.get<std::int64_t>());
}

std::vector<AddedToken> readAddedTokens(const json& root, const HfJson& r) {
  std::vector<AddedToken> out;
  if (!root.contains("added_tokens") || root["added_tokens"].is_null()) return out;
  const json& list = root["added_tokens"];
  if (!list.is_array()) r.fail("/added_tokens", "expected an array");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string ptr = "/added_tokens/" + std::to_string(i);
    const json& t = list[i];
    AddedToken a;
    a.content = r.str(r.need(t, ptr, "content"), ptr + "/content");
    a.id = tokenId(r.need(t, ptr, "id"), ptr + "/id", r);
    a.lstrip = r.flag(t, ptr, "lstrip", false);
    a.rstrip = r.flag(t, ptr, "rstrip", false);
    a.special = r.flag(t, ptr, "special", false);
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> readMerges(const json& model, const HfJson& r) {
  std::vector<std::pair<std::string, std::string>> merges;
  if (!model.contains("merges")) return merges;
  const json& list = model["merges"];
  if (!list.is_array()) r.fail("/model/merges", "expected an array");
  merges.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& m = list[i];
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else if (m.is_string()) {  // "a b", the format before tokenizers 0.20 (split as transformers.js does)
      const std::string& s = m.get_ref<const std::string&>();
      const std::size_t sp = s.find(' ');
      const std::size_t sp2 = sp == std::string::npos ? sp : s.find(' ', sp + 1);
      if (sp == std::string::npos) r.fail("/model/merges/" + std::to_string(i), "expected \"left right\"");
      merges.emplace_back(s.substr(0, sp), s.substr(sp + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp - 1));
    } else {
      r.fail("/model/merges/" + std::to_string(i), "expected [left, right] or \"left right\"");
    }
  }
  return merges;
}

// The BPE model's options; what would change the ids and is not implemented is refused.
BpeOptions readBpeOptions(const json& model, const std::unordered_map<std::string, std::uint32_t>& tokens, const HfJson& r) {
  if (model.contains("dropout") && !model["dropout"].is_null() && !(model["dropout"].is_number() && model["dropout"].get<double>() == 0))
    r.fail("/model/dropout", "BPE dropout (random merges) is not supported: the ids would not be reproducible");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() && !r.str(model[key], std::string("/model/") + key).empty())
      r.fail(std::string("/model/") + key, "a non-empty value is not supported");
  BpeOptions o;
  o.byte_fallback = r.flag(model, "/model", "byte_fallback", false);
  o.fuse_unk = r.flag(model, "/model", "fuse_unk", false);
  o.ignore_merges = r.flag(model, "/model", "ignore_merges", false);
  if (model.contains("unk_token") && !model["unk_token"].is_null()) {
    const std::string unk = r.str(model["unk_token"], "/model/unk_token");
    const auto it = tokens.find(unk);
    if (it == tokens.end()) r.fail("/model/unk_token", "\"" + unk + "\" is not in the vocabulary");
    o.unk_id = it->second;
  }
  return o;
}

// TemplateProcessing's "single": the special tokens before and after $A
PostProcessorAdds readTemplate(const json& p, const std::string& ptr, const HfJson& r) {
  PostProcessorAdds a{"TemplateProcessing", true, {}, {}};
  const json& single = r.need(p, ptr, "single");
  if (!single.is_array()) r.fail(ptr + "/single", "expected an array");
  bool seen_a = false;
  for (std::size_t i = 0; i < single.size(); ++i) {
    const json& item = single[i];
    const std::string at = ptr + "/single/" + std::to_string(i);
    if (item.contains("Sequence")) {
      seen_a = true;
    } else if (item.contains("SpecialToken")) {
      const std::string name = r.str(r.need(item["SpecialToken"], at + "/SpecialToken", "id"), at + "/SpecialToken/id");
      const json& specials = r.need(p, ptr, "special_tokens");
      const json& ids = r.need(r.need(specials, ptr + "/special_tokens", name.c_str()), ptr + "/special_tokens/" + name, "ids");
      for (const json& id : ids) (seen_a ? a.after : a.before).push_back(tokenId(id, ptr + "/special_tokens/" + name + "/ids", r));
    }
  }
  return a;
}

PostProcessorAdds readPostProcessor(const json& p, const std::string& ptr, const HfJson& r) {
  if (p.is_null()) return {"", true, {}, {}};
  const std::string type = r.str(r.need(p, ptr, "type"), ptr + "/type");
  if (type == "TemplateProcessing") return readTemplate(p, ptr, r);
  if (type == "ByteLevel") return {type, true, {}, {}};
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    auto id = [&](const char* key) {
      const json& v = r.need(p, ptr, key);
      if (!v.is_array() || v.size() != 2) r.fail(ptr + "/" + key, "expected [token, id]");
      return tokenId(v[1], ptr + "/" + key + "/1", r);
    };
    return {type, true, {id("cls")}, {id("sep")}};
  }
  if (type == "Sequence") {
    PostProcessorAdds all{type, true, {}, {}};
    const json& list = r.need(p, ptr, "processors");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const PostProcessorAdds one = readPostProcessor(list[i], ptr + "/processors/" + std::to_string(i), r);
      all.understood = all.understood && one.understood;
      all.before.insert(all.before.end(), one.before.begin(), one.before.end());
      all.after.insert(all.after.end(), one.after.begin(), one.after.end());
    }
    return all;
  }
  return {type, false, {}, {}};
}

}  // namespace

std::unique_ptr<HfTokenizer> HfTokenizer::load(const std::string& path) {
  const std::string text = io::readTextFile(path, "tokenizer");
  return fromJson(io::parseJson(text, "tokenizer " + path), "tokenizer " + path);
}

std::unique_ptr<HfTokenizer> HfTokenizer::fromJson(const json& root, const std::string& label) {
  const HfJson r(label);
  if (!root.is_object()) r.fail("", "expected a tokenizer.json object");
  const json& model = r.need(root, "", "model");
  const std::string type = model.contains("type") ? r.str(model["type"], "/model/type") : (model.contains("merges") ? "BPE" : "");
  if (type != "BPE") r.unsupported("/model/type", type, "BPE");
  const json& vocab = r.need(model, "/model", "vocab");
  if (!vocab.is_object()) r.fail("/model/vocab", "expected an object of token: id");
  std::unordered_map<std::string, std::uint32_t> tokens;
  tokens.reserve(vocab.size() + 1024);
  std::unique_ptr<HfTokenizer> t(new HfTokenizer());
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    const std::uint32_t id = tokenId(*it, "/model/vocab/" + it.key(), r);
    tokens[it.key()] = id;
    t->vocab_size_ = std::max<std::uint64_t>(t->vocab_size_, std::uint64_t{id} + 1);
  }
  const std::vector<AddedToken> added = readAddedTokens(root, r);
  for (const AddedToken& a : added) {  // transformers.js adds them to the model's tokens
    tokens[a.content] = a.id;
    t->vocab_size_ = std::max<std::uint64_t>(t->vocab_size_, std::uint64_t{a.id} + 1);
  }
  const BpeOptions options = readBpeOptions(model, tokens, r);
  const auto merges = readMerges(model, r);
  t->normalizer_ = Normalizer::fromJson(root.value("normalizer", json()), "/normalizer", r);
  t->pre_tokenizer_ = PreTokenizer::fromJson(root.value("pre_tokenizer", json()), "/pre_tokenizer", r);
  t->splitter_ = std::make_unique<AddedTokenSplitter>(added);
  t->model_ = std::make_unique<BpeModel>(std::move(tokens), merges, options);
  t->post_ = readPostProcessor(root.value("post_processor", json()), "/post_processor", r);
  auto typeOf = [&](const char* key) {
    return root.contains(key) && root[key].is_object() && root[key].contains("type") ? root[key]["type"] : json(nullptr);
  };
  std::size_t n_special = 0;
  for (const AddedToken& a : added) n_special += a.special;
  t->description_ = {{"model", "BPE"}, {"vocab_size", t->vocab_size_}, {"merges", merges.size()},
                     {"byte_fallback", options.byte_fallback}, {"normalizer", typeOf("normalizer")},
                     {"pre_tokenizer", typeOf("pre_tokenizer")}, {"added_tokens", added.size()}, {"special_tokens", n_special}};
  return t;
}

void HfTokenizer::encode(std::string_view text, std::vector<std::uint32_t>& out) {
  const std::vector<TextSection> sections = splitter_->split(text);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const TextSection& s = sections[i];
    if (s.text.empty()) continue;
    if (s.added >= 0) {
      out.push_back(static_cast<std::uint32_t>(s.added));
      continue;
    }
    std::string x(s.text);
    if (normalizer_) x = normalizer_->apply(std::move(x));
    if (x.empty()) continue;
    pieces_.clear();
    pieces_.push_back(std::move(x));
    if (pre_tokenizer_) pre_tokenizer_->apply(pieces_, i);
    const std::size_t mark = out.size();
    for (const std::string& p : pieces_) model_->encodePiece(p, out);
    model_->fuseUnknown(out, mark);
  }
}

}  // namespace omn::data
