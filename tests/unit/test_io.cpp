// Readers on hand-made inputs: safetensors validation, views and bounds, SHA-256, format detection.
#include <gtest/gtest.h>

#include "../support/temp_file.h"
#include "omn/errors.h"
#include "omn/io/checkpoint.h"
#include "omn/io/sha256.h"
#include "omn/io/tensor_index.h"

using omn::FormatError;
using omn::test::safetensors;
using omn::test::TempDir;

namespace {
std::string errorOf(const std::string& path) {
  try {
    omn::io::openCheckpoint(path);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(omn::io::sha256Bytes("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  TempDir d;
  const std::string p = d.file("empty", "");
  EXPECT_EQ(omn::io::sha256File(p), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, NormaliseAndRequire) {
  EXPECT_EQ(omn::io::normaliseSha256(std::string(64, 'A'), "--sha256"), std::string(64, 'a'));
  EXPECT_THROW(omn::io::normaliseSha256("abc", "--sha256"), omn::UsageError);
  EXPECT_THROW(omn::io::requireSha256("f", std::string(64, 'a'), std::string(64, 'b')), omn::IntegrityError);
}

TEST(Safetensors, ReadsValuesAndMetadata) {
  TempDir d;
  // F32 [2] = {1.5, -2}, BF16 [1] = 68.5 (0x4289)
  std::string data("\x00\x00\xc0\x3f\x00\x00\x00\xc0\x89\x42", 10);
  const std::string hdr = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("g":{"dtype":"BF16","shape":[1],"data_offsets":[8,10]}})";
  auto ck = omn::io::openCheckpoint(d.file("m.safetensors", safetensors(hdr, data)));
  EXPECT_EQ(ck->format, "safetensors");
  EXPECT_EQ(ck->metadata["__metadata__"]["k"], "v");
  EXPECT_EQ(omn::io::readAsDouble(ck->index.at("a")), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(omn::io::readAsDouble(ck->index.at("g")), (std::vector<double>{68.5}));
}

TEST(Safetensors, RefusesWhatTheReferenceRefuses) {
  TempDir d;
  struct Case {
    const char* name;
    std::string bytes;
    const char* expect;
  } cases[] = {
      {"short", "abc", "too short"},
      {"huge", omn::test::le64(1ull << 63) + "{}", "exceeds the 100 MB limit"},
      {"past_end", omn::test::le64(1000) + "{}", "runs past the end"},
      {"not_json", safetensors("{not json", ""), "): not valid JSON"},
      {"bad_utf8", safetensors("{\"\xff\":1}", ""), "): not valid JSON"},
      {"array", safetensors("[]", ""), "not a JSON object"},
      {"deep", safetensors("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}", ""), "nested deeper than 64 levels"},
      {"dtype", safetensors(R"({"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", "x"), "unsupported dtype"},
      {"size", safetensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "xxxx"), "expected numel"},
      {"overflow", safetensors(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", "xxxx"),
       "overflows"},
      {"gap", safetensors(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})", "xx"), "(gap)"},
      {"overlap", safetensors(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})", "xxx"),
       "overlaps"},
      {"uncovered", safetensors(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "xx"), "covered exactly"},
      {"beyond", safetensors(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "xx"), "past the data buffer"},
      {"neg_shape", safetensors(R"({"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})", ""), "non-negative"},
      {"metadata", safetensors(R"({"__metadata__":{"k":1}})", ""), "expected a string"},
  };
  for (const auto& c : cases) {
    const std::string msg = errorOf(d.file(std::string(c.name) + ".safetensors", c.bytes));
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
    EXPECT_NE(msg.find(c.name), std::string::npos) << "message names the file: " << msg;
  }
}

TEST(TensorIndex, StridedViewsReadInLogicalOrder) {
  std::vector<float> storage(12);
  for (int i = 0; i < 12; ++i) storage[i] = static_cast<float>(i);
  omn::io::TensorRef t;
  t.name = "v";
  t.dtype = omn::io::DType::F32;
  t.shape = {2, 2};
  t.strides = {1, 3};  // transposed view of a [*, 3] matrix
  t.storage_offset = 4;
  t.storage_data = reinterpret_cast<const std::uint8_t*>(storage.data());
  EXPECT_EQ(omn::io::readAsDouble(t), (std::vector<double>{4, 7, 5, 8}));
  EXPECT_FALSE(t.contiguous());
  EXPECT_NO_THROW(omn::io::checkViewBounds(t, 12, "f"));
  EXPECT_THROW(omn::io::checkViewBounds(t, 8, "f"), FormatError);  // reaches element 8
  t.strides = {1};
  EXPECT_THROW(omn::io::checkViewBounds(t, 12, "f"), FormatError);  // rank mismatch
  t.strides = {1, 3};
  t.storage_offset = -1;
  EXPECT_THROW(omn::io::checkViewBounds(t, 12, "f"), FormatError);
}

TEST(Checkpoint, DetectsFormats) {
  TempDir d;
  EXPECT_NE(errorOf(d.file("x.bin", "hello world, not a checkpoint")).find("unrecognised format"), std::string::npos);
  EXPECT_NE(errorOf(d.file("legacy.pt", std::string("\x80\x02\x8a\x0a", 4))).find("legacy"), std::string::npos);
  EXPECT_NE(errorOf(d.path() + "/missing.pt").find("cannot open"), std::string::npos);
  EXPECT_NE(errorOf(d.file("z.pt", std::string("PK\x03\x04", 4) + std::string(30, '\0'))).find("end-of-central-directory"),
            std::string::npos);
}

// The head-equals-embedding check: one memcmp for contiguous tensors, element by element for views
// and byte orders, and a difference anywhere (not only the first element) is seen.
TEST(TensorIndex, SameBytesComparesLogicalValues) {
  std::vector<float> a(12), b(12);
  for (int i = 0; i < 12; ++i) a[i] = b[i] = static_cast<float>(i);
  auto ref = [](const std::vector<float>& s, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides, std::int64_t off) {
    omn::io::TensorRef t;
    t.dtype = omn::io::DType::F32;
    t.shape = std::move(shape);
    t.strides = std::move(strides);
    t.storage_offset = off;
    t.storage_data = reinterpret_cast<const std::uint8_t*>(s.data());
    return t;
  };
  EXPECT_TRUE(omn::io::sameBytes(ref(a, {3, 4}, {4, 1}, 0), ref(b, {3, 4}, {4, 1}, 0)));
  b[11] = -1.0f;  // the last element
  EXPECT_FALSE(omn::io::sameBytes(ref(a, {3, 4}, {4, 1}, 0), ref(b, {3, 4}, {4, 1}, 0)));
  EXPECT_FALSE(omn::io::sameBytes(ref(a, {3, 4}, {4, 1}, 0), ref(a, {4, 3}, {3, 1}, 0)));  // shape
  // a transposed view against a contiguous copy of it: equal values in logical order
  std::vector<float> t(12);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) t[r * 3 + c] = a[c * 4 + r];
  EXPECT_TRUE(omn::io::sameBytes(ref(a, {4, 3}, {1, 4}, 0), ref(t, {4, 3}, {3, 1}, 0)));
  t[5] += 1;
  EXPECT_FALSE(omn::io::sameBytes(ref(a, {4, 3}, {1, 4}, 0), ref(t, {4, 3}, {3, 1}, 0)));
  // the same values stored big-endian
  std::vector<float> be(a);
  for (float& f : be) {
    auto* p = reinterpret_cast<std::uint8_t*>(&f);
    std::swap(p[0], p[3]), std::swap(p[1], p[2]);
  }
  omn::io::TensorRef big = ref(be, {3, 4}, {4, 1}, 0);
  big.big_endian = true;
  EXPECT_TRUE(omn::io::sameBytes(ref(a, {3, 4}, {4, 1}, 0), big));
}

// ...and the same question answered through the file descriptors (profile's head check: no page of
// the mapping touched), with pieces smaller than the tensor so the loop runs, on a real file.
TEST(Checkpoint, SameTensorBytesReadsThroughTheFile) {
  TempDir d;
  const std::size_t n = (std::size_t{5} << 20) / 4 + 3;  // 5 MiB + 12 bytes of F32: many pieces, the last one partial
  static_assert((std::size_t{5} << 20) % (omn::io::kStreamPiece / 2) == 0, "the last piece is the 12 bytes");
  std::string a(n * 4, '\0');
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(i * 7 % 251);
  std::string c = a;
  c[c.size() - 1] ^= 1;  // differs in the last byte only
  const std::string shape = "[" + std::to_string(n) + "]";
  auto entry = [&](const char* name, std::size_t from) {
    return std::string("\"") + name + R"(":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[)" + std::to_string(from) + "," +
           std::to_string(from + a.size()) + "]}";
  };
  const std::string hdr = "{" + entry("a", 0) + "," + entry("b", a.size()) + "," + entry("c", 2 * a.size()) + "}";
  auto ck = omn::io::openCheckpoint(d.file("m.safetensors", safetensors(hdr, a + a + c)));
  const auto &ta = ck->index.at("a"), &tb = ck->index.at("b"), &tc = ck->index.at("c");
  EXPECT_TRUE(omn::io::sameTensorBytes(*ck, ta, tb));
  EXPECT_FALSE(omn::io::sameTensorBytes(*ck, ta, tc));
  EXPECT_EQ(omn::io::sameTensorBytes(*ck, ta, tc), omn::io::sameBytes(ta, tc));  // the mapping agrees
}
