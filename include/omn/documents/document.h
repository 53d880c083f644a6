// The documents omn-audit writes and reads back -- profiles, references, tolerances, eval results,
// intervention results, studies, tracks, training records -- and what each must hold to be read:
// its JSON Schema (docs/schema, compiled into the binary), then what a schema cannot say (arrays
// walked in step have equal lengths; documents/shape_rules.h), then an older form read as today's
// (documents/legacy_documents.h). A document that reaches plot, report, compare, merge or a
// regression gate has every field those read. Errors are FormatError naming the file, the JSON
// pointer and the rule. Above io/ (which reads bytes and generic JSON), below everything that
// writes or reads a document. No libtorch.
#pragma once
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

namespace omn::documents {

// The documents omn-audit writes and reads back, each with its schema id and docs/schema file.
enum class DocumentKind { profile, reference_profile, tolerance, eval, intervention, study, track, train };
const char* schemaId(DocumentKind kind);  // "omn-audit/profile@1"

// Checks that `doc` (read from `label`) is one of `accepted` by its /schema, validates it against
// that kind's schema and the kind's shape rules; returns the kind. FormatError naming the label and
// the first failing pointer.
DocumentKind checkDocument(const nlohmann::json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted);

// A part of a document held in a record of its own (a journal line: a study's run, a sweep
// condition's op), checked against that part of the kind's schema (`schema_pointer`, e.g.
// "/properties/runs/items"): every member the document requires, of its type. FormatError naming
// the label and `pointer` + the failing member's pointer.
void checkPart(const nlohmann::json& part, DocumentKind kind, const std::string& schema_pointer, const std::string& label,
               const std::string& pointer);

// checkDocument, then a document of an older form read as today's (legacy_documents.h). What every
// reader of a document file goes through.
DocumentKind acceptDocument(nlohmann::json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted);

// io::readJsonFile + acceptDocument.
struct Document {
  DocumentKind kind;
  nlohmann::json json;
};
Document readDocument(const std::string& path, const std::string& what, std::initializer_list<DocumentKind> accepted);

}  // namespace omn::documents
