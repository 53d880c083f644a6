// The options eval and intervene share (checkpoint, token set, rows, model), on a CLI11 app.
#pragma once
#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

#include "omn/errors.h"
#include "omn/eval/bootstrap.h"
#include "omn/eval/session.h"
#include "omn/eval/session_spec.h"
#include "omn/io/choice.h"
#include "omn/model/model_options.h"
#include "omn/model/products.h"
#include "omn/model/threads.h"
#include "../digest_option.h"
#include "../plugin_loader.h"
#include "machine_hints.h"
#include "omn/model/device_spec.h"
#include "omn/model/preset.h"

namespace omn::cli {

struct EvalOptions {
  eval::SessionSpec session;
  eval::BootstrapSpec bootstrap;
  std::int64_t eos = -1;
  int groups = eval::kDefaultGroups;
  bool groups_given = false;  // no --groups: the default, or every row where fewer are scored (eval::resolveGroups)
  bool seq_len_given = false;
};

// A number strictly between 0 and 1 (NaN refused: every comparison with it is false).
inline std::string openUnitInterval(const std::string& v) {
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size() && x > 0 && x < 1) return {};
  } catch (const std::exception&) {
  }
  return "expected a number in (0, 1), got \"" + v + "\"";
}

// A number in [0, 1e9] (NaN and inf refused).
inline std::string finiteNonNegative(const std::string& v) {
  try {
    std::size_t used = 0;
    const double x = std::stod(v, &used);
    if (used == v.size() && x >= 0 && x <= 1e9) return {};
  } catch (const std::exception&) {
  }
  return "expected a number in [0, 1e9], got \"" + v + "\"";
}

// "{auto,bf16,fp16,fp32}": the values in the help's type column, and what --describe-commands
// gives the shell completions (describe.h).
template <class E, std::size_t N>
std::string choiceTypeName(const std::array<io::Named<E>, N>& table) {
  std::string t = "{";
  for (const auto& c : table) t += std::string(t.size() > 1 ? "," : "") + c.name;
  return t + "}";
}

// An option whose value is one of a closed set (io/choice.h): checked by the set's own parser while
// the command line is parsed, stored as its value.
template <class E, std::size_t N>
CLI::Option* addChoice(CLI::App* app, const std::string& flag, E& var, const std::array<io::Named<E>, N>& table,
                       const std::string& help) {
  return app
      ->add_option_function<std::string>(flag, [&var, &table, flag](const std::string& v) { var = io::parseChoice(table, v, flag); },
                                         help + " (" + io::choiceList(table) + ")")
      ->check([&table](const std::string& v) {  // a validator returns its message; CLI11 adds the flag
        for (const auto& c : table)
          if (v == c.name) return std::string();
        return "expected " + io::choiceList(table) + ", got \"" + v + "\"";
      })
      ->type_name(choiceTypeName(table))
      ->default_str(io::choiceName(table, var));
}

inline void addSessionOptions(CLI::App* app, EvalOptions& o) {
  auto& s = o.session;
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a later flag wins
  // the checkpoint as profile takes it (first positional), or named
  // one checkpoint: "eval a.pt --checkpoint b.pt" is an error, not a silent choice of b.pt
  app->add_option("checkpoint,--checkpoint", s.checkpoint, "torch.save file, .safetensors, *.safetensors.index.json, or a Hugging Face model folder (config.json beside the weights: config.json gives the architecture)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  app->add_option("--sha256", s.sha256, "expected SHA-256 of the checkpoint (a model folder: of its weights file): a mismatch is exit 4")
      ->check(givenDigest);
  app->add_option("--digests", s.digests_path,
                  "sha256sum-style list (\"<hex>  <path>\", as profile --digests): pins the weights, a model folder's config.json, "
                  "for a sharded index each shard, and the run's tokens, offsets, token record and preset file where it names them "
                  "(a mismatch is exit 4 naming the file; a line naming a file outside the model and the run is exit 2)")
      ->check(givenDigestList)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);  // two lists: neither silently wins
  app->add_option("--config-sha256", s.config_sha256,
                  "expected SHA-256 of a model folder's config.json, which gives the architecture: checked first, a mismatch is exit 4")
      ->check(givenDigest);
  app->add_option("--preset", s.preset, "built-in preset (" + model::builtinPresetList() + ") or a preset JSON file; default: detect");
  app->add_option("--state-key", s.state_key, "where the state dict sits in the envelope");
  app->add_option("--tokens", s.tokens.path, "pre-tokenized held-out set: .bin (uint16/uint32) or .npy")->required();
  addChoice(app, "--token-format", s.tokens.format, eval::kTokenFormats, "token file format (auto: .npy by its magic; a raw file by the record tokenize wrote beside it, else u16 with a warning)");
  addChoice(app, "--out-of-vocabulary", s.out_of_vocab, eval::kOutOfVocabulary,
            "ids >= the model's vocabulary: refuse the set, or drop them from the stream as the historical script did (counted)");
  app->add_option("--eos", o.eos, "document boundary: each document ends with this token")->check([](const std::string& v) {
    return v.empty() || v[0] == '-' ? "expected a token id >= 0, got " + v : std::string();  // -1 is not "no --eos"
  });
  app->add_option("--offsets", s.tokens.offsets, "document boundary: sidecar of document start offsets (.npy or text)");
  app->add_option("--tokens-sha256", s.tokens_sha256, "expected SHA-256 of the token file: a mismatch is exit 4 (without it or a --digests line: recorded, not verified)")
      ->check(givenDigest);
  app->add_option("--offsets-sha256", s.offsets_sha256, "expected SHA-256 of the --offsets file: a mismatch is exit 4 (without it or a --digests line: recorded, not verified)")
      ->check(givenDigest);
  app->add_option("--tokenizer-revision", s.tokenizer_revision,
                  "the tokenizer revision that made the set (recorded; without it: recorded as unknown, with a warning)");
  s.tokenizer_revision_required = false;
  app->add_option("--seq-len", s.seq_len, "tokens per row (default: the training length a checkpoint omn-audit trained records, else 2048, or a model folder's max_position_embeddings where smaller)")
      ->default_val(2048)
      ->check(CLI::Range(std::int64_t{2}, std::int64_t{1} << 20))
      ->each([&o](const std::string&) { o.seq_len_given = true; });
  app->add_option("--num-seqs", s.num_seqs, "rows to score")->default_val(50)->check(CLI::Range(std::int64_t{1}, eval::kMaxNumSeqs));
  app->add_flag("--up-to", s.up_to, "--num-seqs is a maximum: score every row the set has when it has fewer (the historical panel's \"up to 50\")");
  addChoice(app, "--selection", s.selection, eval::kSelectionModes, "which rows: the first N or a seeded draw");
  app->add_option("--selection-seed", s.selection_seed, "seed of the seeded selection")->default_val(0)->check(CLI::NonNegativeNumber);
  addChoice(app, "--row-form", s.row_form, eval::kRowForms, "row form; historical: EOS stripped, no document metadata");
  addChoice(app, "--attention", s.attention, model::kAttentionRequests, "attention path");
  addChoice(app, "--dtype", s.dtype, model::kDtypeRequests, "working dtype (auto: the checkpoint's)");
  app->add_option("--device", s.device, "cpu | cuda | cuda:N")->default_val("cpu")->check([](const std::string& v) {
    try {
      model::checkDeviceSpec(v, "device");
      return std::string();
    } catch (const UsageError& e) {  // a validator returns its message (CLI11 adds the flag)
      return std::string(e.what());
    }
  });
  app->add_option("--batch", s.batch, "rows per forward pass (0: about 2,048 tokens a pass, at most 64 rows)")->default_val(0)
      ->check(CLI::Range(0, eval::kMaxBatch));
  app->add_option("--threads", s.threads, "CPU threads (0: OMP_NUM_THREADS when set, else every online CPU)")->default_val(0)
      ->check(CLI::Range(0, model::kMaxThreads));
  app->add_option("--groups", o.groups, "contiguous sequence groups, each with its perplexity (default 5, or every row where fewer are scored)")
      ->default_val(eval::kDefaultGroups)
      ->check(CLI::Range(1, 1000000))
      ->each([&o](const std::string&) { o.groups_given = true; });
  app->add_option("--bootstrap-resamples", o.bootstrap.resamples, "bootstrap resamples")->default_val(10000)->check(CLI::Range(1, 100000000));
  app->add_option("--confidence", o.bootstrap.confidence, "confidence of the bootstrap interval, in (0, 1)")->default_val(0.95)
      ->check(openUnitInterval);
  app->add_option("--bootstrap-seed", o.bootstrap.seed, "bootstrap seed")->default_val(0)->check(CLI::NonNegativeNumber);
}

// What every model command does at the edge before it opens a session: the options and input files
// checked (cheap: before the thread pool, which takes seconds at --threads 500), the process-wide
// thread count, and what the CLI told the plugin (the OpenBLAS kernels it chose) into the spec.
inline void prepareSession(eval::SessionSpec& spec, const PluginHost& host) {
  eval::checkSessionSpec(spec);
  warnAboutMachine(spec.threads, host);
  model::useThreads(spec.threads);
  model::bf16Products();  // OMN_BF16_PRODUCTS read and checked now, not after the run
  if (host.blas_coretype_chosen) spec.blas_coretype_chosen = host.blas_coretype_chosen;
}

inline void finishSessionOptions(EvalOptions& o) {
  o.session.shard_sha256_where = "--digests";  // who pins a sharded set's shards on the command line, for messages
  if (o.eos >= 0) o.session.tokens.eos = o.eos;
  o.session.seq_len_default = !o.seq_len_given;
}

}  // namespace omn::cli
