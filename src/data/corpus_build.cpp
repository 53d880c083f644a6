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

}  // namespace

json buildCorpus(const CorpusConfig& c, const std::string& out_dir, bool force, int threads) {
  const std::string json_path = (fs::path(out_dir) / "corpus.json").string();
  const std::string model_path = (fs::path(out_dir) / "tokenizer.model").string();
  const std::string train_path = (fs::path(out_dir) / "train.bin").string();
  const std::string heldout_path = (fs::path(out_dir) / "heldout.bin").string();
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec)) throw UsageError("--out " + out_dir + ": exists and is not a directory");
  fs::create_directories(out_dir, ec);
  if (ec) throw UsageError("--out " + out_dir + ": cannot create the directory: " + ec.message());
  for (const auto& p : {json_path, model_path, train_path, heldout_path}) output::checkOutputPath(p, force, {c.source});

  output::ProvenanceInfo prov;
  prov.started_utc = output::utcNow();
  std::vector<Document> docs = collect(c);
  std::size_t n_train = 0, n_heldout = 0;
  for (const auto& d : docs) (d.heldout ? n_heldout : n_train)++;
  if (n_train == 0 || n_heldout == 0)
    throw UsageError("corpus config " + c.source + ": /heldout_fraction " + json(c.heldout_fraction).dump() + " leaves " +
                     std::to_string(n_train) + " training and " + std::to_string(n_heldout) +
                     " held-out documents of " + std::to_string(docs.size()) + ": both must be non-empty");
  spdlog::info("corpus {}: {} documents, {} for training, {} held out; training the {} tokenizer (vocabulary {})", c.name,
               docs.size(), n_train, n_heldout, c.model_type, c.vocab_size);

  // The tokenizer sees the training documents only.
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
  model_proto = withoutThreadCount(model_proto);  // the same bytes whatever --threads was
  sentencepiece::SentencePieceProcessor sp;
  if (const auto st = sp.LoadFromSerializedProto(model_proto); !st.ok())
    throw FormatError("the trained tokenizer does not load: " + st.ToString());
  const int eos = sp.eos_id();

  // Token streams, each document followed by EOS, and the unigram baseline.
  std::vector<std::uint32_t> train, heldout;
  std::vector<double> counts(static_cast<std::size_t>(sp.GetPieceSize()), 0.0);
  std::string piece;
  std::vector<int> ids;
  for (auto& d : docs) {
    auto& dst = d.heldout ? heldout : train;
    auto add = [&](int id) {
      dst.push_back(static_cast<std::uint32_t>(id));
      if (!d.heldout) counts[static_cast<std::size_t>(id)] += 1;
      ++d.tokens;
    };
    ChunkReader reader(d.path, static_cast<std::size_t>(c.encode_chunk_bytes));
    while (reader.next(piece)) {
      if (const auto st = sp.Encode(piece, &ids); !st.ok()) throw FormatError("document " + d.path + ": " + st.ToString());
      for (int id : ids) add(id);
    }
    add(eos);
  }
  // Unigram model of the training tokens (add-one smoothed): its entropy, and its cross-entropy
  // on the held-out tokens -- the loss a model that ignores context achieves.
  const double total = static_cast<double>(train.size()) + static_cast<double>(counts.size());
  double h_train = 0, ce_heldout = 0;
  for (double n : counts) {
    const double p = (n + 1) / total;
    h_train -= (n / static_cast<double>(train.size())) * std::log(p);
  }
  for (std::uint32_t id : heldout) ce_heldout -= std::log((counts[id] + 1) / total);
  ce_heldout /= static_cast<double>(heldout.size());

  const bool u16 = sp.GetPieceSize() <= 65536;
  output::writeFileAtomic(model_path, model_proto);
  writeTokens(train_path, train, u16);
  writeTokens(heldout_path, heldout, u16);

  json documents = json::array();
  for (const auto& d : docs)
    documents.push_back({{"name", d.name}, {"split", d.heldout ? "heldout" : "train"}, {"sha256", d.sha256},
                         {"bytes", d.bytes}, {"tokens", d.tokens}});
  auto stream = [&](const std::string& p, const std::vector<std::uint32_t>& ids, std::size_t n_docs) {
    return json{{"path", fs::path(p).filename().string()}, {"sha256", io::sha256File(p)}, {"n_tokens", ids.size()},
                {"n_documents", n_docs}};
  };
  prov.inputs.push_back({"corpus-config", c.source, c.config_sha256, false});
  prov.finished_utc = output::utcNow();
  json doc = {{"schema", "omn-audit/corpus@1"},
              {"provenance", output::provenance(prov)},
              {"name", c.name},
              {"config", {{"path", c.source}, {"sha256", c.config_sha256}}},
              {"split", {{"method", "sha256(salt + \"\\n\" + document name) / 2^64 < heldout_fraction"},
                         {"salt", c.split_salt},
                         {"heldout_fraction", c.heldout_fraction}}},
              {"tokenizer", {{"path", "tokenizer.model"}, {"sha256", io::sha256Bytes(model_proto.data(), model_proto.size())},
                             {"library", "sentencepiece"}, {"model_type", c.model_type}, {"vocab_size", sp.GetPieceSize()},
                             {"character_coverage", c.character_coverage}, {"byte_fallback", true},
                             {"eos_id", eos}, {"unk_id", sp.unk_id()}, {"trained_on", "train"}}},
              {"token_format", u16 ? "u16" : "u32"},
              {"train", stream(train_path, train, n_train)},
              {"heldout", stream(heldout_path, heldout, n_heldout)},
              {"unigram", {{"train_entropy", h_train}, {"heldout_cross_entropy", ce_heldout},
                           {"note", "add-one smoothed unigram model of the training tokens, nats per token"}}},
              {"documents", documents}};
  output::writeFileAtomic(json_path, output::dumpJson(doc));
  return doc;
}

}  // namespace omn::data
