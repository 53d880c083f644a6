#include "omn/documents/document.h"

#include <map>
#include <memory>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "omn/documents/legacy_documents.h"
#include "omn/documents/shape_rules.h"
#include "omn/embedded.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"

namespace omn::documents {

using nlohmann::json;

namespace {

struct KindInfo {
  DocumentKind kind;
  const char* id;
  const char* file;  // in docs/schema, embedded as "schema/<file>"
};
constexpr KindInfo kKinds[] = {
    {DocumentKind::profile, "omn-audit/profile@1", "profile.schema.json"},
    {DocumentKind::reference_profile, "omn-audit/reference-profile@1", "reference-profile.schema.json"},
    {DocumentKind::tolerance, "omn-audit/tolerance@1", "tolerance.schema.json"},
    {DocumentKind::eval, "omn-audit/eval@1", "eval.schema.json"},
    {DocumentKind::intervention, "omn-audit/intervention@1", "intervention.schema.json"},
    {DocumentKind::study, "omn-audit/study@1", "study.schema.json"},
    {DocumentKind::track, "omn-audit/track@1", "track.schema.json"},
    {DocumentKind::train, "omn-audit/train@1", "train.schema.json"},
};

const KindInfo& info(DocumentKind k) {
  for (const auto& i : kKinds)
    if (i.kind == k) return i;
  throw std::logic_error("unknown document kind");
}

json embeddedSchema(const std::string& file) {
  const auto& files = embeddedConfigs();
  const auto it = files.find("schema/" + file);
  if (it == files.end()) throw std::logic_error("schema " + file + " is not embedded");
  return json::parse(it->second);
}

std::unique_ptr<valijson::Schema> parseSchema(const json& root) {
  auto schema = std::make_unique<valijson::Schema>();
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter adapter(root);
  parser.populateSchema(
      adapter, *schema, [](const std::string& uri) { return new json(embeddedSchema(uri.substr(0, uri.find('#')))); },
      [](const json* d) { delete d; });
  return schema;
}

// The parsed schema of each kind, built once (schemas refer to each other by file name:
// "provenance.schema.json", "eval.schema.json#/$defs/scores").
const valijson::Schema& schemaFor(DocumentKind k) {
  static std::map<DocumentKind, std::unique_ptr<valijson::Schema>> cache;
  auto& slot = cache[k];
  if (!slot) slot = parseSchema(embeddedSchema(info(k).file));
  return *slot;
}

// The part of a kind's schema at `pointer` ("/properties/runs/items") as a schema of its own: the
// part under the kind's $defs and $id, so its "#/$defs/..." references still resolve. Built once each.
const valijson::Schema& partSchemaFor(DocumentKind k, const std::string& pointer) {
  static std::map<std::pair<DocumentKind, std::string>, std::unique_ptr<valijson::Schema>> cache;
  auto& slot = cache[{k, pointer}];
  if (!slot) {
    const json whole = embeddedSchema(info(k).file);
    const json::json_pointer at(pointer);
    if (!whole.contains(at)) throw std::logic_error(std::string("docs/schema/") + info(k).file + " has no " + pointer);
    json part = {{"allOf", json::array({whole.at(at)})}};
    for (const char* key : {"$schema", "$id", "$defs"})
      if (whole.contains(key)) part[key] = whole[key];
    slot = parseSchema(part);
  }
  return *slot;
}

// valijson's context ("<root>", "[layers]", "[0]") as a JSON pointer ("/layers/0").
std::string pointerOf(const std::vector<std::string>& context) {
  std::string p;
  for (const auto& c : context) {
    if (c.size() < 2 || c.front() != '[' || c.back() != ']') continue;
    std::string seg = c.substr(1, c.size() - 2);
    if (seg.size() >= 2 && seg.front() == '"' && seg.back() == '"') seg = seg.substr(1, seg.size() - 2);
    std::string esc;
    for (char ch : seg) esc += ch == '~' ? "~0" : ch == '/' ? "~1" : std::string(1, ch);
    p += "/" + esc;
  }
  return p.empty() ? "/" : p;
}

void validateAgainst(const valijson::Schema& schema, const json& target_json, const std::string& label, const std::string& pointer,
              DocumentKind k) {
  // One validator per thread: it caches the schemas' compiled "pattern" regexes, which cost more
  // than validating a whole profile when compiled afresh for each document.
  static thread_local valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(target_json);
  if (!validator.validate(schema, target, &results)) {
    valijson::ValidationResults::Error e;
    results.popError(e);  // the innermost failure comes first
    const std::string inner = pointerOf(e.context);
    throw FormatError(label + ": " + (pointer.empty() ? inner : pointer + (inner == "/" ? "" : inner)) + ": " + e.description +
                      " (docs/schema/" + info(k).file + ")");
  }
}

}  // namespace

const char* schemaId(DocumentKind kind) { return info(kind).id; }

DocumentKind checkDocument(const json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted) {
  std::string expected;
  for (DocumentKind k : accepted) expected += std::string(expected.empty() ? "" : " or ") + "\"" + schemaId(k) + "\"";
  if (!doc.is_object()) throw FormatError(label + ": /: expected an omn-audit document (a JSON object), got " + doc.type_name());
  const auto s = doc.find("schema");
  if (s == doc.end() || !s->is_string())
    throw FormatError(label + ": /schema: expected " + expected + ", got " + (s == doc.end() ? "nothing" : s->dump()));
  for (DocumentKind k : accepted) {
    if (*s != schemaId(k)) continue;
    validateAgainst(schemaFor(k), doc, label, "", k);
    checkShape(doc, k, label);
    return k;
  }
  throw FormatError(label + ": /schema: expected " + expected + ", got " + s->dump());
}

void checkPart(const json& part, DocumentKind kind, const std::string& schema_pointer, const std::string& label,
               const std::string& pointer) {
  validateAgainst(partSchemaFor(kind, schema_pointer), part, label, pointer, kind);
}

DocumentKind acceptDocument(json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted) {
  const DocumentKind k = checkDocument(doc, label, accepted);
  upgradeDocument(doc, k);
  return k;
}

Document readDocument(const std::string& path, const std::string& what, std::initializer_list<DocumentKind> accepted) {
  json j = io::readJsonFile(path, what);
  const DocumentKind k = acceptDocument(j, what + " " + path, accepted);
  return {k, std::move(j)};
}

}  // namespace omn::documents
