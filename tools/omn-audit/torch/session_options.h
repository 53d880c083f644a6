// The options eval and intervene share (checkpoint, token set, rows, model), on a CLI11 app.
#pragma once
#include <CLI/CLI.hpp>

#include "omn/eval/bootstrap.h"
#include "omn/eval/session.h"

namespace omn::cli {

struct EvalOptions {
  eval::SessionSpec session;
  eval::BootstrapSpec bootstrap;
  std::int64_t eos = -1;
  int groups = 5;
};

inline void addSessionOptions(CLI::App* app, EvalOptions& o) {
  auto& s = o.session;
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a later flag wins
  app->add_option("--checkpoint", s.checkpoint, "torch.save file, .safetensors or *.safetensors.index.json")->required();
  app->add_option("--sha256", s.sha256, "expected SHA-256 of the checkpoint: a mismatch is exit 4");
  app->add_option("--preset", s.preset, "built-in preset or preset JSON file; default: detect");
  app->add_option("--state-key", s.state_key, "where the state dict sits in the envelope");
  app->add_option("--tokens", s.tokens.path, "pre-tokenized held-out set: .bin (uint16/uint32) or .npy")->required();
  app->add_option("--token-format", s.tokens.format, "auto | u16 | u32 | npy")->default_val("auto");
  app->add_option("--eos", o.eos, "document boundary: each document ends with this token");
  app->add_option("--offsets", s.tokens.offsets, "document boundary: sidecar of document start offsets (.npy or text)");
  app->add_option("--tokenizer-revision", s.tokenizer_revision, "the tokenizer revision that made the set (recorded)")
      ->required();
  app->add_option("--seq-len", s.seq_len, "tokens per row")->default_val(2048);
  app->add_option("--num-seqs", s.num_seqs, "rows to score")->default_val(50);
  app->add_option("--selection", s.selection, "first | seeded")->default_val("first");
  app->add_option("--selection-seed", s.selection_seed, "seed of the seeded selection")->default_val(0);
  app->add_option("--row-form", s.row_form, "packed | per-document | historical (EOS stripped, no packing metadata)")
      ->default_val("packed");
  app->add_option("--attention", s.attention, "auto | flash | per-document | masked")->default_val("auto");
  app->add_option("--dtype", s.dtype, "auto (the checkpoint's) | bf16 | fp16 | fp32")->default_val("auto");
  app->add_option("--device", s.device, "cpu | cuda | cuda:N")->default_val("cpu");
  app->add_option("--batch", s.batch, "rows per forward pass")->default_val(1);
  app->add_option("--threads", s.threads, "CPU threads (0: OMP_NUM_THREADS when set, else every online CPU)")->default_val(0);
  app->add_option("--groups", o.groups, "contiguous sequence groups, each with its perplexity")->default_val(5);
  app->add_option("--bootstrap-resamples", o.bootstrap.resamples, "bootstrap resamples")->default_val(10000);
  app->add_option("--confidence", o.bootstrap.confidence, "confidence of the bootstrap interval")->default_val(0.95);
  app->add_option("--bootstrap-seed", o.bootstrap.seed, "bootstrap seed")->default_val(0);
}

inline void finishSessionOptions(EvalOptions& o) {
  if (o.eos >= 0) o.session.tokens.eos = o.eos;
}

}  // namespace omn::cli
