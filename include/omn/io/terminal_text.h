// Text from files (metadata keys and values, tensor names, paths, JSON strings inside messages)
// made safe for a terminal before it is printed: control characters (newlines, ESC, the C1 range)
// and invalid UTF-8 are written as visible escapes ("\n", "\x1b", "\u009b", "\xff"), so a file can
// neither forge a line of output ("OK: every statistic within tolerance") nor drive the terminal.
// No libtorch.
#pragma once
#include <cstddef>
#include <string>

namespace omn::io {

// `max_chars` > 0: longer text is cut there (at a character boundary) and says how much was cut.
std::string terminalSafe(const std::string& text, std::size_t max_chars = 0);

}  // namespace omn::io
