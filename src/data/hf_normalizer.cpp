// tokenizer.json normalizers: NFC, NFD, NFKC, NFKD, Replace, Prepend, Lowercase, Strip,
// StripAccents and Sequence. Also the shared JSON reader of data/hf_pipeline.h.
#include <algorithm>

#include "omn/data/hf_pipeline.h"
#include "omn/data/js_regex.h"
#include "omn/data/unicode_text.h"
#include "omn/errors.h"

namespace omn::data {
using nlohmann::json;

void HfJson::fail(const std::string& ptr, const std::string& what) const {
  throw FormatError(label_ + ": " + (ptr.empty() ? "/" : ptr) + ": " + what);
}

const json& HfJson::need(const json& j, const std::string& ptr, const char* key) const {
  if (!j.is_object()) fail(ptr, std::string("expected an object, got ") + j.type_name());
  if (!j.contains(key)) fail(ptr + "/" + key, "required");
  return j[key];
}

std::string HfJson::str(const json& j, const std::string& ptr) const {
  if (!j.is_string()) fail(ptr, std::string("expected a string, got ") + j.type_name());
  return j.get<std::string>();
}

bool HfJson::flag(const json& j, const std::string& ptr, const char* key, bool fallback) const {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_boolean()) fail(ptr + "/" + key, std::string("expected true or false, got ") + j[key].type_name());
  return j[key].get<bool>();
}

void HfJson::unsupported(const std::string& ptr, const std::string& value, const char* supported) const {
  fail(ptr, "\"" + value + "\" is not supported (supported: " + supported + ")");
}

namespace {

class UnicodeForm : public Normalizer {
 public:
  explicit UnicodeForm(NormalForm f) : form_(f) {}
  std::string apply(std::string text) const override { return normalizeUnicode(text, form_); }

 private:
  NormalForm form_;
};

// A String pattern is replaced as a literal; a Regex pattern as JavaScript's replaceAll finds it.
// The content is taken literally: a "$" replacement pattern (which JavaScript would expand) is refused.
class ReplaceText : public Normalizer {
 public:
  ReplaceText(const json& j, const std::string& ptr, const HfJson& r) {
    const json& pattern = r.need(j, ptr, "pattern");
    content_ = r.str(r.need(j, ptr, "content"), ptr + "/content");
    if (content_.find('$') != std::string::npos) r.fail(ptr + "/content", "a \"$\" in the replacement is not supported");
    if (pattern.is_object() && pattern.contains("String")) {
      literal_ = r.str(pattern["String"], ptr + "/pattern/String");
      if (literal_.empty()) r.fail(ptr + "/pattern/String", "an empty pattern is not supported");
    } else if (pattern.is_object() && pattern.contains("Regex")) {
      regex_ = std::make_unique<JsRegex>(r.str(pattern["Regex"], ptr + "/pattern/Regex"), r.label() + ": " + ptr + "/pattern/Regex");
    } else {
      r.fail(ptr + "/pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
    }
  }
  std::string apply(std::string text) const override {
    std::string out;
    std::size_t last = 0;
    if (regex_) {
      regex_->forEachMatch(text, [&](std::size_t b, std::size_t e) {
        out.append(text, last, b - last);
        out += content_;
        last = e;
      });
    } else {
      if (text.find(literal_) == std::string::npos) return text;
      for (std::size_t at = text.find(literal_); at != std::string::npos; at = text.find(literal_, last)) {
        out.append(text, last, at - last);
        out += content_;
        last = at + literal_.size();
      }
    }
    out.append(text, last, std::string::npos);
    return out;
  }

 private:
  std::string literal_, content_;
  std::unique_ptr<JsRegex> regex_;
};

class PrependText : public Normalizer {
 public:
  explicit PrependText(std::string p) : prefix_(std::move(p)) {}
  std::string apply(std::string text) const override { return prefix_ + text; }

 private:
  std::string prefix_;
};

class LowerCase : public Normalizer {
 public:
  std::string apply(std::string text) const override { return lowerCaseText(text); }
};

class StripSpace : public Normalizer {
 public:
  StripSpace(bool left, bool right) : left_(left), right_(right) {}
  std::string apply(std::string text) const override { return std::string(trimJsWhitespace(text, left_, right_)); }

 private:
  bool left_, right_;
};

class StripMarks : public Normalizer {
 public:
  std::string apply(std::string text) const override { return withoutCombiningMarks(text); }
};

class NormalizerChain : public Normalizer {
 public:
  explicit NormalizerChain(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  std::string apply(std::string text) const override {
    for (const auto& s : steps_) text = s->apply(std::move(text));
    return text;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> Normalizer::fromJson(const json& j, const std::string& ptr, const HfJson& r) {
  if (j.is_null()) return nullptr;
  const std::string type = r.str(r.need(j, ptr, "type"), ptr + "/type");
  if (type == "NFC") return std::make_unique<UnicodeForm>(NormalForm::NFC);
  if (type == "NFD") return std::make_unique<UnicodeForm>(NormalForm::NFD);
  if (type == "NFKC") return std::make_unique<UnicodeForm>(NormalForm::NFKC);
  if (type == "NFKD") return std::make_unique<UnicodeForm>(NormalForm::NFKD);
  if (type == "Replace") return std::make_unique<ReplaceText>(j, ptr, r);
  if (type == "Prepend") return std::make_unique<PrependText>(r.str(r.need(j, ptr, "prepend"), ptr + "/prepend"));
  if (type == "Lowercase") return std::make_unique<LowerCase>();
  if (type == "StripAccents") return std::make_unique<StripMarks>();
  if (type == "Strip")
    return std::make_unique<StripSpace>(r.flag(j, ptr, "strip_left", true), r.flag(j, ptr, "strip_right", true));
  if (type == "Sequence") {
    const json& list = r.need(j, ptr, "normalizers");
    if (!list.is_array()) r.fail(ptr + "/normalizers", "expected an array");
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (std::size_t i = 0; i < list.size(); ++i)
      if (auto n = fromJson(list[i], ptr + "/normalizers/" + std::to_string(i), r)) steps.push_back(std::move(n));
    return std::make_unique<NormalizerChain>(std::move(steps));
  }
  r.unsupported(ptr + "/type", type, "NFC, NFD, NFKC, NFKD, Replace, Prepend, Lowercase, Strip, StripAccents, Sequence");
}

}  // namespace omn::data
