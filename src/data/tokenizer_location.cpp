#include <filesystem>
#include <fstream>

#include "omn/data/text_tokenizer.h"
#include "omn/errors.h"
#include "omn/io/sha256.h"

namespace omn::data {
namespace fs = std::filesystem;

namespace {

bool startsLikeJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c;
  while (in.get(c))
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return c == '{';
  return false;
}

}  // namespace

TokenizerLocation locateTokenizer(const std::string& path) {
  TokenizerLocation t;
  t.given = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const char* name : {"tokenizer.json", "tokenizer.model"}) {
      const fs::path f = fs::path(path) / name;
      if (fs::is_regular_file(f, ec)) {
        t.path = f.string();
        break;
      }
    }
    if (t.path.empty())
      throw UsageError("--tokenizer " + path + ": a folder without tokenizer.json or tokenizer.model (a Hugging Face model folder holds one)");
  } else if (fs::is_regular_file(path, ec)) {
    t.path = path;
  } else {
    throw UsageError("--tokenizer " + path + ": no such file or folder (a tokenizer.json, a SentencePiece .model, or a model folder)");
  }
  t.kind = startsLikeJson(t.path) ? TokenizerKind::HuggingFaceJson : TokenizerKind::SentencePiece;
  t.sha256 = io::sha256File(t.path);
  const fs::path config = fs::path(t.path).parent_path() / "tokenizer_config.json";
  if (fs::is_regular_file(config, ec)) {
    t.config_path = config.string();
    t.config_sha256 = io::sha256File(t.config_path);
  }
  return t;
}

}  // namespace omn::data
