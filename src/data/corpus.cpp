#include "omn/data/corpus.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "omn/errors.h"
#include "omn/io/json_reader.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"

namespace omn::data {
namespace fs = std::filesystem;
using nlohmann::json;

bool heldOut(const std::string& name, const std::string& salt, double fraction) {
  const std::string key = salt + "\n" + name;
  const std::string hex = io::sha256Bytes(key.data(), key.size());
  const std::uint64_t v = std::stoull(hex.substr(0, 16), nullptr, 16);
  return static_cast<double>(v) / 18446744073709551616.0 < fraction;
}

CorpusConfig loadCorpusConfig(const std::string& path) {
  const json j = output::readJsonFile(path, "corpus config");
  const io::JsonReader r("corpus config " + path);
  r.object(j, "", {"schema", "name", "inputs", "extension", "heldout_fraction", "split_salt", "tokenizer", "max_sentence_bytes",
                   "encode_chunk_bytes"});
  r.schema(j, "omn-audit/corpus-config@1");
  CorpusConfig c;
  c.source = path;
  const std::string text = readTextFile(path, "corpus config");
  c.config_sha256 = io::sha256Bytes(text.data(), text.size());
  c.name = r.str(r.need(j, "", "name"), "/name");
  const json& in = r.need(j, "", "inputs");
  if (!in.is_array() || in.empty()) r.fail("/inputs", "expected a non-empty array of files or directories");
  for (std::size_t i = 0; i < in.size(); ++i)
    c.inputs.push_back(io::resolveAgainst(r.str(in[i], "/inputs/" + std::to_string(i)), path));
  if (const json* v = r.opt(j, "extension")) c.extension = r.str(*v, "/extension");
  if (const json* v = r.opt(j, "heldout_fraction")) c.heldout_fraction = r.num(*v, "/heldout_fraction", 0, 1, true, true);
  if (const json* v = r.opt(j, "split_salt")) c.split_salt = r.str(*v, "/split_salt");
  if (const json* v = r.opt(j, "max_sentence_bytes")) c.max_sentence_bytes = r.integer(*v, "/max_sentence_bytes", 256, 1 << 24);
  if (const json* v = r.opt(j, "encode_chunk_bytes")) c.encode_chunk_bytes = r.integer(*v, "/encode_chunk_bytes", 16, 1 << 30);
  if (const json* t = r.opt(j, "tokenizer")) {
    r.object(*t, "/tokenizer", {"vocab_size", "model_type", "character_coverage"});
    if (const json* v = r.opt(*t, "vocab_size")) c.vocab_size = r.integer(*v, "/tokenizer/vocab_size", 300, 1 << 20);
    if (const json* v = r.opt(*t, "model_type")) c.model_type = r.oneOf(*v, "/tokenizer/model_type", {"bpe", "unigram"});
    if (const json* v = r.opt(*t, "character_coverage"))
      c.character_coverage = r.num(*v, "/tokenizer/character_coverage", 0.9, 1.0);
  }
  return c;
}

std::vector<std::string> inputFiles(const CorpusFiles& c) { return {c.json_path, c.tokenizer_path, c.train_path, c.heldout_path}; }

CorpusFiles openCorpus(const std::string& dir_or_json) {
  std::error_code ec;
  CorpusFiles f;
  f.json_path = fs::is_directory(dir_or_json, ec) ? (fs::path(dir_or_json) / "corpus.json").string() : dir_or_json;
  f.dir = fs::path(f.json_path).parent_path().string();
  const json j = output::readJsonFile(f.json_path, "corpus");
  const io::JsonReader r("corpus " + f.json_path);
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "omn-audit/corpus@1")
    r.fail("/schema", "expected \"omn-audit/corpus@1\" (written by omn-audit corpus)");
  f.json_sha256 = io::sha256File(f.json_path);
  auto file = [&](const char* key, std::string* path, std::string* sha) {
    const json& o = r.need(j, "", key);
    *path = io::resolveAgainst(r.str(r.need(o, std::string("/") + key, "path"), std::string("/") + key + "/path"), f.json_path);
    *sha = r.str(r.need(o, std::string("/") + key, "sha256"), std::string("/") + key + "/sha256");
    const std::string actual = io::sha256File(*path);
    io::requireSha256(*path, *sha, actual);
  };
  file("train", &f.train_path, &f.train_sha256);
  file("heldout", &f.heldout_path, &f.heldout_sha256);
  file("tokenizer", &f.tokenizer_path, &f.tokenizer_sha256);
  f.token_format = r.oneOf(r.need(j, "", "token_format"), "/token_format", {"u16", "u32"});
  f.vocab_size = r.integer(r.need(j["tokenizer"], "/tokenizer", "vocab_size"), "/tokenizer/vocab_size", 2, 1 << 24);
  f.eos_id = r.integer(r.need(j["tokenizer"], "/tokenizer", "eos_id"), "/tokenizer/eos_id", 0, f.vocab_size - 1);
  f.heldout_unigram_cross_entropy = r.num(r.need(r.need(j, "", "unigram"), "/unigram", "heldout_cross_entropy"),
                                          "/unigram/heldout_cross_entropy");
  return f;
}

}  // namespace omn::data
