// Test helper (libtorch): a tiny OMN-style model written as a real checkpoint -- 2 layers, d 16, 2
// query heads of 8 (1 KV head), vocabulary 48, random weights (train::initModel, seeded) with
// hand-made Q/K gains -- and a token set of short documents, opened as eval and intervene open
// them (eval::openSession). Every file lives in the caller's TempDir.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/eval/session.h"
#include "omn/intervene/manifest.h"
#include "omn/io/sha256.h"
#include "omn/model/threads.h"
#include "omn/train/parameters.h"
#include "omn/train/run_files.h"
#include "omn/train/train_config.h"
#include "temp_file.h"

namespace omn::test {

inline constexpr std::int64_t kTinyVocab = 48;
inline constexpr std::int64_t kTinyHeadDim = 8;
inline constexpr int kTinyLayers = 2;

// The hand-made gains, per vector in the order layer 0 Q, layer 0 K, layer 1 Q, layer 1 K: every
// value a short binary fraction (exact in float32 and in every sum the tests form), negatives in
// some vectors, none in layer 0 K.
inline std::vector<std::vector<float>> tinyGains() {
  return {{1.5f, -0.5f, 2.0f, 0.25f, 3.0f, 1.0f, -1.25f, 0.75f},
          {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f},
          {2.0f, 0.5f, 1.0f, 4.0f, 0.25f, 1.75f, 3.0f, 1.5f},
          {-1.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f}};
}

inline train::TrainConfig tinyTrainConfig() {
  train::TrainConfig c;
  c.model.n_layers = kTinyLayers;
  c.model.d_model = 16;
  c.model.n_heads = 2;
  c.model.n_kv_heads = 1;
  c.model.head_dim = kTinyHeadDim;
  c.model.ffn_hidden = 32;
  return c;
}

// Writes the checkpoint (torch.save's zip, OMN's envelope with the architecture recorded); returns
// its SHA-256. The same seed gives the same weights; only the gains differ between two calls.
inline std::string writeTinyCheckpoint(const std::string& path, const std::vector<std::vector<float>>& gains, std::uint64_t seed = 5) {
  const train::TrainConfig c = tinyTrainConfig();
  train::TrainableModel m = train::initModel(c, kTinyVocab, seed, at::kCPU);
  {
    at::NoGradGuard no_grad;
    for (int l = 0; l < kTinyLayers; ++l)
      for (bool q : {true, false}) {
        const std::string name = m.config.name(q ? "q_norm" : "k_norm", l);
        for (train::Parameter& p : m.params)
          if (p.name == name) p.value.copy_(at::tensor(gains.at(static_cast<std::size_t>(2 * l + (q ? 0 : 1))), at::kFloat));
      }
  }
  const model::ModelConfig& a = m.config;
  const nlohmann::json arch = {{"n_layers", a.n_layers},     {"d_model", a.d_model},       {"n_heads", a.n_heads},
                               {"n_kv_heads", a.n_kv_heads}, {"head_dim", a.head_dim},     {"ffn_hidden", a.ffn_hidden},
                               {"vocab_size", a.vocab_size}, {"norm_eps", a.norm_eps},     {"qk_norm_eps", a.qk_norm_eps},
                               {"rope_theta", a.rope_theta}, {"rope_style", "rotate_half"}, {"qk_norm_cast", "multiply_then_cast"},
                               {"norm_cast", "multiply_then_cast"}, {"tied_output", false}};
  return train::writeWeights(path, m, {{"architecture", arch}, {"qk_norm", true}}, 0, 0, seed);
}

// `n` u16 tokens: documents "k, k+1, ..., EOS" (EOS 0, ids in [1, kTinyVocab)) of 3 to 9 tokens;
// returns the file's SHA-256.
inline std::string writeTinyTokens(const std::string& path, std::size_t n, unsigned seed = 1) {
  std::string out;
  unsigned state = seed;
  while (out.size() < 2 * n) {
    state = state * 1103515245u + 12345u;
    const unsigned start = 1 + (state >> 16) % 40, len = 2 + (state >> 8) % 7;
    for (unsigned i = 0; i <= len && out.size() < 2 * n; ++i) {
      const unsigned t = i == len ? 0 : 1 + (start + i - 1) % static_cast<unsigned>(kTinyVocab - 1);
      out.push_back(static_cast<char>(t & 0xff));
      out.push_back(static_cast<char>(t >> 8));
    }
  }
  std::ofstream(path, std::ios::binary) << out;
  return io::sha256Bytes(out.data(), out.size());
}

// The session eval opens: 8 packed rows of 16 tokens, fp32, 4 rows a pass, one thread.
inline eval::SessionSpec tinySessionSpec(const std::string& checkpoint, const std::string& tokens) {
  eval::SessionSpec s;
  s.checkpoint = checkpoint;
  s.allow_unverified = true;
  s.tokens.path = tokens;
  s.tokens.format = eval::TokenFormat::U16;
  s.tokens.eos = 0;
  s.tokenizer_revision = "synthetic";
  s.seq_len = 16;
  s.num_seqs = 8;
  s.dtype = model::DtypeRequest::FP32;
  s.batch = 4;
  s.threads = 1;
  return s;
}

// A TempDir holding the tiny checkpoint (tiny.pt, the hand-made gains) and tokens (tokens.u16).
struct TinyModelFiles {
  TempDir dir;
  std::string checkpoint = dir.path() + "/tiny.pt", tokens = dir.path() + "/tokens.u16";
  std::string checkpoint_sha256, tokens_sha256;
  TinyModelFiles() {
    model::useThreads(1);
    checkpoint_sha256 = writeTinyCheckpoint(checkpoint, tinyGains());
    tokens_sha256 = writeTinyTokens(tokens, 600);
  }
  std::unique_ptr<eval::Session> open() const { return eval::openSession(tinySessionSpec(checkpoint, tokens)); }

  // A manifest over these files (the same rows, dtype and batch as open()), written beside them as
  // `name` and read back as intervene reads it; `conditions` as a manifest's /conditions.
  intervene::Manifest manifest(const nlohmann::json& conditions, const std::string& name = "m.json",
                               const std::string& output = "sweep.json") const {
    const nlohmann::json m = {
        {"schema", "omn-audit/manifest@1"},
        {"description", "the tiny model of tests/support/tiny_model.h"},
        {"checkpoint", {{"path", "tiny.pt"}, {"sha256", checkpoint_sha256}}},
        {"tokens", {{"path", "tokens.u16"}, {"sha256", tokens_sha256}, {"format", "u16"}, {"eos", 0}, {"tokenizer_revision", "synthetic"}}},
        {"rows", {{"seq_len", 16}, {"num_seqs", 8}, {"selection", "first"}, {"form", "packed"}}},
        {"groups", 2},
        {"bootstrap", {{"resamples", 200}, {"seed", 1}, {"confidence", 0.95}}},
        {"model", {{"attention", "auto"}, {"dtype", "fp32"}, {"device", "cpu"}, {"batch", 4}, {"threads", 1}}},
        {"conditions", conditions},
        {"output", {{"json", output}}}};
    return intervene::loadManifest(dir.file(name, m.dump(1)), /*allow_unverified=*/false);
  }
};

}  // namespace omn::test
