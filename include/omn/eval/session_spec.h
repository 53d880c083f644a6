// What an evaluation is asked to open: the checkpoint, the tokens, the rows and the model's
// options, as the CLI or a manifest gave them. No libtorch: the manifest types and the torch-free
// core include this, never eval/session.h (docs/ARCHITECTURE.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "omn/eval/token_set.h"

namespace omn::eval {

struct SessionSpec {
  std::string checkpoint, sha256, preset, state_key;
  bool allow_unverified = true;  // false: a missing sha256 is a UsageError
  TokenSetSpec tokens;
  std::string tokens_sha256;  // expected digest of the token file (empty: not checked)
  std::string tokenizer_revision;
  std::int64_t seq_len = 2048;
  std::size_t num_seqs = 50;
  std::string selection = "first";
  std::uint64_t selection_seed = 0;
  std::string row_form = "packed";
  std::string attention = "auto", dtype = "auto", device = "cpu";
  int batch = 1, threads = 0;
};

}  // namespace omn::eval
