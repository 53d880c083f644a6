// The corpus's tokenizer model without SentencePiece's recorded thread count (tokenizer_model.h).
#include <gtest/gtest.h>

#include "omn/data/tokenizer_model.h"
#include "omn/errors.h"

namespace {
std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}
}  // namespace

TEST(TokenizerModel, DropsOnlyTheTrainerSpecThreadCount) {
  // field 1 "ab"; field 2 (trainer_spec) { field 3 = 5, field 16 = 2 (key 0x80 0x01), field 4 "x" };
  // field 3 = 300 (two-byte varint); field 16 at the top level is another message's field: kept
  const std::string spec = bytes({0x18, 0x05, 0x80, 0x01, 0x02, 0x22, 0x01, 'x'});
  const std::string model = bytes({0x0a, 0x02, 'a', 'b', 0x12, static_cast<int>(spec.size())}) + spec +
                            bytes({0x18, 0xac, 0x02, 0x80, 0x01, 0x07});
  const std::string want = bytes({0x0a, 0x02, 'a', 'b', 0x12, 0x05, 0x18, 0x05, 0x22, 0x01, 'x', 0x18, 0xac, 0x02, 0x80, 0x01, 0x07});
  EXPECT_EQ(omn::data::withoutThreadCount(model), want);
  // two thread counts, one result
  std::string other = model;
  other[10] = 0x01;  // num_threads 1 instead of 2
  EXPECT_EQ(omn::data::withoutThreadCount(other), want);
  EXPECT_EQ(omn::data::withoutThreadCount(want), want);  // nothing to drop: unchanged
  EXPECT_EQ(omn::data::withoutThreadCount(""), "");
}

TEST(TokenizerModel, MalformedBytesAreFormatErrors) {
  EXPECT_THROW(omn::data::withoutThreadCount(bytes({0x12, 0x09, 0x18})), omn::FormatError);       // length past the end
  EXPECT_THROW(omn::data::withoutThreadCount(bytes({0x18, 0x80})), omn::FormatError);             // varint cut
  EXPECT_THROW(omn::data::withoutThreadCount(bytes({0x0b, 0x00})), omn::FormatError);             // wire type 3
  EXPECT_THROW(omn::data::withoutThreadCount(bytes({0x12, 0x02, 0x80, 0x01})), omn::FormatError);  // inner varint cut
}
