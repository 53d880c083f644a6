// Reading JSON that comes from outside the process. Every parse bounds the nesting depth (a
// 200,000-deep value would exhaust the stack of every recursive reader after it), and the documents
// omn-audit writes -- profiles, results, studies, tracks, baselines, tolerances -- are validated on
// entry against their JSON Schema (docs/schema, compiled into the binary) before any field is read:
// a document that reaches plot, report, compare, merge or a regression gate has every field those
// read. Errors are FormatError naming the file, the JSON pointer and the rule. No libtorch.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace omn::io {

// Deeper than any document omn-audit reads (they nest < 10 levels) and far from the stack's end.
inline constexpr int kMaxJsonDepth = 64;

// `text` parsed; FormatError "<label>: not valid JSON: ..." or "...: nested deeper than 64 levels".
nlohmann::json parseJson(std::string_view text, const std::string& label);

// The whole of the regular file at `path` (`what` names it in messages); a FIFO, device or directory
// is refused before it is opened (a FIFO would block the open, /dev/zero never ends).
std::string readTextFile(const std::string& path, const std::string& what);

// The file at `path` parsed (`what` names it in messages: "baseline", "input"); it must be a regular
// file (a FIFO would block the open).
nlohmann::json readJsonFile(const std::string& path, const std::string& what);

// The documents omn-audit writes and reads back, each with its schema id and docs/schema file.
enum class DocumentKind { profile, reference_profile, tolerance, eval, intervention, study, track, train };
const char* schemaId(DocumentKind kind);  // "omn-audit/profile@1"

// Checks that `doc` (read from `label`) is one of `accepted` by its /schema and validates against
// that kind's schema; returns the kind. FormatError naming the label and the first failing pointer.
DocumentKind checkDocument(const nlohmann::json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted);

// checkDocument, then a document of an older shape read as today's: a profile from before count
// ranges were an option has its two fixed counts (count_in_1_2, count_above_32) read as
// statistics/counts [1,2] and (32,inf), and a reference's figures pointing at those fields are
// pointed at the counts. What every reader of a document file goes through.
DocumentKind acceptDocument(nlohmann::json& doc, const std::string& label, std::initializer_list<DocumentKind> accepted);

// The count fields of profiles written before 2026-12-01 and the range each one is: the one table the
// document reader and the tolerance matcher read them by.
struct LegacyCount {
  const char* field;    // "/statistics/count_in_1_2"
  const char* pointer;  // "/statistics/counts/[1,2]/count"
};
inline constexpr LegacyCount kLegacyCounts[] = {{"/statistics/count_in_1_2", "/statistics/counts/[1,2]/count"},
                                                {"/statistics/count_above_32", "/statistics/counts/(32,inf)/count"}};

// readJsonFile + acceptDocument.
struct Document {
  DocumentKind kind;
  nlohmann::json json;
};
Document readDocument(const std::string& path, const std::string& what, std::initializer_list<DocumentKind> accepted);

}  // namespace omn::io
