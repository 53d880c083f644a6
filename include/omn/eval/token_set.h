// Pre-tokenized evaluation sets (tokenization happens upstream; its revision is recorded, never
// implied) and the deterministic construction of rows from them. No libtorch.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "omn/io/choice.h"

namespace omn::eval {

// How the token file stores its ids; auto: .npy by its magic, else u16.
enum class TokenFormat { Auto, U16, U32, Npy };
inline constexpr std::array<io::Named<TokenFormat>, 4> kTokenFormats{
    {{"auto", TokenFormat::Auto}, {"u16", TokenFormat::U16}, {"u32", TokenFormat::U32}, {"npy", TokenFormat::Npy}}};

struct TokenSetSpec {
  std::string path;
  TokenFormat format = TokenFormat::Auto;
  std::optional<std::int64_t> eos;  // a document ends with (and includes) this token
  std::string offsets;              // or: a sidecar of document start offsets (.npy integers or text)
};

struct TokenSet {
  std::string path, sha256;
  TokenFormat format = TokenFormat::U16;  // as read (never Auto)
  std::vector<std::uint32_t> tokens;
  std::vector<std::uint64_t> doc_starts;  // ascending; empty when no boundaries are known
  std::string offsets_path, offsets_sha256;
  std::optional<std::int64_t> eos;
  std::int64_t dropped_out_of_vocab = -1;  // ids >= the vocabulary removed (dropOutOfVocabulary); -1: not asked
};

// What to do with ids >= the model's vocabulary: refuse the set (checkVocabulary), or remove them
// from the stream as the historical OMN script's vocabulary-size filter did (counts recorded).
enum class OutOfVocabulary { Refuse, Drop };
inline constexpr std::array<io::Named<OutOfVocabulary>, 2> kOutOfVocabulary{{{"refuse", OutOfVocabulary::Refuse}, {"drop", OutOfVocabulary::Drop}}};

// Removes every id >= vocab from the stream; document starts move to the same tokens (a document
// left empty disappears). Sets dropped_out_of_vocab. Row offsets then index the filtered stream.
void dropOutOfVocabulary(TokenSet& set, std::int64_t vocab);

// Reads and hashes the file; throws FormatError naming the file and the place.
TokenSet readTokenSet(const TokenSetSpec& spec);

enum class RowForm {
  Packed,       // consecutive L-token rows over the stream, document ids per token (positions restart)
  PerDocument,  // one document per row; documents longer than L are split into consecutive rows
  Historical,   // EOS stripped, no document metadata: the historical OMN panel's form
};
inline constexpr std::array<io::Named<RowForm>, 3> kRowForms{
    {{"packed", RowForm::Packed}, {"per-document", RowForm::PerDocument}, {"historical", RowForm::Historical}}};
inline const char* rowFormName(RowForm f) { return io::choiceName(kRowForms, f); }

struct Row {
  std::vector<std::int64_t> tokens;
  std::vector<std::int64_t> doc;  // document id of each token (all 0 for historical rows)
  std::uint64_t offset = 0;       // index of the first token in the file
};

// True when some row holds more than one document (the masks must then keep documents apart).
bool anyRowPacked(const std::vector<Row>& rows);

// The tokens a pass scores in a row: each position t < T - 1 whose next token is of the same
// document (eval/scorer.h's rule). What a journaled record's counts must equal.
std::int64_t scoredTokens(const Row& r);

// All rows the set yields in this form, in file order.
std::vector<Row> buildRows(const TokenSet& set, RowForm form, std::int64_t seq_len);

// Which rows are scored: the first N, or N drawn by a seeded shuffle.
enum class SelectionMode { First, Seeded };
inline constexpr std::array<io::Named<SelectionMode>, 2> kSelectionModes{{{"first", SelectionMode::First}, {"seeded", SelectionMode::Seeded}}};

struct Selection {
  SelectionMode mode = SelectionMode::First;
  std::uint64_t seed = 0;
  std::vector<std::size_t> indices;  // ascending indices into the rows
};
// first-N, or N drawn without replacement by a seeded shuffle (then sorted). Throws UsageError
// when the set has fewer rows than asked (unless `up_to`: then every row it has), or none.
// `name`: the option that asked for n rows (--num-seqs, or a manifest's /rows/num_seqs), for messages.
Selection selectRows(std::size_t available, std::size_t n, SelectionMode mode, std::uint64_t seed, bool up_to = false,
                     const std::string& name = "--num-seqs");

// Throws FormatError naming the file and token position of the first id >= vocab (the whole set:
// one such id means the set and the model do not belong together).
void checkVocabulary(const TokenSet& set, std::int64_t vocab);

}  // namespace omn::eval
