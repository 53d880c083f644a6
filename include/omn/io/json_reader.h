// Strict reading of JSON documents written by people (manifests, corpus and training configs):
// every accessor names the document and the JSON pointer it failed at, and every number is
// range-checked before it is narrowed. One definition for every config reader. No libtorch.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/choice.h"

namespace omn::io {

class JsonReader {
 public:
  using json = nlohmann::json;
  // `label` names the document in messages: "manifest m.json", "training config tiny.json".
  explicit JsonReader(std::string label) : label_(std::move(label)) {}

  [[noreturn]] void fail(const std::string& ptr, const std::string& what) const {
    throw UsageError(label_ + ": " + (ptr.empty() ? "/" : ptr) + ": " + what);
  }
  const json& object(const json& j, const std::string& ptr, std::initializer_list<const char*> allowed) const {
    if (!j.is_object()) fail(ptr, std::string("expected an object, got ") + j.type_name());
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const char* a : allowed) known = known || it.key() == a;
      if (!known) fail(ptr + "/" + it.key(), "unknown key");
    }
    return j;
  }
  // The document's "schema" key must be `expected`.
  void schema(const json& j, const char* expected) const {
    if (str(need(j, "", "schema"), "/schema") != expected) fail("/schema", std::string("expected \"") + expected + "\"");
  }
  const json* opt(const json& j, const char* key) const { return j.contains(key) && !j[key].is_null() ? &j[key] : nullptr; }
  const json& need(const json& j, const std::string& ptr, const char* key) const {
    if (!j.contains(key)) fail(ptr + "/" + key, "required");
    return j[key];
  }
  std::string str(const json& v, const std::string& ptr) const {
    if (!v.is_string()) fail(ptr, std::string("expected a string, got ") + v.type_name());
    return v.get<std::string>();
  }
  bool boolean(const json& v, const std::string& ptr) const {
    if (!v.is_boolean()) fail(ptr, std::string("expected true or false, got ") + v.type_name());
    return v.get<bool>();
  }
  double num(const json& v, const std::string& ptr) const {
    if (!v.is_number()) fail(ptr, std::string("expected a number, got ") + v.type_name());
    return v.get<double>();
  }
  // A finite number in [lo, hi] (open ends where `open_lo`/`open_hi`).
  double num(const json& v, const std::string& ptr, double lo, double hi, bool open_lo = false, bool open_hi = false) const {
    const double x = num(v, ptr);
    if (!std::isfinite(x) || (open_lo ? x <= lo : x < lo) || (open_hi ? x >= hi : x > hi))
      fail(ptr, "expected a number in " + std::string(open_lo ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + (open_hi ? ")" : "]") +
                    ", got " + v.dump());
    return x;
  }
  // An integer in [lo, hi], checked on the JSON value itself (2^64-ish values never wrap).
  std::int64_t integer(const json& v, const std::string& ptr, std::int64_t lo,
                       std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const {
    if (!v.is_number_integer()) fail(ptr, std::string("expected an integer, got ") + v.type_name());
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(ptr, "expected an integer <= " + std::to_string(hi) + ", got " + v.dump());
    const auto x = v.get<std::int64_t>();
    if (x < lo) fail(ptr, "expected an integer >= " + std::to_string(lo) + ", got " + std::to_string(x));
    if (x > hi) fail(ptr, "expected an integer <= " + std::to_string(hi) + ", got " + std::to_string(x));
    return x;
  }
  std::string oneOf(const json& v, const std::string& ptr, std::initializer_list<const char*> choices) const {
    const std::string s = str(v, ptr);
    std::string list;
    for (const char* c : choices) {
      if (s == c) return s;
      list += std::string(list.empty() ? "" : ", ") + c;
    }
    fail(ptr, "expected one of " + list + ", got \"" + s + "\"");
  }
  // One of a closed set (io/choice.h), as its value: "<label>: <ptr>: expected a, b or c, got ...".
  template <class E, std::size_t N>
  E choice(const json& v, const std::string& ptr, const std::array<Named<E>, N>& table) const {
    return parseChoice(table, str(v, ptr), label_ + ": " + (ptr.empty() ? "/" : ptr));
  }
  // A scalar or an array of scalars, as a list (sweeps).
  std::vector<json> list(const json& v, const std::string& ptr) const {
    if (!v.is_array()) return {v};
    if (v.empty()) fail(ptr, "expected a non-empty array");
    return std::vector<json>(v.begin(), v.end());
  }
  const std::string& label() const { return label_; }

 private:
  static std::string fmt(double x) {
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    return json(x).dump();
  }
  std::string label_;
};

// A path from a document, resolved against the document's directory (absolute paths unchanged).
inline std::string resolveAgainst(const std::string& p, const std::string& document) {
  if (p.empty() || p[0] == '/') return p;
  return (std::filesystem::path(document).parent_path() / p).lexically_normal().string();
}

// The inverse, for what a result records: `p` relative to the document's directory, so a result
// names its inputs as the manifest does and exposes no local absolute path ("model.pt",
// "../data/tokens.bin"). Both are made absolute against the working directory first.
inline std::string relativeTo(const std::string& p, const std::string& document) {
  if (p.empty()) return p;
  const std::filesystem::path dir = std::filesystem::absolute(std::filesystem::path(document)).parent_path();
  const std::filesystem::path rel = std::filesystem::absolute(std::filesystem::path(p)).lexically_normal().lexically_relative(dir.lexically_normal());
  return rel.empty() ? p : rel.string();
}

}  // namespace omn::io
