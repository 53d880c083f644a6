// The corpus builder: SentencePiece training and tokenization. Built into omn-audit-text.so only:
// Debian's libsentencepiece carries its own protobuf-lite symbols, which clash with libtorch's
// protobuf in one process (a crash at load time), so the two never share a process.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "omn/data/corpus.h"
#include "omn/data/tokenizer_model.h"
#include "omn/errors.h"
#include "omn/io/sha256.h"
#include "omn/output/json_file.h"
#include "omn/output/provenance.h"

namespace omn::data {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Document {
  std::string name, path, sha256;
  std::uint64_t bytes = 0;
  bool heldout = false;
  std::size_t tokens = 0;
};

// A document read in pieces of about `chunk` bytes, each cut just after its last line break (else its
// last space or tab): SentencePiece pieces never span whitespace, so the pieces' tokens are the whole
// document's. A stretch with no whitespace is never cut: the piece grows until one comes (or the
// document ends), up to kMaxStretch bytes, past which the document is refused (no text has such a
// word; cutting it would change its tokens, or split a UTF-8 sequence). One piece is in memory.
class ChunkReader {
 public:
  static constexpr std::size_t kMaxStretch = std::size_t{64} << 20;
  ChunkReader(const std::string& path, std::size_t chunk) : path_(path), in_(path, std::ios::binary), chunk_(chunk) {
    if (!in_) throw IoError("document " + path + ": cannot open it");
  }
  // false at the end of the document
  bool next(std::string& piece) {
    std::size_t want = chunk_, cut = std::string::npos;
    for (;;) {
      while (buf_.size() < want && in_) {
        const std::size_t had = buf_.size();
        buf_.resize(want);
        in_.read(&buf_[had], static_cast<std::streamsize>(want - had));
        buf_.resize(had + static_cast<std::size_t>(in_.gcount()));
      }
      if (in_.bad()) throw IoError("document " + path_ + ": read failed at byte " + std::to_string(offset_ + buf_.size()));
      if (!in_) break;  // the document's end is in the buffer: the rest is the last piece
      std::size_t at = buf_.rfind('\n');
      if (at == std::string::npos) at = buf_.find_last_of(" \t");
      if (at != std::string::npos) {
        cut = at + 1;
        break;
      }
      if (buf_.size() >= kMaxStretch)
        throw FormatError("document " + path_ + ": " + std::to_string(buf_.size()) + " bytes from byte " + std::to_string(offset_) +
                          " without a line break, space or tab: not text the tokenizer can take in pieces");
      want = 2 * buf_.size();
    }
    if (buf_.empty()) return false;
    if (cut == std::string::npos) cut = buf_.size();
    piece.assign(buf_, 0, cut);
    buf_.erase(0, cut);
    offset_ += cut;
    return true;
  }

 private:
  std::string path_;
  std::ifstream in_;
  std::size_t chunk_, offset_ = 0;
  std::string buf_;
};

// Every input file: the files named, and the files with the extension in each directory named,
// sorted by base name; two documents with one base name are refused (the split keys on it).
std::vector<Document> collect(const CorpusConfig& c) {
  std::vector<Document> docs;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const std::string& in = c.inputs[i];
    std::error_code ec;
    const std::string where = "corpus config " + c.source + ": /inputs/" + std::to_string(i) + ": ";
    if (fs::is_directory(in, ec)) {
      fs::directory_iterator it(in, ec), end;
      if (ec) throw UsageError(where + in + ": cannot list it: " + ec.message());
      for (; it != end; it.increment(ec)) {
        if (ec) throw UsageError(where + in + ": cannot list it: " + ec.message());
        const fs::path& f = it->path();
        if (f.extension() != c.extension) continue;
        // an entry that cannot be followed (a symbolic-link loop, a dangling link) is named, not skipped
        const fs::file_status st = fs::status(f, ec);
        if (ec && ec != std::errc::no_such_file_or_directory) throw UsageError(where + f.string() + ": " + ec.message());
        if (ec) throw UsageError(where + f.string() + ": a symbolic link to nothing");
        if (fs::is_regular_file(st)) docs.push_back({f.filename(), f, "", 0, false, 0});
      }
    } else if (fs::is_regular_file(in, ec)) {
      docs.push_back({fs::path(in).filename(), in, "", 0, false, 0});
    } else {
      if (ec && ec != std::errc::no_such_file_or_directory) throw UsageError(where + in + ": " + ec.message());
      throw UsageError(where + in + " is neither a file nor a directory (the default corpus is installed by tools/deps.sh: "
                       "bash tools/fetch-corpus.sh)");
    }
  }
  std::sort(docs.begin(), docs.end(), [](const Document& a, const Document& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < docs.size(); ++i)
    if (docs[i].name == docs[i - 1].name)
      throw UsageError("corpus config " + c.source + ": two documents named " + docs[i].name + " (" + docs[i - 1].path +
                       ", " + docs[i].path + "): the held-out split keys on the name");
  if (docs.empty()) throw UsageError("corpus config " + c.source + ": /inputs: no documents (files ending in " + c.extension + ")");
  for (auto& d : docs) {  // hashed as a stream: no document is held in memory whole
    d.sha256 = io::sha256File(d.path);
    d.bytes = fs::file_size(d.path);
    d.heldout = heldOut(d.name, c.split_salt, c.heldout_fraction);
  }
  return docs;
}

// The training documents, one line (paragraph) at a time, for the SentencePiece trainer; read from
// the files a line at a time (a line longer than max_bytes is cut there, its rest skipped).
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  LineIterator(const std::vector<Document>& docs, std::size_t max_bytes) : docs_(docs), max_(max_bytes) { advance(); }
  bool done() const override { return d_ >= docs_.size(); }
  void Next() override { advance(); }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  void advance() {
    while (d_ < docs_.size()) {
      if (docs_[d_].heldout) {
        ++d_;
        continue;
      }
      if (!in_.is_open()) {
        in_.open(docs_[d_].path, std::ios::binary);
        if (!in_) throw IoError("document " + docs_[d_].path + ": cannot open it");
      }
      if (readLine()) {
        if (!line_.empty()) return;
        continue;
      }
      in_.close();
      in_.clear();
      ++d_;
    }
  }
  // the next line, at most max_ bytes of it; false at the end of the file
  bool readLine() {
    line_.clear();
    char ch;
    bool any = false;
    while (in_.get(ch)) {
      any = true;
      if (ch == '\n') return true;
      if (line_.size() < max_) line_ += ch;
    }
    return any;
  }
  const std::vector<Document>& docs_;
  std::size_t max_, d_ = 0;
  std::ifstream in_;
  std::string line_;
};

void writeTokens(const std::string& path, const std::vector<std::uint32_t>& ids, bool u16) {
  std::string bytes;
  bytes.reserve(ids.size() * (u16 ? 2 : 4));
  for (std::uint32_t v : ids)
    for (int i = 0; i < (u16 ? 2 : 4); ++i) bytes.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  output::writeFileAtomic(path, bytes);
}

// The four files a corpus is, under --out.
struct CorpusOutputs {
  std::string json, model, train, heldout;
};

// The output directory made, and each of the corpus's files checked against --force and the config.
CorpusOutputs prepareCorpusOutputs(const CorpusConfig& c, const std::string& out_dir, bool force) {
  CorpusOutputs files;
  files.json = (fs::path(out_dir) / "corpus.json").string();
  files.model = (fs::path(out_dir) / "tokenizer.model").string();
  files.train = (fs::path(out_dir) / "train.bin").string();
  files.heldout = (fs::path(out_dir) / "heldout.bin").string();
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) throw UsageError("--out " + out_dir + ": exists and is not a directory");
  fs::create_directories(out_dir, ec);
  if (ec) throw UsageError("--out " + out_dir + ": cannot create the directory: " + ec.message());
  for (const auto& p : {files.json, files.model, files.train, files.heldout}) output::checkOutputPath(p, force, {c.source});
  return files;
}

struct SplitSizes {
  std::size_t train = 0, heldout = 0;
};

// How many documents each side of the split has; both must have some.
SplitSizes requireBothSplits(const CorpusConfig& c, const std::vector<Document>& docs) {
  SplitSizes n;
  for (const auto& d : docs) (d.heldout ? n.heldout : n.train)++;
  if (n.train == 0 || n.heldout == 0)
    throw UsageError("corpus config " + c.source + ": /heldout_fraction " + json(c.heldout_fraction).dump() + " leaves " +
                     std::to_string(n.train) + " training and " + std::to_string(n.heldout) +
                     " held-out documents of " + std::to_string(docs.size()) + ": both must be non-empty");
  return n;
}

// The SentencePiece model trained on the training documents only, as the bytes tokenizer.model holds.
std::string trainCorpusTokenizer(const CorpusConfig& c, const std::vector<Document>& docs, int threads) {
  LineIterator lines(docs, static_cast<std::size_t>(c.max_sentence_bytes));
  std::unordered_map<std::string, std::string> args = {
      {"model_type", c.model_type},
      {"vocab_size", std::to_string(c.vocab_size)},
      {"character_coverage", json(c.character_coverage).dump()},
      {"unk_id", "0"}, {"eos_id", "1"}, {"bos_id", "-1"}, {"pad_id", "-1"},
      {"byte_fallback", "true"},
      {"max_sentence_length", std::to_string(c.max_sentence_bytes)},
      {"shuffle_input_sentence", "false"},
      // unigram's EM sums expected counts per thread and merges them: its scores (and so which pieces
      // survive pruning) depend on the thread count, so it trains on one; BPE's merges do not
      {"num_threads", std::to_string(c.model_type == "unigram" ? 1 : std::max(1, threads))},
      {"minloglevel", "2"}};
  std::string model_proto;
  if (const auto st = sentencepiece::SentencePieceTrainer::Train(args, &lines, &model_proto); !st.ok())
    throw UsageError("corpus config " + c.source + ": the SentencePiece trainer refused: " + st.ToString());
  return withoutThreadCount(model_proto);  // the same bytes whatever --threads was
}

// The two token streams, each document followed by EOS, and how often each piece occurs in training.
struct TokenStreams {
  std::vector<std::uint32_t> train, heldout;
  std::vector<double> train_counts;
};

// Every document encoded in pieces (ChunkReader); each document's token count is set on the way.
TokenStreams encodeCorpusDocuments(std::vector<Document>& docs, const sentencepiece::SentencePieceProcessor& sp,
                                   const CorpusConfig& c) {
  TokenStreams t;
  t.train_counts.assign(static_cast<std::size_t>(sp.GetPieceSize()), 0.0);
  const int eos = sp.eos_id();
  std::string piece;
  std::vector<int> ids;
  for (auto& d : docs) {
    auto& dst = d.heldout ? t.heldout : t.train;
    auto add = [&](int id) {
      dst.push_back(static_cast<std::uint32_t>(id));
      if (!d.heldout) t.train_counts[static_cast<std::size_t>(id)] += 1;
      ++d.tokens;
    };
    ChunkReader reader(d.path, static_cast<std::size_t>(c.encode_chunk_bytes));
    while (reader.next(piece)) {
      if (const auto st = sp.Encode(piece, &ids); !st.ok()) throw FormatError("document " + d.path + ": " + st.ToString());
      for (int id : ids) add(id);
    }
    add(eos);
  }
  return t;
}

// The unigram model of the training tokens (add-one smoothed): its entropy, and its cross-entropy on
// the held-out tokens -- the loss a model that ignores context achieves. Nats per token.
struct UnigramBaseline {
  double train_entropy = 0, heldout_cross_entropy = 0;
};

UnigramBaseline unigramBaseline(const TokenStreams& t) {
  const double total = static_cast<double>(t.train.size()) + static_cast<double>(t.train_counts.size());
  double h_train = 0, ce_heldout = 0;
  for (double n : t.train_counts) {
    const double p = (n + 1) / total;
    h_train -= (n / static_cast<double>(t.train.size())) * std::log(p);
  }
  for (std::uint32_t id : t.heldout) ce_heldout -= std::log((t.train_counts[id] + 1) / total);
  ce_heldout /= static_cast<double>(t.heldout.size());
  return {h_train, ce_heldout};
}

json corpusDocumentsJson(const std::vector<Document>& docs) {
  json documents = json::array();
  for (const auto& d : docs)
    documents.push_back({{"name", d.name}, {"split", d.heldout ? "heldout" : "train"}, {"sha256", d.sha256},
                         {"bytes", d.bytes}, {"tokens", d.tokens}});
  return documents;
}

json tokenStreamJson(const std::string& path, const std::vector<std::uint32_t>& ids, std::size_t n_docs) {
  return json{{"path", fs::path(path).filename().string()}, {"sha256", io::sha256File(path)}, {"n_tokens", ids.size()},
              {"n_documents", n_docs}};
}

json corpusTokenizerJson(const CorpusConfig& c, const std::string& model_proto, const sentencepiece::SentencePieceProcessor& sp) {
  return {{"path", "tokenizer.model"}, {"sha256", io::sha256Bytes(model_proto.data(), model_proto.size())},
          {"library", "sentencepiece"}, {"model_type", c.model_type}, {"vocab_size", sp.GetPieceSize()},
          {"character_coverage", c.character_coverage}, {"byte_fallback", true},
          {"eos_id", sp.eos_id()}, {"unk_id", sp.unk_id()}, {"trained_on", "train"}};
}

}  // namespace

json buildCorpus(const CorpusConfig& c, const std::string& out_dir, bool force, int threads) {
  const CorpusOutputs files = prepareCorpusOutputs(c, out_dir, force);
  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  std::vector<Document> docs = collect(c);
  const SplitSizes split = requireBothSplits(c, docs);
  spdlog::info("corpus {}: {} documents, {} for training, {} held out; training the {} tokenizer (vocabulary {})", c.name,
               docs.size(), split.train, split.heldout, c.model_type, c.vocab_size);

  const std::string model_proto = trainCorpusTokenizer(c, docs, threads);
  sentencepiece::SentencePieceProcessor sp;
  if (const auto st = sp.LoadFromSerializedProto(model_proto); !st.ok())
    throw FormatError("the trained tokenizer does not load: " + st.ToString());
  const TokenStreams tokens = encodeCorpusDocuments(docs, sp, c);
  const UnigramBaseline unigram = unigramBaseline(tokens);

  const bool u16 = sp.GetPieceSize() <= 65536;
  output::writeFileAtomic(files.model, model_proto);
  writeTokens(files.train, tokens.train, u16);
  writeTokens(files.heldout, tokens.heldout, u16);

  const json documents = corpusDocumentsJson(docs);
  prov.inputs.push_back({"corpus-config", c.source, c.config_sha256, false});
  prov.finished_utc = output::utcNow();
  json doc = {{"schema", "omn-audit/corpus@1"},
              {"provenance", output::provenance(prov)},
              {"name", c.name},
              {"config", {{"path", c.source}, {"sha256", c.config_sha256}}},
              {"split", {{"method", "sha256(salt + \"\\n\" + document name) / 2^64 < heldout_fraction"},
                         {"salt", c.split_salt},
                         {"heldout_fraction", c.heldout_fraction}}},
              {"tokenizer", corpusTokenizerJson(c, model_proto, sp)},
              {"token_format", u16 ? "u16" : "u32"},
              {"train", tokenStreamJson(files.train, tokens.train, split.train)},
              {"heldout", tokenStreamJson(files.heldout, tokens.heldout, split.heldout)},
              {"unigram", {{"train_entropy", unigram.train_entropy}, {"heldout_cross_entropy", unigram.heldout_cross_entropy},
                           {"note", "add-one smoothed unigram model of the training tokens, nats per token"}}},
              {"documents", documents}};
  output::writeFileAtomic(files.json, output::dumpJson(doc));
  return doc;
}

}  // namespace omn::data
