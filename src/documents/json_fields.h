// Internal to documents/: a document's members read into typed fields through nlohmann's own
// conversions (get_to, and a from_json/to_json pair per struct, found by ADL), with the place of a
// failure kept. A conversion that fails throws FieldError; each enclosing member or array element it
// passes through on the way out puts its token in front, so the error reaching `readAs` names the
// whole JSON pointer, and readAs turns it into a FormatError naming the document too. Documents are
// validated against their schema before they are read (document.h), so a failure here is a reader
// that asked for more than the schema promises -- still exit 2, never undefined behaviour.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/json_pointer.h"

namespace omn::documents::fields {

using nlohmann::json;

class FieldError : public std::runtime_error {
 public:
  FieldError(std::string pointer, const std::string& what) : std::runtime_error(what), pointer_(std::move(pointer)) {}
  const std::string& pointer() const { return pointer_; }
  void prepend(const std::string& token) { pointer_ = "/" + escapePointerToken(token) + pointer_; }

 private:
  std::string pointer_;
};

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
inline std::string plainMessage(const json::exception& e) {
  const std::string w = e.what();
  const auto close = w.find("] ");
  return w.rfind("[json.exception", 0) == 0 && close != std::string::npos ? w.substr(close + 2) : w;
}

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsStringMap : std::false_type {};
template <class T>
struct IsStringMap<std::map<std::string, T>> : std::true_type {};

template <class T>
void convert(const json& v, T& out);

// An integer member of type T: a JSON integer, or a number with no fractional part, within T's range
// -- never nlohmann's own conversion, which truncates 128.5 to 128, wraps 2^64 - 1 to -1 and reads
// true as 1. A seed is std::uint64_t (it may exceed 2^63), a count or a step std::int64_t.
template <class T>
T integerOf(const json& v) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using Limits = std::numeric_limits<T>;
  auto outOfRange = [&] {
    return FieldError("", "expected an integer from " + std::to_string(Limits::min()) + " to " + std::to_string(Limits::max()) + ", got " +
                              v.dump());
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(Limits::max())) throw outOfRange();
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (i < static_cast<std::int64_t>(Limits::min()) || i > static_cast<std::int64_t>(Limits::max())) throw outOfRange();
    } else {
      if (i < 0 || static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(Limits::max())) throw outOfRange();
    }
    return static_cast<T>(i);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::trunc(d)) throw FieldError("", "expected an integer, got " + v.dump());
    // [min, max] exactly: T's range is [-2^digits, 2^digits) or [0, 2^digits), both ends representable
    const double end = std::ldexp(1.0, Limits::digits);
    if (d >= end || d < (std::is_signed_v<T> ? -end : 0.0)) throw outOfRange();
    return static_cast<T>(d);
  }
  throw FieldError("", std::string("expected an integer, got ") + v.type_name());
}

// A number member: any JSON number (an integer read exactly as a double can hold it); nlohmann's own
// conversion would also read true as 1.
inline double numberOf(const json& v) {
  if (!v.is_number()) throw FieldError("", std::string("expected a number, got ") + v.type_name());
  return v.get<double>();
}

// `v`, found at `token` of its parent, into `out`; a failure inside names the token.
template <class T>
void convertAt(const json& v, const std::string& token, T& out) {
  try {
    convert(v, out);
  } catch (FieldError& e) {
    e.prepend(token);
    throw;
  } catch (const json::exception& e) {
    throw FieldError("/" + escapePointerToken(token), plainMessage(e));
  }
}

// An optional is null (or, as a member, absent) when empty -- an optional of an optional tells an
// absent member (outer empty) from a null one (inner empty); a vector and a map of strings are
// read element by element so that a failure names its index or key; an integer and a number as
// integerOf and numberOf say; anything else (a string, a boolean, a struct's from_json) is nlohmann's.
template <class T>
void convert(const json& v, T& out) {
  if constexpr (IsOptional<T>::value) {
    if (v.is_null()) {
      // optional<optional<U>>: a member that may be absent (outer empty) or null (inner empty)
      if constexpr (IsOptional<typename T::value_type>::value) out.emplace();
      else out.reset();
    } else {
      out.emplace();
      convert(v, *out);
    }
  } else if constexpr (IsVector<T>::value) {
    if (!v.is_array()) throw FieldError("", std::string("expected an array, got ") + v.type_name());
    out.clear();
    out.resize(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) convertAt(v[i], std::to_string(i), out[i]);
  } else if constexpr (IsStringMap<T>::value) {
    if (!v.is_object()) throw FieldError("", std::string("expected an object, got ") + v.type_name());
    out.clear();
    for (auto it = v.begin(); it != v.end(); ++it) convertAt(it.value(), it.key(), out[it.key()]);
  } else if constexpr (std::is_same_v<T, json>) {
    out = v;  // a block the schema leaves free-form (a checkpoint's metadata, a manifest as parsed)
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    out = integerOf<T>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(numberOf(v));
  } else {
    v.get_to(out);
  }
}

// Member `key` of the object `j` into `out`: required unless `out` is an optional (then absent
// reads as empty).
template <class T>
void get(const json& j, const char* key, T& out) {
  if (!j.is_object()) throw FieldError("", std::string("expected an object, got ") + j.type_name());
  const auto it = j.find(key);
  if (it == j.end()) {
    if constexpr (IsOptional<T>::value) {
      out.reset();
      return;
    } else {
      throw FieldError("/" + escapePointerToken(key), "required");
    }
  }
  convertAt(*it, key, out);
}

// The writing side: an empty optional is null; vectors and maps element by element.
template <class T>
json write(const T& v) {
  if constexpr (IsOptional<T>::value) {
    return v ? write(*v) : json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    json a = json::array();
    for (const auto& x : v) a.push_back(write(x));
    return a;
  } else if constexpr (IsStringMap<T>::value) {
    json o = json::object();
    for (const auto& [k, x] : v) o[k] = write(x);
    return o;
  } else {
    return json(v);
  }
}

// Member `key` written unless `v` is empty (a member the schema lets a document leave out).
template <class T>
void putIfSet(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = write(*v);
}

// `doc` (already checked against its schema, read from `label`) as T; FormatError naming the label
// and the JSON pointer of the first member that does not convert.
template <class T>
T readAs(const json& doc, const std::string& label) {
  T out{};
  try {
    convert(doc, out);
  } catch (const FieldError& e) {
    throw FormatError(label + ": " + (e.pointer().empty() ? "/" : e.pointer()) + ": " + e.what());
  } catch (const json::exception& e) {
    throw FormatError(label + ": /: " + plainMessage(e));
  }
  return out;
}

}  // namespace omn::documents::fields
