// Text from files is escaped before it reaches a terminal (issue 9, class 7).
#include <gtest/gtest.h>

#include "omn/io/terminal_text.h"

using omn::io::terminalSafe;

TEST(TerminalSafe, ControlCharactersAndEscapesBecomeVisible) {
  EXPECT_EQ(terminalSafe("a\nOK: every statistic within tolerance\n"), "a\\nOK: every statistic within tolerance\\n");
  EXPECT_EQ(terminalSafe("\x1b[2J\x07"), "\\x1b[2J\\x07");
  EXPECT_EQ(terminalSafe("tab\there\r"), "tab\\there\\r");
  EXPECT_EQ(terminalSafe("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI
  EXPECT_EQ(terminalSafe("\x7f"), "\\x7f");
}

TEST(TerminalSafe, Utf8KeptInvalidBytesEscaped) {
  EXPECT_EQ(terminalSafe("Gödel ∑ 𝔼"), "Gödel ∑ 𝔼");
  EXPECT_EQ(terminalSafe("a\xff" "b"), "a\\xffb");
  EXPECT_EQ(terminalSafe("\xc0\xaf"), "\\xc0\\xaf");      // overlong '/'
  EXPECT_EQ(terminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(terminalSafe("\xe2\x88"), "\\xe2\\x88");      // cut sequence
}

TEST(TerminalSafe, LongTextIsCutAndSaysSo) {
  const std::string long_text(45000, 'x');
  const std::string out = terminalSafe(long_text, 100);
  EXPECT_EQ(out, std::string(100, 'x') + "… (44900 more bytes)");
  EXPECT_EQ(terminalSafe("short", 100), "short");
}
