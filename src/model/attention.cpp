#include "omn/model/attention.h"

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "omn/errors.h"
#include "omn/model/products.h"

// The flash path needs libtorch >= 2.1 built with CUDA; everywhere else it is compiled out.
#if defined(OMN_WITH_CUDA) && (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))
#define OMN_HAVE_FLASH 1
#else
#define OMN_HAVE_FLASH 0
#endif

namespace omn::model {

const char* attentionName(AttentionPath p) {
  switch (p) {
    case AttentionPath::Masked: return "masked";
    case AttentionPath::PerDocument: return "per-document";
    case AttentionPath::Blockwise: return "blockwise";
    case AttentionPath::Flash: return "flash";
  }
  return "?";
}

bool flashCompiled() { return OMN_HAVE_FLASH; }

DocumentLayout documentLayout(const at::Tensor& doc) {
  DocumentLayout l;
  l.doc = doc.to(at::kLong).contiguous();
  const std::int64_t B = l.doc.size(0), T = l.doc.size(1);
  l.positions = at::empty({B, T}, at::kLong);
  const std::int64_t* d = l.doc.data_ptr<std::int64_t>();
  std::int64_t* p = l.positions.data_ptr<std::int64_t>();
  l.segments.resize(static_cast<std::size_t>(B));
  for (std::int64_t b = 0; b < B; ++b) {
    std::int64_t start = 0;
    for (std::int64_t t = 0; t < T; ++t) {
      if (t > 0 && d[b * T + t] != d[b * T + t - 1]) {
        l.segments[b].emplace_back(start, t);
        start = t;
      }
      p[b * T + t] = t - start;
    }
    l.segments[b].emplace_back(start, T);
    if (l.segments[b].size() > 1) l.single_document = false;
  }
  return l;
}

void checkAttentionRequest(AttentionRequest requested, const at::Device& device, DtypeRequest dtype,
                           const std::string& attention_flag, const std::string& dtype_flag) {
  if (requested != AttentionRequest::Flash) return;
  if (!OMN_HAVE_FLASH)
    throw UsageError(attention_flag + " flash: this build has no flash path (it needs libtorch >= 2.1 with CUDA; this is libtorch " +
                     std::string(TORCH_VERSION) + (device.is_cuda() ? "" : ", CPU") + ")");
  if (!device.is_cuda()) throw UsageError(attention_flag + " flash runs on CUDA devices only");
  if (dtype == DtypeRequest::FP32) throw UsageError(attention_flag + " flash needs " + dtype_flag + " bf16 or fp16");
}

std::int64_t attentionBlock() {
  static const std::int64_t block = [] {
    const char* env = std::getenv("OMN_ATTENTION_BLOCK");
    if (!env || !*env) return kAttentionBlock;
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (*end != '\0' || v < 1 || v > (1 << 20))
      throw UsageError("OMN_ATTENTION_BLOCK: expected a block of 1 to 1048576 tokens, got \"" + std::string(env).substr(0, 40) + "\"");
    return static_cast<std::int64_t>(v);
  }();
  return block;
}

std::int64_t attentionScoreBytes(AttentionPath path, const AttentionShape& shape) {
  const std::int64_t B = shape.batch, H = shape.heads, T = shape.seq_len, f = 4;  // float32 scores
  switch (path) {
    case AttentionPath::Masked: return B * H * T * T * f;
    case AttentionPath::PerDocument: return H * T * T * f;
    case AttentionPath::Blockwise: {
      const std::int64_t b = std::min(T, attentionBlock());
      return B * H * b * b * f;
    }
    case AttentionPath::Flash: return 0;
  }
  return 0;
}

AttentionPath chooseAttention(AttentionRequest requested, const at::Device& device, at::ScalarType dtype, bool packed,
                              const std::string& attention_flag, const std::string& dtype_flag, const AttentionShape& shape) {
  switch (requested) {
    case AttentionRequest::Masked: return AttentionPath::Masked;
    case AttentionRequest::PerDocument: return AttentionPath::PerDocument;
    case AttentionRequest::Blockwise: return AttentionPath::Blockwise;
    case AttentionRequest::Flash: {
      const DtypeRequest d = dtype == at::kBFloat16 ? DtypeRequest::BF16 : dtype == at::kHalf ? DtypeRequest::FP16 : DtypeRequest::FP32;
      checkAttentionRequest(requested, device, d, attention_flag, dtype_flag);
      return AttentionPath::Flash;
    }
    case AttentionRequest::Auto: break;
  }
  if (OMN_HAVE_FLASH && device.is_cuda() && (dtype == at::kBFloat16 || dtype == at::kHalf)) return AttentionPath::Flash;
  const AttentionPath plain = packed ? AttentionPath::PerDocument : AttentionPath::Masked;
  return attentionScoreBytes(plain, shape) > kBlockwiseAboveBytes ? AttentionPath::Blockwise : plain;
}

namespace {

// The one definition of which keys a query may see: key j from query i when j <= i. [rows, keys] for
// the queries first_row .. first_row + rows - 1 against the keys first_key .. first_key + keys - 1.
at::Tensor causalTile(std::int64_t first_row, std::int64_t rows, std::int64_t first_key, std::int64_t keys, const at::Device& device) {
  const auto opts = at::TensorOptions().dtype(at::kLong).device(device);
  return at::arange(first_key, first_key + keys, opts).unsqueeze(0) <= at::arange(first_row, first_row + rows, opts).unsqueeze(1);
}

at::Tensor causalMask(std::int64_t L, const at::Device& device) { return causalTile(0, L, 0, L, device); }  // [L, L]

// ...and within a packed row, only keys of the query's own document: [B, rows, keys] from doc ids
// [B, T], for one tile of queries and keys.
at::Tensor documentCausalTile(const at::Tensor& doc, std::int64_t first_row, std::int64_t rows, std::int64_t first_key,
                              std::int64_t keys) {
  return (doc.narrow(1, first_row, rows).unsqueeze(2) == doc.narrow(1, first_key, keys).unsqueeze(1)) &
         causalTile(first_row, rows, first_key, keys, doc.device()).unsqueeze(0);
}

// softmax(q k^T · scale + causal mask) v for one [H, L, D] block. The two products run in the
// working dtype (bf16 products as products.h chooses them), the scores and
// the softmax in float32, as flash attention does.
at::Tensor causalBlock(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale) {
  at::Tensor s = products::matmul(q, k.transpose(-2, -1)).to(at::kFloat) * scale;
  s.masked_fill_(causalMask(q.size(1), q.device()).logical_not(), -std::numeric_limits<float>::infinity());
  return products::matmul(at::softmax(s, -1).to(v.scalar_type()), v);
}

at::Tensor attendMasked(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const DocumentLayout& l,
                        double scale) {
  // [B, H, T, D]; the same precision policy as the other paths: products in the working dtype,
  // scores and softmax in float32
  const at::Tensor qh = q.transpose(1, 2), kh = k.transpose(1, 2), vh = v.transpose(1, 2);
  at::Tensor s = products::matmul(qh, kh.transpose(-2, -1)).to(at::kFloat) * scale;
  const at::Tensor allowed = documentCausalMask(l.doc.to(q.device())).unsqueeze(1);  // [B, 1, T, T]
  s.masked_fill_(allowed.logical_not(), -std::numeric_limits<float>::infinity());
  return products::matmul(at::softmax(s, -1).to(v.scalar_type()), vh).transpose(1, 2);
}

at::Tensor attendPerDocument(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const DocumentLayout& l,
                             double scale) {
  at::Tensor out = at::empty(q.sizes(), q.options());
  for (std::int64_t b = 0; b < q.size(0); ++b)
    for (const auto& [s, e] : l.segments[static_cast<std::size_t>(b)]) {
      // this document alone: [H, L, D]
      auto slice = [&](const at::Tensor& x) { return x[b].narrow(0, s, e - s).transpose(0, 1); };
      out[b].narrow(0, s, e - s).copy_(causalBlock(slice(q), slice(k), slice(v), scale).transpose(0, 1));
    }
  return out;
}

// The earliest key any query of rows first_row.. may see: the start of the document that holds
// first_row, the earliest over the batch's rows (a query never sees an earlier document).
std::int64_t firstVisibleKey(const DocumentLayout& l, std::int64_t first_row) {
  std::int64_t first = first_row;
  for (const auto& row : l.segments)
    for (const auto& [s, e] : row)
      if (s <= first_row && first_row < e) first = std::min(first, s);
  return first;
}

// Flash attention's algorithm on the CPU: for each block of queries, the keys a block at a time with
// a running maximum m, normaliser l and output sum acc (float32), rescaled when m grows, so no more
// than [B, H, block, block] scores exist at once. The products in the working dtype, the scores,
// exponentials and sums in float32: the precision policy of the other paths, the probabilities
// rounded before their product with v as there (here before the normalisation, by at most the same
// relative u); each key block's partial p v is rounded to the working dtype once more before the
// float32 sum (the unit test's bound for this path adds it).
at::Tensor attendBlockwise(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const DocumentLayout& l,
                           double scale, std::int64_t block) {
  const at::Tensor qh = q.transpose(1, 2), kh = k.transpose(1, 2), vh = v.transpose(1, 2);  // [B, H, T, D]
  const std::int64_t B = qh.size(0), H = qh.size(1), T = qh.size(2), D = qh.size(3);
  const at::Tensor doc = l.doc.to(q.device());
  const float ninf = -std::numeric_limits<float>::infinity();
  const auto f32 = q.options().dtype(at::kFloat);
  at::Tensor out = at::empty({B, H, T, D}, q.options());
  for (std::int64_t r0 = 0; r0 < T; r0 += block) {
    const std::int64_t n = std::min(block, T - r0);
    const at::Tensor qb = qh.narrow(2, r0, n);
    at::Tensor m = at::full({B, H, n, 1}, ninf, f32), norm = at::zeros({B, H, n, 1}, f32), acc = at::zeros({B, H, n, D}, f32);
    for (std::int64_t c0 = firstVisibleKey(l, r0); c0 < r0 + n; c0 += block) {
      const std::int64_t nk = std::min(block, r0 + n - c0);
      at::Tensor s = products::matmul(qb, kh.narrow(2, c0, nk).transpose(-2, -1)).to(at::kFloat).mul_(scale);  // [B, H, n, nk]
      if (c0 + nk > r0 + 1 || !l.single_document)  // a key after a query, or documents to keep apart
        s.masked_fill_(documentCausalTile(doc, r0, n, c0, nk).logical_not().unsqueeze(1), ninf);
      const at::Tensor m_new = at::maximum(m, std::get<0>(s.max(-1, /*keepdim=*/true)));
      const at::Tensor shift = m_new.masked_fill(m_new == ninf, 0);  // a query that has seen no key yet
      const at::Tensor p = s.sub_(shift).exp_();                      // 0 on hidden keys
      const at::Tensor rescale = (m - shift).exp_();                  // 0 before the first key
      norm.mul_(rescale).add_(p.sum(-1, /*keepdim=*/true));
      acc.mul_(rescale).add_(products::matmul(p.to(v.scalar_type()), vh.narrow(2, c0, nk)).to(at::kFloat));
      m = m_new;
    }
    out.narrow(2, r0, n).copy_(acc.div_(norm));  // every query sees at least itself: norm >= 1
  }
  return out.transpose(1, 2);
}

#if OMN_HAVE_FLASH
at::Tensor attendFlash(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const DocumentLayout& l,
                       double scale) {
  const std::int64_t B = q.size(0), T = q.size(1), H = q.size(2), D = q.size(3);
  // cumulative sequence lengths over all documents of all rows, int32 on the device
  std::vector<std::int32_t> cu{0};
  std::int64_t max_len = 0;
  for (std::int64_t b = 0; b < B; ++b)
    for (const auto& [s, e] : l.segments[static_cast<std::size_t>(b)]) {
      cu.push_back(static_cast<std::int32_t>(b * T + e));
      max_len = std::max(max_len, e - s);
    }
  const at::Tensor cu_t = at::tensor(cu, at::kInt).to(q.device());
  const at::Tensor qq = q.reshape({B * T, H, D}).contiguous(), kk = k.reshape({B * T, H, D}).contiguous(),
                   vv = v.reshape({B * T, H, D}).contiguous();
  auto res = at::_flash_attention_forward(qq, kk, vv, cu_t, cu_t, max_len, max_len, 0.0, /*is_causal=*/true,
                                          /*return_debug_mask=*/false, scale);
  return std::get<0>(res).view({B, T, H, D});
}
#endif

}  // namespace

at::Tensor documentCausalMask(const at::Tensor& doc, std::int64_t first_row, std::int64_t rows) {
  const std::int64_t T = doc.size(1);
  return documentCausalTile(doc, first_row, rows < 0 ? T : rows, 0, T);
}

at::Tensor attend(AttentionPath path, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                  const DocumentLayout& layout, std::int64_t block) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  switch (path) {
    case AttentionPath::Masked: return attendMasked(q, k, v, layout, scale);
    case AttentionPath::PerDocument: return attendPerDocument(q, k, v, layout, scale);
    case AttentionPath::Blockwise: return attendBlockwise(q, k, v, layout, scale, block > 0 ? block : attentionBlock());
    case AttentionPath::Flash:
#if OMN_HAVE_FLASH
      return attendFlash(q, k, v, layout, scale);
#else
      throw UsageError("the flash attention path is not compiled into this build");
#endif
  }
  throw UsageError("unknown attention path");
}

}  // namespace omn::model
