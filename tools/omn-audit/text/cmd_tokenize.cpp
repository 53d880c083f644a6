// omn-audit tokenize FILE... --tokenizer PATH -o OUT: text -> the token set eval and intervene read.
#include <chrono>
#include <iostream>

#include "../commands.h"
#include "../plugin_commands.h"
#include "omn/data/text_tokenizer.h"
#include "omn/data/token_set_writer.h"
#include "omn/data/unicode_text.h"
#include "omn/errors.h"
#include "omn/io/json_document.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"
#include "omn/output/provenance.h"
#include "omn/output/table.h"

namespace omn::cli {

namespace {

struct TokenizeArgs {
  std::vector<std::string> files;
  std::string tokenizer, out, bos_token, eos_token;
  bool add_bos = false, add_eos = false, force = false;
};

// The id --add-bos/--add-eos adds: the token named, else the tokenizer's own; UsageError if neither.
std::optional<std::uint32_t> specialId(const data::TextTokenizer& tok, bool add, const std::string& named, const char* role) {
  if (!add && named.empty()) return std::nullopt;
  if (!named.empty()) {
    const auto id = tok.idOf(named);
    if (!id) throw UsageError(std::string("--") + role + "-token " + named + ": not a token of this tokenizer");
    return id;
  }
  const auto id = tok.declared(role);
  if (!id)
    throw UsageError(std::string("--add-") + role + ": the tokenizer names no " + role + " token (tokenizer_config.json's " + role +
                     "_token, its post-processor, or the SentencePiece model's " + role + "_id); name it with --" + role + "-token TOKEN");
  return id;
}

std::unique_ptr<data::TextTokenizer> openChecked(const data::TokenizerLocation& where) {
  try {
    return data::openTokenizer(where);
  } catch (const nlohmann::json::exception& e) {  // a value of the wrong type that no check named
    throw FormatError("tokenizer " + where.path + ": " + e.what());
  }
}

struct Tokenized {
  std::vector<std::uint32_t> ids;
  data::TokenSetRecord record;
  std::uint64_t bytes = 0;
};

// Each file one document: read, checked as UTF-8, encoded, framed by BOS/EOS when asked.
Tokenized tokenizeFiles(const std::vector<std::string>& files, data::TextTokenizer& tok, std::optional<std::uint32_t> bos,
                        std::optional<std::uint32_t> eos, output::ProvenanceInfo& prov) {
  Tokenized t;
  for (const std::string& f : files) {
    const std::string text = io::readTextFile(f, "document");
    if (const std::size_t bad = data::invalidUtf8At(text); bad != std::string::npos)
      throw FormatError("document " + f + ": byte " + std::to_string(bad) + " is not UTF-8 (tokenize reads UTF-8 text)");
    data::TokenizedDocument d{f, io::sha256Bytes(text.data(), text.size()), text.size(), 0, t.ids.size()};
    if (bos) t.ids.push_back(*bos);
    tok.encode(text, t.ids);
    if (eos) t.ids.push_back(*eos);
    d.tokens = t.ids.size() - d.start;
    t.bytes += d.bytes;
    t.record.documents.push_back(d);
    prov.inputs.push_back({"document", f, d.sha256, false});
  }
  if (t.ids.empty()) throw UsageError("the documents hold no tokens: an empty token set is not written");
  return t;
}

void printSummary(const Tokenized& t, const nlohmann::json& doc, const data::TokenSetPaths& paths, double load_s, double enc_s) {
  output::Table table({"documents", "bytes", "tokens", "tokens/s", "tokenizer sha256 (the tokenization revision)"});
  table.add({std::to_string(t.record.documents.size()), std::to_string(t.bytes), std::to_string(t.ids.size()),
             std::to_string(static_cast<long long>(static_cast<double>(t.ids.size()) / std::max(enc_s, 1e-9))),
             doc["tokenizer_revision"].get<std::string>()});
  table.print(std::cout);
  const nlohmann::json& post = doc["tokenizer"]["post_processor"];
  const auto none = nlohmann::json::array();
  if (!post["type"].is_null() && (post["would_add_before"] != none || post["would_add_after"] != none))
    std::cout << "note       the tokenizer's post-processor (" << post["type"].get<std::string>() << ") would add "
              << post["would_add_before"].dump() << " before and " << post["would_add_after"].dump()
              << " after each text; not added (--add-bos/--add-eos add the tokenizer's BOS/EOS)\n";
  std::cout << "timing     tokenizer loaded in " << output::fixed(load_s, 2) << " s, text tokenized in " << output::fixed(enc_s, 2) << " s\n";
  std::cout << "wrote      " << paths.tokens << ", " << paths.offsets << ", " << paths.record << "\n";
  std::cout << "evaluate   omn-audit eval CHECKPOINT";
  for (const auto& w : doc["eval_arguments"]) std::cout << " " << w.get<std::string>();
  std::cout << "\n";
}

int runTokenize(const TokenizeArgs& a) {
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  const data::TokenizerLocation where = data::locateTokenizer(a.tokenizer);
  const data::TokenSetPaths paths = data::tokenSetPaths(a.out);
  std::vector<std::string> inputs = a.files;
  inputs.push_back(where.path);
  for (const auto& p : {paths.tokens, paths.offsets, paths.record}) output::checkOutputPath(p, a.force, inputs);
  output::checkDistinctOutputs({{"-o", paths.tokens}, {"offsets", paths.offsets}, {"record", paths.record}});

  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<data::TextTokenizer> tok = openChecked(where);
  const auto bos = specialId(*tok, a.add_bos, a.bos_token, "bos");
  const auto eos = specialId(*tok, a.add_eos, a.eos_token, "eos");
  const auto t1 = std::chrono::steady_clock::now();
  Tokenized t = tokenizeFiles(a.files, *tok, bos, eos, prov);
  const auto t2 = std::chrono::steady_clock::now();
  for (std::uint32_t id : t.ids)
    if (id >= tok->vocabularySize()) throw FormatError("tokenizer " + where.path + ": it gave id " + std::to_string(id) + " past its vocabulary");

  prov.inputs.push_back({"tokenizer", where.path, where.sha256, false});
  t.record.tokenizer = tok->describe();
  t.record.tokenizer["path"] = where.path;
  t.record.tokenizer["sha256"] = where.sha256;
  if (!where.config_path.empty() && (bos || eos))
    t.record.tokenizer["config"] = {{"path", where.config_path}, {"sha256", where.config_sha256}};
  auto ids = [](std::optional<std::uint32_t> id) { return id ? nlohmann::json::array({*id}) : nlohmann::json::array(); };
  t.record.special_tokens = {{"added_before_each_document", ids(bos)}, {"added_after_each_document", ids(eos)},
                             {"added_tokens_in_text", "matched as their tokens, before normalization (transformers.js's default)"}};
  t.record.vocab_size = tok->vocabularySize();
  prov.finished_utc = output::utcNow();
  t.record.provenance = output::provenance(prov);
  const nlohmann::json doc = data::writeTokenSet(paths, t.ids, t.record);
  printSummary(t, doc, paths, std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count());
  return 0;
}

}  // namespace

Command addTokenizeCommand(CLI::App& root) {
  auto* app = root.add_subcommand("tokenize", pluginCommandHelp("tokenize"));
  app->footer("Examples:\n"
              "  omn-audit tokenize heldout/*.txt --tokenizer my-model/ -o heldout.npy\n"
              "  omn-audit tokenize speech.txt --tokenizer tokenizer.model -o speech.npy --add-eos\n"
              "  omn-audit tokenize a.txt b.txt --tokenizer tokenizer.json -o ab.bin --add-bos --force");
  auto a = std::make_shared<TokenizeArgs>();
  app->add_option("files", a->files, "text files (UTF-8), each one document")->required()->check(CLI::ExistingFile);
  app->add_option("--tokenizer", a->tokenizer,
                  "a tokenizer.json (BPE: byte-level or with byte fallback), a SentencePiece .model, or a Hugging Face model folder "
                  "holding one; its SHA-256 is recorded as the tokenization revision")
      ->required();
  app->add_option("--out,-o,--output", a->out,
                  "the token file: OUT.npy (uint16/uint32 ids), or raw u16/u32 under another name; beside it STEM.offsets.npy "
                  "(document starts) and STEM.tokens.json (the record)")
      ->required();
  app->add_flag("--add-bos", a->add_bos, "put the tokenizer's BOS token before each document (none is added otherwise)");
  app->add_flag("--add-eos", a->add_eos, "put the tokenizer's EOS token after each document (then eval --eos ID works too)");
  app->add_option("--bos-token", a->bos_token, "the BOS token to add, by its text (implies --add-bos)");
  app->add_option("--eos-token", a->eos_token, "the EOS token to add, by its text (implies --add-eos)");
  app->add_flag("--force", a->force, "overwrite existing outputs");
  return {app, [a] { return runTokenize(*a); }};
}

}  // namespace omn::cli
