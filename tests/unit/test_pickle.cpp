// The restricted unpickler on hand-made byte strings: every allowed opcode builds what Python
// would, everything else is refused with the opcode or global and its byte offset.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "omn/errors.h"
#include "omn/io/pickle.h"

using namespace std::string_literals;
using omn::io::PyValue;
using omn::io::unpickle;

namespace {

std::string uni(const std::string& s) {
  std::string out = "X";
  const auto n = static_cast<std::uint32_t>(s.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return out + s;
}

omn::io::PyPtr run(const std::string& body) {
  const std::string p = "\x80\x02" + body;
  return unpickle(reinterpret_cast<const std::uint8_t*>(p.data()), p.size(), "test.pkl", {});
}

std::string refusal(const std::string& body) {
  try {
    run(body);
  } catch (const omn::FormatError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Pickle, BuildsPlainValues) {
  // {"a": [1, -2, 300, 70000, True, None, 2.5], "b": (1, 2, 3), "c": 2**40}
  std::string body = "}(" + uni("a") + "](K\x01J\xfe\xff\xff\xffM\x2c\x01J\x70\x11\x01\x00\x88NG\x40\x04\x00\x00\x00\x00\x00\x00"s +
                     "e" + uni("b") + "K\x01K\x02K\x03\x87" + uni("c") + std::string("\x8a\x06\x00\x00\x00\x00\x00\x01", 8) +
                     "u.";
  auto v = run(body);
  nlohmann::json j = omn::io::toJson(*v);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"a": [1, -2, 300, 70000, true, null, 2.5], "b": [1, 2, 3], "c": 1099511627776})"));
}

TEST(Pickle, MemoSharesValues) {
  // l = []; (l, l) through BINPUT/BINGET
  auto v = run("]q\x00h\x00\x86."s);
  ASSERT_EQ(v->kind, PyValue::Kind::Tuple);
  EXPECT_EQ(v->items[0].get(), v->items[1].get());
}

TEST(Pickle, NegativeLong1SignExtends) {
  auto v = run(std::string("\x8a\x02\x00\xff.", 5));
  EXPECT_EQ(v->i, -256);
}

TEST(Pickle, OrderedDictWithBuildState) {
  std::string body = "ccollections\nOrderedDict\n)R" + uni("k") + "K\x07s}" + uni("_metadata") + "}s" + "b.";
  auto v = run(body);
  ASSERT_EQ(v->kind, PyValue::Kind::Dict);
  EXPECT_TRUE(v->ordered);
  ASSERT_EQ(v->attrs.size(), 1u);
  EXPECT_EQ(v->attrs[0].first->s, "_metadata");
}

TEST(Pickle, RefusesGlobalsOutsideTheAllowlist) {
  for (const char* g : {"posix\nsystem\n", "os\nsystem\n", "builtins\neval\n", "subprocess\nPopen\n", "torch\nload\n"}) {
    const std::string msg = refusal(std::string("c") + g + uni("x") + "\x85R.");
    std::string name(g);
    name = name.substr(0, name.find('\n')) + "." + name.substr(name.find('\n') + 1, name.size() - name.find('\n') - 2);
    EXPECT_NE(msg.find("GLOBAL '" + name + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pickle byte 2"), std::string::npos) << msg;
  }
}

TEST(Pickle, RefusesForbiddenOpcodes) {
  EXPECT_NE(refusal(uni("posix") + uni("system") + "\x93" + ".").find("STACK_GLOBAL"), std::string::npos);
  EXPECT_NE(refusal(uni("posix") + uni("system") + "\x93" + ".").find("posix.system"), std::string::npos);
  EXPECT_NE(refusal("(iposix\nsystem\n.").find("INST"), std::string::npos);
  EXPECT_NE(refusal("(o.").find("OBJ"), std::string::npos);
  EXPECT_NE(refusal("\x82\x01.").find("EXT1"), std::string::npos);
  EXPECT_NE(refusal("S'x'\n.").find("STRING"), std::string::npos);
  EXPECT_NE(refusal("\xff.").find("0xff"), std::string::npos);
}

TEST(Pickle, RefusesReduceOfNonConstructors) {
  // torch.float32 is allowlisted as a value, not as something to call
  EXPECT_NE(refusal("ctorch\nfloat32\n)R.").find("not allowed"), std::string::npos);
  // REDUCE on a plain value
  EXPECT_NE(refusal("K\x01)R.").find("not an allowlisted global"), std::string::npos);
}

TEST(Pickle, TruncationAndStackErrorsAreFormatErrors) {
  EXPECT_NE(refusal("X\xff\xff\xff\x00ab"s).find("truncated"), std::string::npos);
  EXPECT_NE(refusal("K\x01").find("without STOP"), std::string::npos);
  EXPECT_NE(refusal("a.").find("stack underflow"), std::string::npos);
  EXPECT_NE(refusal("h\x05.").find("memo key 5"), std::string::npos);
  EXPECT_NE(refusal("K\x01K\x02.").find("STOP with 2 values"), std::string::npos);
  EXPECT_NE(refusal("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."s).find("wider than 64 bits"), std::string::npos);
}

TEST(Pickle, CyclesAreRefused) {
  // l = []; l.append(l)
  EXPECT_NE(refusal("]q\x00h\x00" "a."s).find("cyclic"), std::string::npos);
}

TEST(Pickle, DeepNestingDoesNotOverflowTheStack) {
  // 1,000,000 nested lists: accepted by the VM, refused (not crashed) when rendered
  std::string body;
  for (int i = 0; i < 1000000; ++i) body += "]";
  for (int i = 0; i < 999999; ++i) body += "a";
  auto v = run(body + ".");
  EXPECT_THROW(omn::io::toJson(*v), omn::FormatError);
}
