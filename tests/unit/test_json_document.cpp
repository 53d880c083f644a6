// Documents read back are untrusted: bounded nesting, validation against the embedded schemas with
// the failing JSON pointer named, and schemas whose patterns cannot blow the regex engine's stack.
#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <string>

#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/documents/document.h"
#include "omn/io/json_document.h"

using nlohmann::json;
using omn::documents::DocumentKind;

namespace {

std::string thrownMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const omn::FormatError& e) {
    return e.what();
  }
  return "(no FormatError)";
}

}  // namespace

TEST(JsonDocument, NestingIsBoundedBeforeAnythingRecursiveRuns) {
  EXPECT_EQ(omn::io::parseJson("[[[1]]]", "x")[0][0][0], 1);
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_NE(thrownMessage([&] { omn::io::parseJson(deep, "deep.json"); }).find("deep.json: nested deeper than 64"), std::string::npos);
  EXPECT_NE(thrownMessage([&] { omn::io::parseJson("{\"a\": [1,", "cut.json"); }).find("cut.json: not valid JSON"), std::string::npos);
}

TEST(JsonDocument, ValidationNamesTheFileAndPointer) {
  const json tol = {{"schema", "omn-audit/tolerance@1"}, {"rules", {{{"pointer", "/x"}, {"abs", -1}}}}};
  const std::string e = thrownMessage([&] { omn::documents::checkDocument(tol, "tolerance t.json", {DocumentKind::tolerance}); });
  EXPECT_NE(e.find("tolerance t.json: /rules/0/abs"), std::string::npos) << e;
  const json bare = {{"schema", "omn-audit/profile@1"}};
  EXPECT_NE(thrownMessage([&] { omn::documents::checkDocument(bare, "p.json", {DocumentKind::profile}); }).find("p.json: /: Missing required property"),
            std::string::npos);
  const json other = {{"schema", "omn-audit/track@1"}};
  EXPECT_NE(thrownMessage([&] { omn::documents::checkDocument(other, "p.json", {DocumentKind::profile, DocumentKind::intervention}); })
                .find("/schema: expected \"omn-audit/profile@1\" or \"omn-audit/intervention@1\", got \"omn-audit/track@1\""),
            std::string::npos);
  EXPECT_NE(thrownMessage([&] { omn::documents::checkDocument(json::array(), "a.json", {DocumentKind::profile}); }).find("a.json: /: expected"),
            std::string::npos);
}

TEST(JsonDocument, TheEmbeddedReferenceValidates) {
  const auto& files = omn::embeddedConfigs();
  const json ref = json::parse(files.at("omn-1-reference-profile.json"));
  EXPECT_EQ(omn::documents::checkDocument(ref, "ref", {DocumentKind::reference_profile}), DocumentKind::reference_profile);
}

// valijson matches "pattern" with std::regex, which recurses once per repetition: "^[0-9]+$" on a
// 100,000-character string overflowed the stack. Every pattern in every schema is bounded.
TEST(JsonDocument, SchemaPatternsHaveNoUnboundedRepetition) {
  std::size_t patterns = 0;
  for (const auto& [name, text] : omn::embeddedConfigs()) {
    if (name.rfind("schema/", 0) != 0) continue;
    const json s = json::parse(text);
    const json flat = s.flatten();
    for (auto it = flat.begin(); it != flat.end(); ++it) {
      const std::string key = it.key();
      if (key.size() < 8 || key.compare(key.size() - 8, 8, "/pattern") != 0) continue;
      const std::string p = it.value().get<std::string>();
      ++patterns;
      EXPECT_EQ(p.find('+'), std::string::npos) << name << " " << key << ": " << p;
      EXPECT_EQ(p.find('*'), std::string::npos) << name << " " << key << ": " << p;
      EXPECT_FALSE(std::regex_search(p, std::regex(R"(\{[0-9]+,\})"))) << name << " " << key << ": " << p;
      // valijson compiles it as ECMAScript: "[])]" is valid to Python and jsonschema, an error here
      EXPECT_NO_THROW(std::regex(p, std::regex::ECMAScript)) << name << " " << key << ": " << p;
    }
  }
  EXPECT_GE(patterns, 10u);
}
