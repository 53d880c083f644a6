// tokenizer.json pre-tokenizers: Split, ByteLevel, Metaspace, Digits and Sequence.
#include <array>

#include "omn/data/hf_pipeline.h"
#include "omn/data/js_regex.h"

namespace omn::data {
using nlohmann::json;

const std::vector<std::string>& byteLevelAlphabet() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const int cp = printable ? b : 256 + n++;
      std::string s;
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
      t[static_cast<std::size_t>(b)] = s;
    }
    return t;
  }();
  return table;
}

namespace {

enum class SplitBehavior { Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous };

struct Segment {
  std::size_t begin, end;
  bool match;
};

// The segments of a split, merged as tokenizers' SplitDelimiterBehavior says.
std::vector<Segment> mergeSegments(const std::vector<Segment>& all, SplitBehavior behavior) {
  std::vector<Segment> out;
  bool previous_match = false;
  if (behavior == SplitBehavior::MergedWithNext) {
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->match && !previous_match && !out.empty()) out.back().begin = it->begin;
      else out.push_back(*it);
      previous_match = it->match;
    }
    return {out.rbegin(), out.rend()};
  }
  for (const Segment& s : all) {
    const bool join = behavior == SplitBehavior::Contiguous ? s.match == previous_match : s.match && !previous_match;
    if (join && !out.empty()) out.back().end = s.end;
    else out.push_back(s);
    previous_match = s.match;
  }
  return out;
}

class SplitPieces : public PreTokenizer {
 public:
  SplitPieces(const json& j, const std::string& ptr, const HfJson& r) {
    const json& pattern = r.need(j, ptr, "pattern");
    std::string source;
    if (pattern.is_object() && pattern.contains("String")) source = escapeRegexLiteral(r.str(pattern["String"], ptr + "/pattern/String"));
    else if (pattern.is_object() && pattern.contains("Regex")) source = r.str(pattern["Regex"], ptr + "/pattern/Regex");
    else r.fail(ptr + "/pattern", "expected {\"String\": ...} or {\"Regex\": ...}");
    if (r.flag(j, ptr, "invert", false)) r.fail(ptr + "/invert", "true is not supported");
    const std::string b = r.str(r.need(j, ptr, "behavior"), ptr + "/behavior");
    static const std::array<std::pair<const char*, SplitBehavior>, 5> kBehaviors{{{"Isolated", SplitBehavior::Isolated},
        {"Removed", SplitBehavior::Removed}, {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
        {"MergedWithNext", SplitBehavior::MergedWithNext}, {"Contiguous", SplitBehavior::Contiguous}}};
    bool known = false;
    for (const auto& [name, value] : kBehaviors)
      if (b == name) behavior_ = value, known = true;
    if (!known) r.unsupported(ptr + "/behavior", b, "Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous");
    regex_ = std::make_unique<JsRegex>(source, r.label() + ": " + ptr + "/pattern");
  }
  void apply(std::vector<std::string>& pieces, std::size_t) const override {
    std::vector<std::string> out;
    std::vector<Segment> segments;
    for (const std::string& p : pieces) {
      segments.clear();
      std::size_t last = 0;
      regex_->forEachMatch(p, [&](std::size_t b, std::size_t e) {
        if (b == e) return;  // an empty match splits nothing
        if (b > last) segments.push_back({last, b, false});
        segments.push_back({b, e, true});
        last = e;
      });
      if (last < p.size()) segments.push_back({last, p.size(), false});
      if (behavior_ != SplitBehavior::Isolated && behavior_ != SplitBehavior::Removed) segments = mergeSegments(segments, behavior_);
      for (const Segment& s : segments)
        if (!(behavior_ == SplitBehavior::Removed && s.match)) out.push_back(p.substr(s.begin, s.end - s.begin));
    }
    pieces = std::move(out);
  }

 private:
  SplitBehavior behavior_ = SplitBehavior::Isolated;
  std::unique_ptr<JsRegex> regex_;
};

constexpr const char* kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// Each piece's bytes as GPT-2's printable characters; with use_regex, first the GPT-2 split.
class ByteLevelPieces : public PreTokenizer {
 public:
  ByteLevelPieces(const json& j, const std::string& ptr, const HfJson& r)
      : prefix_space_(r.flag(j, ptr, "add_prefix_space", false)) {
    if (r.flag(j, ptr, "use_regex", true)) regex_ = std::make_unique<JsRegex>(kGpt2Pattern, r.label() + ": " + ptr);
  }
  void apply(std::vector<std::string>& pieces, std::size_t) const override {
    std::vector<std::string> out;
    const auto& alphabet = byteLevelAlphabet();
    auto mapped = [&](const std::string& p, std::size_t b, std::size_t e) {
      std::string m;
      m.reserve(2 * (e - b));
      for (std::size_t i = b; i < e; ++i) m += alphabet[static_cast<unsigned char>(p[i])];
      out.push_back(std::move(m));
    };
    for (std::string& p : pieces) {
      if (prefix_space_ && (p.empty() || p[0] != ' ')) p.insert(p.begin(), ' ');
      if (regex_) regex_->forEachMatch(p, [&](std::size_t b, std::size_t e) { if (e > b) mapped(p, b, e); });
      else mapped(p, 0, p.size());
    }
    pieces = std::move(out);
  }

 private:
  bool prefix_space_;
  std::unique_ptr<JsRegex> regex_;
};

// Spaces become the replacement (U+2581); it is prepended as prepend_scheme says (legacy
// add_prefix_space: always or never); with split (the default), pieces start at each replacement.
class MetaspacePieces : public PreTokenizer {
 public:
  MetaspacePieces(const json& j, const std::string& ptr, const HfJson& r) {
    replacement_ = j.contains("replacement") ? r.str(j["replacement"], ptr + "/replacement") : "\xE2\x96\x81";
    if (replacement_.empty()) r.fail(ptr + "/replacement", "expected a character");
    std::string scheme = r.flag(j, ptr, "add_prefix_space", true) ? "always" : "never";
    if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) scheme = r.str(j["prepend_scheme"], ptr + "/prepend_scheme");
    if (scheme != "always" && scheme != "first" && scheme != "never") r.unsupported(ptr + "/prepend_scheme", scheme, "always, first, never");
    scheme_ = scheme;
    split_ = r.flag(j, ptr, "split", true);
  }
  void apply(std::vector<std::string>& pieces, std::size_t section) const override {
    std::vector<std::string> out;
    for (const std::string& p : pieces) {
      std::string t;
      for (char c : p) {
        if (c == ' ') t += replacement_;
        else t += c;
      }
      const bool prepend = scheme_ == "always" || (scheme_ == "first" && section == 0);
      if (prepend && t.compare(0, replacement_.size(), replacement_) != 0) t.insert(0, replacement_);
      if (!split_) {
        out.push_back(std::move(t));
        continue;
      }
      std::size_t start = 0;
      for (std::size_t at = t.find(replacement_, 1); at != std::string::npos; at = t.find(replacement_, at + replacement_.size())) {
        if (at > start) out.push_back(t.substr(start, at - start));
        start = at;
      }
      if (start < t.size()) out.push_back(t.substr(start));
    }
    pieces = std::move(out);
  }

 private:
  std::string replacement_, scheme_;
  bool split_ = true;
};

class DigitPieces : public PreTokenizer {
 public:
  explicit DigitPieces(bool individual) : regex_(individual ? "[^\\d]+|\\d" : "[^\\d]+|\\d+", "Digits") {}
  void apply(std::vector<std::string>& pieces, std::size_t) const override {
    std::vector<std::string> out;
    for (const std::string& p : pieces) regex_.forEachMatch(p, [&](std::size_t b, std::size_t e) { if (e > b) out.push_back(p.substr(b, e - b)); });
    pieces = std::move(out);
  }

 private:
  JsRegex regex_;
};

class PreTokenizerChain : public PreTokenizer {
 public:
  explicit PreTokenizerChain(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void apply(std::vector<std::string>& pieces, std::size_t section) const override {
    for (const auto& s : steps_) s->apply(pieces, section);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace

std::unique_ptr<PreTokenizer> PreTokenizer::fromJson(const json& j, const std::string& ptr, const HfJson& r) {
  if (j.is_null()) return nullptr;
  const std::string type = r.str(r.need(j, ptr, "type"), ptr + "/type");
  if (type == "Split") return std::make_unique<SplitPieces>(j, ptr, r);
  if (type == "ByteLevel") return std::make_unique<ByteLevelPieces>(j, ptr, r);
  if (type == "Metaspace") return std::make_unique<MetaspacePieces>(j, ptr, r);
  if (type == "Digits") return std::make_unique<DigitPieces>(r.flag(j, ptr, "individual_digits", false));
  if (type == "Sequence") {
    const json& list = r.need(j, ptr, "pretokenizers");
    if (!list.is_array()) r.fail(ptr + "/pretokenizers", "expected an array");
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (std::size_t i = 0; i < list.size(); ++i)
      if (auto p = fromJson(list[i], ptr + "/pretokenizers/" + std::to_string(i), r)) steps.push_back(std::move(p));
    return std::make_unique<PreTokenizerChain>(std::move(steps));
  }
  r.unsupported(ptr + "/type", type, "Split, ByteLevel, Metaspace, Digits, Sequence");
}

}  // namespace omn::data
