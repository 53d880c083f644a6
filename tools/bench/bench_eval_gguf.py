#!/usr/bin/python3
"""Helper of tools/bench/bench-eval.sh: writes the benchmark model of `bench_eval.py setup DIR` as a GGUF
that llama.cpp loads as a Qwen3 model (the same weights: llama.cpp side by side with omn-audit).

  bench_eval_gguf.py DIR OUT.gguf f32|bf16   -> OUT.gguf (written once; a new name only when complete)
  bench_eval_gguf.py --check OUT.gguf        -> prints the header, the metadata and the tensor table
  bench_eval_gguf.py reference-nll DIR DTYPE NSEQ SEQ OUT.json
                                             -> the reference's per-row NLL sums (packed rows, as
                                                bench_eval.py reference times them) for the check
  bench_eval_gguf.py compare A.json B.json   -> prints the relative difference of the NLL sums, total
                                                and worst row; each file an omn-audit eval JSON, a
                                                llama_nll JSON or a reference-nll JSON

Why Qwen3: it is the llama.cpp architecture with this model's block: pre-norm RMSNorm, Q/K RMSNorm
per head (attn_q_norm/attn_k_norm, [head_dim] gains) before RoPE, NEOX RoPE (= rotate_half, the
pairs (i, i + d/2): llama.cpp's LLM_ARCH_QWEN3 uses LLAMA_ROPE_TYPE_NEOX, and convert_hf_to_gguf.py
permutes q/k only for the LLaMA family, not for Qwen2/Qwen3), GQA, softmax scale 1/sqrt(head_dim),
SwiGLU with separate gate/up, one RMS epsilon for every norm, a separate output head. The fused w13
is split: gate = rows [0, F), up = rows [F, 2F) (bench_eval.py / reference_model.py: gate first).

The format is GGUF v3 as ggml's docs/gguf.md and gguf.h define it (little-endian): magic "GGUF",
version 3, tensor count and KV count (uint64), the KV pairs (key = uint64 length + bytes, uint32
value type, value), the tensor infos (name, uint32 n_dims, uint64 ne[] innermost first, uint32 ggml
type, uint64 offset into the data section), zero padding to general.alignment (32), then the data,
each tensor at an offset that is a multiple of 32. A PyTorch [out, in] weight is ggml ne = [in, out].

Types: F32 (ggml 0) everywhere, or BF16 (ggml 30) for the 2-D weights with the 1-D norm gains kept in
F32 (llama.cpp's own LLAMA_FTYPE_MOSTLY_BF16 = 32 convention, "except 1d tensors"). The checkpoint
holds bf16 values, so both files hold exactly the checkpoint's numbers.

Tokenizer: tokenizer.ggml.model = "none" with qwen3.vocab_size = 32768, llama.cpp's vocabulary-less
model (LLAMA_VOCAB_TYPE_NONE: 32768 dummy tokens, no special tokens): the benchmark feeds token ids
and never tokenizes text.
"""
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_eval import CFG, D, F, HD, L, NAMES, NH, NKV, V  # noqa: E402

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGN = 32
# gguf_type
U8, I8, U16, I16, U32, I32, F32T, BOOL, STR, ARR, U64, I64, F64 = range(13)
# ggml_type
GGML_F32, GGML_BF16 = 0, 30
FTYPE = {"f32": 0, "bf16": 32}  # llama_ftype: LLAMA_FTYPE_ALL_F32, LLAMA_FTYPE_MOSTLY_BF16
ARCH = "qwen3"


def _str(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _val(t, v):
    if t == STR:
        return _str(v)
    if t == ARR:
        et, items = v
        out = struct.pack("<IQ", et, len(items))
        if et == STR:
            return out + b"".join(_str(x) for x in items)
        fmt = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32T: "f", BOOL: "?", U64: "Q", I64: "q", F64: "d"}[et]
        return out + struct.pack("<%d%s" % (len(items), fmt), *items)
    fmt = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32T: "<f", BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}[t]
    return struct.pack(fmt, v)


def metadata(dtype):
    a = ARCH
    return [
        ("general.architecture", STR, a),
        ("general.name", STR, "omn-audit bench (4 layers, d 512)"),
        ("general.file_type", U32, FTYPE[dtype]),
        ("general.alignment", U32, ALIGN),
        (a + ".context_length", U32, 4096),
        (a + ".embedding_length", U32, D),
        (a + ".block_count", U32, L),
        (a + ".feed_forward_length", U32, F),
        (a + ".attention.head_count", U32, NH),
        (a + ".attention.head_count_kv", U32, NKV),
        (a + ".attention.key_length", U32, HD),
        (a + ".attention.value_length", U32, HD),
        (a + ".rope.dimension_count", U32, HD),
        (a + ".rope.freq_base", F32T, float(CFG["rope_theta"])),
        # llama.cpp's Qwen3 reads one epsilon for the block norms and the Q/K norms
        (a + ".attention.layer_norm_rms_epsilon", F32T, float(CFG["norm_eps"])),
        (a + ".vocab_size", U32, V),
        ("tokenizer.ggml.model", STR, "none"),
    ]


def tensors(sd, dtype):
    """(GGUF name, numpy array in PyTorch layout) in file order."""
    assert CFG["norm_eps"] == CFG["qk_norm_eps"], "llama.cpp's Qwen3 has one epsilon for all norms"
    assert CFG["rope_style"] == "rotate_half" and CFG["qk_layout"] == "head" and not CFG["one_plus"]

    def get(role, i=None):
        n = NAMES[role] if i is None else NAMES[role].replace("{i}", str(i))
        return sd[n].float().numpy()

    out = [("token_embd.weight", get("embedding"))]
    for i in range(L):
        b = "blk.%d." % i
        w13 = get("w13", i)
        assert w13.shape == (2 * F, D)
        out += [(b + "attn_norm.weight", get("attention_norm", i)),
                (b + "attn_q.weight", get("wq", i)),
                (b + "attn_k.weight", get("wk", i)),
                (b + "attn_v.weight", get("wv", i)),
                (b + "attn_q_norm.weight", get("q_norm", i)),
                (b + "attn_k_norm.weight", get("k_norm", i)),
                (b + "attn_output.weight", get("wo", i)),
                (b + "ffn_norm.weight", get("ffn_norm", i)),
                (b + "ffn_gate.weight", w13[:F]),
                (b + "ffn_up.weight", w13[F:]),
                (b + "ffn_down.weight", get("w2", i))]
    out += [("output_norm.weight", get("final_norm")), ("output.weight", get("output"))]
    return out


def encode(a, dtype):
    """-> (ggml type, bytes). BF16 by truncation, exact here: the values come from bf16."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "bf16" and a.ndim >= 2:
        u = a.view(np.uint32)
        assert not (u & 0xFFFF).any(), "not bf16-exact"
        return GGML_BF16, (u >> 16).astype("<u2").tobytes()
    return GGML_F32, a.astype("<f4").tobytes()


def write(d, out, dtype):
    sd = torch.load(os.path.join(d, "model.pt"))
    kv = metadata(dtype)
    ts = [(name, a.shape, *encode(a, dtype)) for name, a in tensors(sd, dtype)]
    head = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(ts), len(kv))
    for k, t, v in kv:
        head += _str(k) + struct.pack("<I", t) + _val(t, v)
    off = 0
    offsets = []
    for name, shape, gt, data in ts:
        ne = list(reversed(shape))  # ggml: ne[0] is the innermost (contiguous) dimension
        head += _str(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne) + struct.pack("<IQ", gt, off)
        offsets.append(off)
        off += len(data)
        off += (-off) % ALIGN
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        f.write(head)
        f.write(b"\0" * ((-len(head)) % ALIGN))
        base = f.tell()
        for (name, shape, gt, data), o in zip(ts, offsets):
            f.write(b"\0" * (base + o - f.tell()))
            f.write(data)
    os.replace(tmp, out)


def check(path):
    """Reads the file back (an independent parse of what write() produced)."""
    b = open(path, "rb").read()
    assert b[:4] == GGUF_MAGIC
    ver, nt, nkv = struct.unpack_from("<IQQ", b, 4)
    p = 24

    def rstr():
        nonlocal p
        (n,) = struct.unpack_from("<Q", b, p)
        s = b[p + 8:p + 8 + n].decode()
        p += 8 + n
        return s
    sizes = {U8: 1, I8: 1, U16: 2, I16: 2, U32: 4, I32: 4, F32T: 4, BOOL: 1, U64: 8, I64: 8, F64: 8}
    fmts = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32T: "<f", BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}

    def rval(t):
        nonlocal p
        if t == STR:
            return rstr()
        if t == ARR:
            et, n = struct.unpack_from("<IQ", b, p)
            p += 12
            return [rval(et) for _ in range(n)]
        (v,) = struct.unpack_from(fmts[t], b, p)
        p += sizes[t]
        return v
    print("GGUF v%d, %d tensors, %d metadata" % (ver, nt, nkv))
    for _ in range(nkv):
        k = rstr()
        (t,) = struct.unpack_from("<I", b, p)
        p += 4
        print("  %s = %r" % (k, rval(t)))
    for _ in range(nt):
        name = rstr()
        (nd,) = struct.unpack_from("<I", b, p)
        ne = struct.unpack_from("<%dQ" % nd, b, p + 4)
        gt, off = struct.unpack_from("<IQ", b, p + 4 + 8 * nd)
        p += 4 + 8 * nd + 12
        print("  %-28s ne=%-14s type=%d offset=%d" % (name, list(ne), gt, off))


def reference_nll(d, dtype, nseq, seq, out):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "parity"))
    from reference_model import Reference
    from bench_eval import EOS
    sd = torch.load(os.path.join(d, "model.pt"))
    ref = Reference(sd, CFG, dtype=torch.bfloat16 if dtype == "bf16" else torch.float32)
    t = np.fromfile(os.path.join(d, "tokens.bin"), dtype=np.uint16).astype(np.int64)
    docid = np.cumsum(np.concatenate([[0], (t[:-1] == EOS).astype(np.int64)]))
    rows, n = [], 0
    with torch.inference_mode():
        for i in range(nseq):
            s, k = ref.nll(torch.tensor(t[i * seq:(i + 1) * seq]), torch.tensor(docid[i * seq:(i + 1) * seq]))
            rows.append(s)
            n += k
    import json
    json.dump({"schema": "omn-audit/reference-nll@1", "dtype": dtype, "nll_sum": sum(rows), "scored_tokens": n,
               "rows": [{"nll_sum": x} for x in rows]}, open(out, "w"))


def _sums(path):
    """-> (total, [per row], scored tokens) of any of the three JSON kinds."""
    import json
    j = json.load(open(path))
    if "result" in j:  # omn-audit/eval@1
        r = j["result"]
        return r["nll_sum"], r["sequences"]["nll_sum"], r["tokens"]
    return j["nll_sum"], [x["nll_sum"] for x in j["rows"]], j["scored_tokens"]


def compare(a, b):
    ta, ra, na = _sums(a)
    tb, rb, nb = _sums(b)
    if len(ra) != len(rb) or na != nb:
        print("different rows: %d rows / %d tokens vs %d rows / %d tokens" % (len(ra), na, len(rb), nb))
        sys.exit(1)
    worst = max(abs(x - y) / abs(y) for x, y in zip(ra, rb))
    print("NLL sum %.6f vs %.6f over %d tokens: relative difference %.2e (worst row %.2e)" % (ta, tb, na, abs(ta - tb) / abs(tb), worst))


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(sys.argv[2])
    elif sys.argv[1] == "reference-nll":
        reference_nll(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    elif sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        if sys.argv[3] not in FTYPE:
            sys.exit("dtype must be f32 or bf16")
        write(sys.argv[1], sys.argv[2], sys.argv[3])
