// The token set `omn-audit tokenize` writes, in the forms `eval --tokens` and a manifest's /tokens
// read (eval/token_set.h): the ids (OUT.npy, uint16 or uint32; any other name: raw little-endian
// u16, or u32 past a 65,536-token vocabulary), the document start offsets beside them
// (STEM.offsets.npy, int64: each input file one document) and a record of how they were made
// (STEM.tokens.json, omn-audit/tokens@1: the tokenizer's SHA-256 as the tokenization revision,
// each document's digest and token count). No libtorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace omn::data {

struct TokenSetPaths {
  std::string tokens, offsets, record;
  bool npy = false;
};
// From OUT: OUT itself, and STEM.offsets.npy and STEM.tokens.json (STEM: OUT without its extension).
TokenSetPaths tokenSetPaths(const std::string& out);
// The record beside a token file (STEM.tokens.json): where tokenize writes it and eval's
// --token-format auto reads a raw file's width from.
std::string tokenRecordPath(const std::string& tokens);

struct TokenizedDocument {
  std::string path, sha256;
  std::uint64_t bytes = 0, tokens = 0, start = 0;  // start: its first token's index in the set
};

struct TokenSetRecord {
  std::vector<TokenizedDocument> documents;
  nlohmann::json tokenizer;        // {path, sha256, ...describe()}
  nlohmann::json special_tokens;   // {"added_before": [...], "added_after": [...], ...}
  nlohmann::json provenance;       // output::provenance(...)
  std::uint64_t vocab_size = 0;
};

// Writes the three files (atomically; checkOutputPath is the caller's) and returns the record.
// Documents without tokens have no offset entry (eval's offsets must increase).
nlohmann::json writeTokenSet(const TokenSetPaths& paths, const std::vector<std::uint32_t>& ids, const TokenSetRecord& record);

}  // namespace omn::data
