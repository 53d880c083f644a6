// The restricted unpickler on hand-made byte strings: every allowed opcode builds what Python
// would, everything else is refused with the opcode or global and its byte offset.
#include <gtest/gtest.h>

#include <chrono>

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
  // 200,000 nested lists (a recursive teardown would overflow an 8 MiB stack): accepted by the
  // VM, refused (not crashed) when rendered
  std::string body;
  for (int i = 0; i < 200000; ++i) body += "]";
  for (int i = 0; i < 199999; ++i) body += "a";
  auto v = run(body + ".");
  EXPECT_THROW(omn::io::toJson(*v), omn::FormatError);
}

// --- size bombs: the work and the memory are bounded by the pickle's size ----------------------

namespace {
std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}
}  // namespace

TEST(PickleBombs, SharedReferencesRenderOnce) {
  // x = (1,); 40 times x = (x, x): 200 bytes of pickle, 2^40 leaves when expanded
  auto v = run("K\x01\x85q\x00"s + repeat("h\x00\x86q\x00"s, 40) + ".");
  const auto start = std::chrono::steady_clock::now();
  const nlohmann::json j = omn::io::toJson(*v);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(j[1], nlohmann::json({{"$ref", "/0"}}));     // the second use names the first
  EXPECT_EQ(j[0][1], nlohmann::json({{"$ref", "/0/0"}}));
  EXPECT_LT(j.dump().size(), 4000u);
}

TEST(PickleBombs, RenderedTextIsCapped) {
  // a list of 300,000 ints renders as ~1 MiB of JSON and one marker for the rest
  auto v = run("](" + repeat("K\x07", 1000) + "e" + repeat("(" + repeat("K\x07", 1000) + "e", 299) + ".");
  ASSERT_EQ(v->items.size(), 300000u);
  const nlohmann::json j = omn::io::toJson(*v);
  ASSERT_LT(j.size(), 100000u);
  EXPECT_EQ(j.back()["$omitted"]["type"], "items");
  EXPECT_EQ(j.back()["$omitted"]["length"].get<std::size_t>() + j.size() - 1, 300000u);
  EXPECT_LT(omn::io::jsonText(*v).size(), 210u);  // messages quote a short prefix
}

TEST(PickleBombs, NoneFloodIsRefusedAtTheStackLimit) {
  // 2,000,000 NONE opcodes: 2 MB that used to become ~550 MB of values (20 MB: 5.6 GB)
  const std::string msg = refusal(std::string(2000000, 'N') + ".");
  EXPECT_NE(msg.find("test.pkl: pickle byte 1000002: more than 1000000 values and marks wait on the pickle stack"),
            std::string::npos) << msg;
  EXPECT_NE(refusal(std::string(2000000, '(') + ".").find("size bomb"), std::string::npos);
}

TEST(PickleBombs, ReplayedStateIsChargedAndRefused) {
  // a 1,000-entry state dict, memoised, applied by BUILD 100,000 times (3 bytes each): 3.2 GB
  std::string state = "}q\x01(";
  for (int i = 0; i < 1000; ++i) state += uni("k" + std::to_string(i)) + "N";
  const std::string body = "ccollections\nOrderedDict\n)R" + state + "ub" + repeat("h\x01" "b", 100000) + ".";
  const std::string msg = refusal(body);
  EXPECT_NE(msg.find("MiB of values from"), std::string::npos) << msg;
  EXPECT_NE(msg.find("refused as a size bomb"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test.pkl: pickle byte "), std::string::npos) << msg;
}

TEST(PickleBombs, EmptyTupleFloodIsRefusedByTheBudget) {
  // ")a" appends a new value per 2 bytes: ~230 bytes of memory each, more than the budget's 80
  const std::string msg = refusal("]" + repeat(")a", 1200000) + ".");
  EXPECT_NE(msg.find("refused as a size bomb"), std::string::npos) << msg;
}

TEST(PickleBombs, ManyDictKeysCostLinearTime) {
  // one SETITEMS of 200,000 string keys (and a key set twice): a scan per key took n^2
  std::string body = "}(";
  for (int i = 0; i < 200000; ++i) body += uni("key" + std::to_string(i)) + "K\x01";
  body += uni("key7") + "K\x02u.";
  const auto start = std::chrono::steady_clock::now();
  auto v = run(body);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_EQ(v->dict.size(), 200000u);
  EXPECT_EQ(v->get("key7")->i, 2);
}
