// Scaled dot-product attention, 1/sqrt(d), causal and never across a document boundary. Three
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

// auto: flash on CUDA with bf16/fp16 where compiled, else per-document for rows holding several
// documents, else masked. Throws UsageError for a path this build, device or dtype cannot run,
// naming the option that asked for it (`attention_flag`, `dtype_flag`: "--attention" or a manifest's
// "/model/attention").
AttentionPath chooseAttention(AttentionRequest requested, const at::Device& device, at::ScalarType dtype, bool packed,
                              const std::string& attention_flag = "--attention", const std::string& dtype_flag = "--dtype");
// What chooseAttention can refuse before the checkpoint is read: flash without the path compiled
// in, on a CPU device, or with an explicit fp32 working dtype.
void checkAttentionRequest(AttentionRequest requested, const at::Device& device, DtypeRequest dtype,
                           const std::string& attention_flag, const std::string& dtype_flag);

// q, k, v [B, T, H, D] (k/v already repeated to the query heads) → [B, T, H, D] in q's dtype.
at::Tensor attend(AttentionPath path, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const DocumentLayout& layout);

// The per-head softmax statistics --mechanism reports, from the reference scores of one layer:
// mean attention entropy (nats) and the largest pre-softmax logit. Computed a block of query rows
// at a time ([B, H, rows, T] float32 within block_bytes, default 64 MiB), never [B, H, T, T], so it
// works at training length (32,768 tokens); tests pass a small block to exercise the loop.
struct AttentionStats {
  double mean_entropy = 0, max_logit = 0;
};
AttentionStats attentionStats(const at::Tensor& q, const at::Tensor& k, const DocumentLayout& layout,
                              std::int64_t block_bytes = std::int64_t{64} << 20);

}  // namespace omn::model
