// What an evaluation is asked to open: the checkpoint, the tokens, the rows and the model's
// options, as the CLI or a manifest gave them. No libtorch: the manifest types and the torch-free
// core include this, never eval/session.h (docs/ARCHITECTURE.md).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "omn/eval/token_set.h"
#include "omn/model/model_options.h"

namespace omn::eval {

// Where each option came from, for messages: the CLI flag by default; a manifest sets its label and
// JSON pointer ("manifest m.json: /model/dtype"), so an error names what the user wrote.
struct OptionNames {
  std::string sha256 = "--sha256", config_sha256 = "--config-sha256", tokenizer_revision = "--tokenizer-revision",
              attention = "--attention", dtype = "--dtype", device = "--device", batch = "--batch", seq_len = "--seq-len",
              checkpoint = "checkpoint", tokens = "--tokens", offsets = "--offsets", tokens_sha256 = "--tokens-sha256",
              offsets_sha256 = "--offsets-sha256", num_seqs = "--num-seqs";
};

struct SessionSpec {
  std::string checkpoint, sha256, preset, state_key;
  std::string config_sha256;  // a model folder's config.json, pinned (empty: recorded, not verified)
  // a sharded set's shards, pinned by file name (the digest above pins the index only); each shard
  // is hashed and recorded, and the checkpoint counts as verified only when every shard is pinned
  std::map<std::string, std::string> shard_sha256;
  std::string shard_sha256_where = "a manifest's /checkpoint/shards";  // who pins them, for messages
  // eval --digests LIST (audit::readDigestList, read at the edge): the weights, a folder's config.json
  // and a sharded index's shards pinned by one sha256sum-style list, as profile --digests pins them,
  // and the files of the run it names (sessionRunFiles)
  std::string digests_path;
  std::map<std::string, std::string> digests;
  bool allow_unverified = true;  // false: a missing sha256 is a UsageError
  TokenSetSpec tokens;
  std::string tokens_sha256;   // expected digest of the token file (empty: recorded, not verified)
  std::string offsets_sha256;  // expected digest of the offsets file (empty: recorded, not verified)
  std::string tokenizer_revision;
  // false (eval on the command line, a quick look): a missing revision is recorded as null and
  // warned about; true (a manifest, the reproduction standard): it is required
  bool tokenizer_revision_required = true;
  std::int64_t seq_len = 2048;
  // not given (eval without --seq-len): the training length the checkpoint records, where it records
  // one (a run omn-audit trained), else seq_len
  bool seq_len_default = false;
  std::size_t num_seqs = 50;
  bool up_to = false;  // num_seqs is a maximum: fewer rows are used when the set has fewer (recorded)
  OutOfVocabulary out_of_vocab = OutOfVocabulary::Refuse;
  SelectionMode selection = SelectionMode::First;
  std::uint64_t selection_seed = 0;
  RowForm row_form = RowForm::Packed;
  model::AttentionRequest attention = model::AttentionRequest::Auto;
  model::DtypeRequest dtype = model::DtypeRequest::Auto;
  std::string device = "cpu";  // checked by model::checkDeviceSpec where it was read
  int batch = 0;  // rows per forward pass; 0: autoBatch (resolved by openSession, recorded resolved)
  int threads = 0;
  // the OpenBLAS kernels omn-audit chose before libtorch was loaded ("": none chosen by omn-audit),
  // passed down explicitly from the CLI's plugin loader; recorded in the model block
  std::string blas_coretype_chosen;
  OptionNames names;
};

// The files of the run other than the model and the digest list, as given: the tokens and the record
// beside them, the offsets, a preset file (what a --digests line may pin beside the model).
std::vector<std::string> sessionRunFiles(const SessionSpec& spec);

// Every file an evaluation reads, as given: the checkpoint (a folder or an index: what it names is
// read through it, output::checkOutputPath), sessionRunFiles, the digest list and every file it
// names. No output may be one of them, with --force or without.
std::vector<std::string> sessionInputFiles(const SessionSpec& spec);

// The most rows a forward pass takes (--batch, a manifest's /model/batch) and the most rows a run
// scores (--num-seqs, /rows/num_seqs): beyond them an allocation fails before any check could.
inline constexpr int kMaxBatch = 1 << 16;
inline constexpr std::int64_t kMaxNumSeqs = 1000000000;

// The batch when none is given: rows per pass so that a pass holds about kAutoBatchTokens tokens
// (rows of 2,048 tokens or more: one row), at most kMaxAutoBatch and at most the rows there are.
// On the demo model (128-token rows) 16 rows a pass scored 1.5x the tokens per second of one
// (docs/eval.md); the sum over a row does not depend on the batch beyond rounding.
inline constexpr std::int64_t kAutoBatchTokens = 2048;
inline constexpr int kMaxAutoBatch = 64;
inline int autoBatch(std::int64_t seq_len, std::size_t rows) {
  const std::int64_t by_tokens = seq_len > 0 ? kAutoBatchTokens / seq_len : 1;
  const std::int64_t b = std::min<std::int64_t>({by_tokens, kMaxAutoBatch, static_cast<std::int64_t>(rows)});
  return static_cast<int>(std::max<std::int64_t>(1, b));
}

}  // namespace omn::eval
