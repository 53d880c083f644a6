#include "omn/data/token_set_writer.h"

#include <filesystem>

#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"
#include "omn/output/npy.h"

namespace omn::data {
namespace fs = std::filesystem;
using nlohmann::json;

std::string tokenRecordPath(const std::string& tokens) { return fs::path(tokens).replace_extension(".tokens.json").string(); }

TokenSetPaths tokenSetPaths(const std::string& out) {
  TokenSetPaths p;
  const fs::path o(out);
  if (o.filename().empty() || o.extension() == ".json")
    throw UsageError("-o " + out + ": name the token file (OUT.npy, or OUT.bin for raw u16/u32 ids)");
  fs::path stem = o;
  stem.replace_extension();
  p.tokens = out;
  p.offsets = stem.string() + ".offsets.npy";
  p.record = tokenRecordPath(out);
  p.npy = o.extension() == ".npy";
  return p;
}

namespace {

std::string tokenBytes(const std::vector<std::uint32_t>& ids, bool npy, bool u16) {
  if (!u16) return npy ? output::npyBytes(ids.data(), {static_cast<std::int64_t>(ids.size())}, "<u4", 4) : std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * 4);
  std::vector<std::uint16_t> narrow(ids.begin(), ids.end());
  return npy ? output::npyBytes(narrow.data(), {static_cast<std::int64_t>(narrow.size())}, "<u2", 2) : std::string(reinterpret_cast<const char*>(narrow.data()), narrow.size() * 2);
}

}  // namespace

json writeTokenSet(const TokenSetPaths& paths, const std::vector<std::uint32_t>& ids, const TokenSetRecord& r) {
  const bool u16 = r.vocab_size <= 65536;
  output::writeFileAtomic(paths.tokens, tokenBytes(ids, paths.npy, u16));
  std::vector<std::int64_t> starts;
  json documents = json::array();
  for (const TokenizedDocument& d : r.documents) {
    if (d.tokens > 0) starts.push_back(static_cast<std::int64_t>(d.start));
    documents.push_back({{"path", d.path}, {"sha256", d.sha256}, {"bytes", d.bytes}, {"tokens", d.tokens}, {"start", d.start}});
  }
  output::writeFileAtomic(paths.offsets, output::npyBytes(starts.data(), {static_cast<std::int64_t>(starts.size())}, "<i8", 8));
  const std::string format = paths.npy ? "npy" : (u16 ? "u16" : "u32");
  const std::string revision = r.tokenizer.value("sha256", "");
  const json doc = {
      {"schema", "omn-audit/tokens@1"},
      {"provenance", r.provenance},
      {"tokenizer_revision", revision},
      {"tokenizer", r.tokenizer},
      {"special_tokens", r.special_tokens},
      {"tokens", {{"path", fs::path(paths.tokens).filename().string()}, {"sha256", io::sha256File(paths.tokens)},
                  {"format", format}, {"dtype", u16 ? "uint16" : "uint32"}, {"n_tokens", ids.size()}}},
      {"offsets", {{"path", fs::path(paths.offsets).filename().string()}, {"sha256", io::sha256File(paths.offsets)},
                   {"n_documents", starts.size()}}},
      {"eval_arguments", {"--tokens", paths.tokens, "--token-format", format, "--offsets", paths.offsets, "--tokenizer-revision", revision}},
      {"documents", documents}};
  output::writeFileAtomic(paths.record, output::dumpJson(doc));
  return doc;
}

}  // namespace omn::data
