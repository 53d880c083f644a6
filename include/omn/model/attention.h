// Scaled dot-product attention, 1/sqrt(d), causal and never across a document boundary. Four
// paths, one result; the reference (masked) runs everywhere and every other path is tested
// against it. The path is chosen in one place: chooseAttention().
#pragma once
#include <ATen/ATen.h>

#include <string>
#include <utility>
#include <vector>

#include "omn/model/model_options.h"

namespace omn::model {

enum class AttentionPath {
  Masked,       // reference: full [T, T] scores with a causal, block-diagonal document mask
  PerDocument,  // each document of a packed row attended on its own, then reassembled
  Blockwise,    // blocks of queries against blocks of keys, online softmax: O(T·block) memory
  Flash,        // CUDA, libtorch >= 2.1: packed variable-length flash attention
};
const char* attentionName(AttentionPath p);
bool flashCompiled();  // this build has the flash path

// Document structure of a batch: doc ids per token and, per row, the [begin, end) runs.
struct DocumentLayout {
  at::Tensor doc;        // [B, T] int64
  at::Tensor positions;  // [B, T] int64, restarting at each document start
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> segments;
  bool single_document = true;  // every row is one document
};
DocumentLayout documentLayout(const at::Tensor& doc);  // doc [B, T] on CPU

// The shape a forward pass will attend over: rows per pass, query heads, tokens per row. Unknown
// (all 0): the paths' memory is not considered.
struct AttentionShape {
  std::int64_t batch = 0, heads = 0, seq_len = 0;
};
// float32 score bytes one layer of `path` holds at once for `shape`: masked [B, H, T, T]; per-document
// [H, L, L] for the longest document (T as its bound); blockwise [B, H, block, block]; flash none.
std::int64_t attentionScoreBytes(AttentionPath path, const AttentionShape& shape);
// Above this, auto leaves the masked and per-document paths for the blockwise one (1 GiB: a
// 2,048-token row of 16 heads holds 256 MiB, so an evaluation up to that length at the default batch
// -- 2,048 tokens a pass -- keeps its path; 5 such rows a pass take the blockwise one).
inline constexpr std::int64_t kBlockwiseAboveBytes = std::int64_t{1} << 30;
// The blockwise path's block of queries and of keys (tokens): kAttentionBlock, or
// OMN_ATTENTION_BLOCK where set (read once; tests use small blocks to cross every tile boundary).
inline constexpr std::int64_t kAttentionBlock = 256;
std::int64_t attentionBlock();

// auto: flash on CUDA with bf16/fp16 where compiled; else per-document for rows holding several
// documents, else masked, unless that path's scores (attentionScoreBytes) pass kBlockwiseAboveBytes:
// then blockwise. Throws UsageError for a path this build, device or dtype cannot run, naming the
// option that asked for it (`attention_flag`, `dtype_flag`: "--attention" or a manifest's
// "/model/attention").
AttentionPath chooseAttention(AttentionRequest requested, const at::Device& device, at::ScalarType dtype, bool packed,
                              const std::string& attention_flag = "--attention", const std::string& dtype_flag = "--dtype",
                              const AttentionShape& shape = {});
// What chooseAttention can refuse before the checkpoint is read: flash without the path compiled
// in, on a CPU device, or with an explicit fp32 working dtype.
void checkAttentionRequest(AttentionRequest requested, const at::Device& device, DtypeRequest dtype,
                           const std::string& attention_flag, const std::string& dtype_flag);

// q, k, v [B, T, H, D] (k/v already repeated to the query heads) → [B, T, H, D] in q's dtype.
// `block`: the blockwise path's block in tokens (0: kAttentionBlock; tests pass small ones).
at::Tensor attend(AttentionPath path, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const DocumentLayout& layout, std::int64_t block = 0);

// The mask of packed rows: [B, rows, T], true where query first_row + r may see key t (same
// document, t <= query), from doc ids [B, T]; all T queries by default. Every attention path and the
// softmax statistics (eval/mechanism.h) take it from here.
at::Tensor documentCausalMask(const at::Tensor& doc, std::int64_t first_row = 0, std::int64_t rows = -1);

}  // namespace omn::model
