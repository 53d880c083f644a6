// Reading JSON that comes from outside the process. Every parse bounds the nesting depth (a
// 200,000-deep value would exhaust the stack of every recursive reader after it). Generic: what a
// document of each kind omn-audit writes must hold (its schema, its shape rules, its older forms) is
// documents/document.h, one layer up. Errors are FormatError naming the file. No libtorch.
#pragma once
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

}  // namespace omn::io
