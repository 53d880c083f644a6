// Real text → a tokenizer and token streams with an honest held-out split (omn-audit corpus).
// Documents are held out by a hash of their name (deterministic, independent of which other files
// are present); the SentencePiece BPE tokenizer is trained on the training documents only. No libtorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/io/json_document.h"
namespace omn::data {

struct CorpusConfig {
  std::string source;  // the config file
  std::string config_sha256;
  std::string name;
  std::vector<std::string> inputs;  // files or directories (their files with `extension`), resolved
  std::string extension = ".txt";
  double heldout_fraction = 0.1;
  std::string split_salt = "omn-audit";
  std::int64_t vocab_size = 4096;
  std::string model_type = "bpe";  // bpe | unigram
  double character_coverage = 1.0;
  std::int64_t max_sentence_bytes = 65536;  // longer lines are cut for the tokenizer trainer only
  // documents are read and tokenized in pieces of at most this many bytes, cut after a line break
  // (else after a space): memory per document is bounded, and the tokens are those of the whole
  // document, since SentencePiece pieces never span whitespace
  std::int64_t encode_chunk_bytes = 1 << 20;
};

// Strict: an unknown key, a wrong type or an impossible value is a UsageError naming the file and
// the JSON pointer. Relative input paths are resolved against the config file's directory.
CorpusConfig loadCorpusConfig(const std::string& path);

// True when the document named `name` (a file's base name) is held out: the first 8 bytes of
// SHA-256(salt + "\n" + name), as a fraction of 2^64, below `fraction`.
bool heldOut(const std::string& name, const std::string& salt, double fraction);

// A regular file's bytes; UsageError naming `what` and the path otherwise.
using io::readTextFile;  // io/json_document.h

// Builds the corpus in `out_dir` (created; must not hold a corpus unless `force`): tokenizer.model,
// train.bin, heldout.bin (uint16 little-endian, or uint32 for vocabularies past 65,536; each
// document followed by the EOS id) and corpus.json (omn-audit/corpus@1). Returns corpus.json.
// (src/data/corpus_build.cpp: in omn-audit-text.so only, see there.)
nlohmann::json buildCorpus(const CorpusConfig& config, const std::string& out_dir, bool force, int threads);

// The paths and digests a corpus.json states, checked against the files (IntegrityError on a
// mismatch, FormatError for a malformed document). Paths come back resolved against its directory.
struct CorpusFiles {
  std::string dir, json_path, json_sha256;
  std::string train_path, train_sha256, heldout_path, heldout_sha256, tokenizer_path, tokenizer_sha256;
  std::string token_format;  // "u16" | "u32"
  std::int64_t vocab_size = 0, eos_id = 0;
  double heldout_unigram_cross_entropy = 0;
};
CorpusFiles openCorpus(const std::string& dir_or_json);
// The files a run reads from the corpus: corpus.json, the tokenizer, the two token streams.
std::vector<std::string> inputFiles(const CorpusFiles& c);

}  // namespace omn::data
