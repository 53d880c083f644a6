// Everything an evaluation stands on, opened once: the verified checkpoint, the model built from
// its preset and shapes, the token set and the selected rows. eval and intervene share it.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "omn/documents/eval_document.h"
#include "omn/eval/bootstrap.h"
#include "omn/eval/session_spec.h"
#include "omn/eval/scores_record.h"
#include "omn/eval/token_set.h"
#include "omn/io/checkpoint.h"
#include "omn/io/model_folder.h"
#include "omn/model/preset.h"
#include "omn/model/transformer.h"

namespace omn::eval {

struct Session {
  SessionSpec spec;  // spec.checkpoint: the weights file (a model folder's, where one was given)
  io::ModelLocation location;  // what was given: a file, or a Hugging Face folder with its config.json
  std::shared_ptr<io::Checkpoint> ck;  // also held by the model's zero-copy weights (Weights::mapping)
  std::string checkpoint_sha256;
  std::vector<io::ShardDigest> shards;  // a sharded set's shards, each hashed (verified where pinned)
  model::Preset preset;
  model::ModelConfig config;
  std::unique_ptr<model::Transformer> model;
  TokenSet tokens;
  RowForm row_form = RowForm::Packed;
  std::size_t rows_available = 0;
  Selection selection;
  std::vector<Row> rows;  // the selected rows, in order
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
  model::AttentionPath path = model::AttentionPath::Masked;
  int threads = 1;
  // How long the rows may be: the training length a run omn-audit trained records in its checkpoint,
  // a model folder's max_position_embeddings (-1: not recorded), and where spec.seq_len came from.
  std::int64_t trained_seq_len = -1, max_positions = -1;
  std::string seq_len_source = "given";  // "given", "training length" (the checkpoint's), "model maximum", "default"
};

// What can be refused without reading a byte of the checkpoint: the options (a required digest or
// tokenizer revision, the device, dtype and attention) and the input files (the checkpoint, the
// tokens, the offsets: each must exist). UsageError naming the flag or the manifest's pointer.
// Called by openSession first, and by the commands before anything costly (the thread pool).
void checkSessionSpec(const SessionSpec& spec);

// Opens, hashes and verifies everything; loads the weights (call outside InferenceMode).
std::unique_ptr<Session> openSession(const SessionSpec& spec);

// Throws IntegrityError when the checkpoint is no longer the file the session opened: its identity
// (io::requireUnchanged, one fstat/stat per file) and, with `rehash`, its SHA-256 read again
// against the digest taken at the start (catches a rewrite that kept size and mtime). `when` says
// where the run noticed ("after condition c3").
void requireCheckpointUnchanged(const Session& s, const std::string& when, bool rehash);

// Whether every shard of a sharded set was pinned and verified (true for a single file).
bool allShardsVerified(const Session& s);
// The blocks eval and intervene results share (documents/eval_document.h): the checkpoint as read,
// the model as run, the token set and the rows selected, with every path as the session names it.
documents::EvalCheckpoint checkpointRecord(const Session& s);
// The working dtype as --dtype and /model/dtype spell it: bf16, fp16, fp32.
std::string dtypeName(at::ScalarType t);
documents::EvalModel modelRecord(const Session& s);
documents::TokensRecord tokensRecord(const Session& s);
documents::SelectionRecord selectionRecord(const Session& s);

}  // namespace omn::eval
