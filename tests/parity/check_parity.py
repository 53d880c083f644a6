#!/usr/bin/python3
"""Parity: `omn-audit eval` against the independent Python reference (reference_model.py) on small
random checkpoints of several shapes, written by real PyTorch.

  check_parity.py OMN_AUDIT WORKDIR

For each shape (GQA 1, 2, 4; fused and separate FFN; rotate-half and interleaved RoPE; pre-norm and
OLMo2-style post-norm with projection-wide QK gains) and row form (packed multi-document rows,
one document per row, the historical form), in fp32:
  * every attention path omn-audit has here gives per-sequence NLL within 1e-6 relative of the
    reference, and the logits of the first row within 1e-4 absolute;
  * a gain change moves the NLL exactly as it moves the reference's.
In bf16, every attention path under both bf16 product kernels (native, fp32-accumulate: products.h)
is within the rounding bound of the exact result: per sequence, |NLL_bf16 - NLL_exact| <= K * the RMS
spread of the reference run in Monte Carlo arithmetic (each value bf16 would round perturbed by a
relative error uniform in [-u, u], u = 2^-8; N seeds). The bound comes from the arithmetic, not from
a host (docs/eval.md, "How close bf16 is").

  check_parity.py OMN_AUDIT WORKDIR [--bf16-only]   (--bf16-only: the bf16 checks alone, as the
                                                    ctest run under oneDNN's AVX2 ISA limit does)

The fp32 checks run every shape in every row form. The bf16 checks (a float64 and 12 Monte Carlo
reference passes each, ~10 s) run each shape in one row form, the forms in turn, so every shape and
every form is covered once: OMN_PARITY_ALL=1 runs every shape in every form (12 instead of 4).
"""
import collections
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_model import Arithmetic, Reference  # noqa: E402

omn, work = (sys.argv[1], sys.argv[2]) if __name__ == "__main__" else ("", os.environ["OMN_PARITY_WORK"])
BF16_ONLY = "--bf16-only" in sys.argv[3:]
ALL_FORMS = os.environ.get("OMN_PARITY_ALL") == "1"
os.makedirs(work, exist_ok=True)
torch.manual_seed(0)
VOCAB, EOS = 97, 0

SHAPES = [
    # name, d_model, n_heads, n_kv, head_dim, ffn, layers, fused, rope, placement
    ("gqa4-fused-half", 64, 4, 1, 16, 48, 2, True, "rotate_half", "pre"),
    ("gqa2-split-interleaved", 48, 4, 2, 12, 40, 2, False, "interleaved", "pre"),
    ("mha-fused-interleaved", 32, 2, 2, 16, 24, 3, True, "interleaved", "pre"),
    ("olmo2-post-projection", 64, 4, 2, 16, 48, 2, False, "rotate_half", "post"),
]

OMN_NAMES = {
    "embedding": "tok_embeddings.weight", "attention_norm": "layers.{i}.attention_norm.weight",
    "wq": "layers.{i}.attention.wq.weight", "wk": "layers.{i}.attention.wk.weight",
    "wv": "layers.{i}.attention.wv.weight", "wo": "layers.{i}.attention.wo.weight",
    "q_norm": "layers.{i}.attention.q_norm.weight", "k_norm": "layers.{i}.attention.k_norm.weight",
    "ffn_norm": "layers.{i}.ffn_norm.weight", "w2": "layers.{i}.feed_forward.w2.weight",
    "final_norm": "norm.weight", "output": "output.weight"}


def make(shape):
    name, d, nh, nkv, hd, f, L, fused, rope, placement = shape
    names = dict(OMN_NAMES)
    post = placement == "post"
    if post:
        del names["attention_norm"], names["ffn_norm"]
        names["post_attention_norm"] = "layers.{i}.post_attention_norm.weight"
        names["post_ffn_norm"] = "layers.{i}.post_ffn_norm.weight"
    if fused:
        names["w13"] = "layers.{i}.feed_forward.w13.weight"
    else:
        names["w1"] = "layers.{i}.feed_forward.w1.weight"
        names["w3"] = "layers.{i}.feed_forward.w3.weight"
    layout = "projection" if post else "head"
    sd = collections.OrderedDict()

    def r(*s, scale=1.0):
        return torch.randn(*s) * scale / (s[-1] ** 0.5)

    sd[names["embedding"]] = torch.randn(VOCAB, d)
    for i in range(L):
        def n(role):
            return names[role].replace("{i}", str(i))
        for role in (("post_attention_norm", "post_ffn_norm") if post else ("attention_norm", "ffn_norm")):
            sd[n(role)] = 1 + 0.2 * torch.randn(d)
        sd[n("wq")], sd[n("wk")], sd[n("wv")] = r(nh * hd, d), r(nkv * hd, d), r(nkv * hd, d)
        sd[n("wo")] = r(d, nh * hd)
        qlen, klen = (nh * hd, nkv * hd) if post else (hd, hd)
        sd[n("q_norm")] = torch.rand(qlen) * 3 - 0.2   # wide, a few negative: like OMN-1's gains
        sd[n("k_norm")] = torch.rand(klen) * 3 - 0.2
        if fused:
            sd[n("w13")] = r(2 * f, d)
        else:
            sd[n("w1")], sd[n("w3")] = r(f, d), r(f, d)
        sd[n("w2")] = r(d, f)
    sd[names["final_norm"]] = 1 + 0.1 * torch.randn(d)
    sd[names["output"]] = r(VOCAB, d, scale=3.0)
    preset = {"schema": "omn-audit/preset@1", "name": name, "tensors": names,
              "gain": {"parametrisation": "direct", "layout": layout},
              "architecture": {"head_dim": hd, "norm_eps": 1e-5, "qk_norm_eps": 1e-6, "rope_theta": 10000.0,
                               "rope_style": rope, "qk_norm_cast": "multiply_then_cast"}}
    cfg = {"tensors": names, "head_dim": hd, "n_heads": nh, "n_kv_heads": nkv, "n_layers": L, "norm_eps": 1e-5,
           "qk_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_style": rope, "norm_cast": "multiply_then_cast",
           "qk_norm_cast": "multiply_then_cast", "qk_layout": layout, "one_plus": False,
           "norm_placement": placement}
    return sd, preset, cfg


# tokens: documents of 5..60 tokens, each ending with EOS
rng = np.random.default_rng(1)
docs = []
while sum(map(len, docs)) < 3000:
    n = int(rng.integers(5, 60))
    docs.append(list(rng.integers(1, VOCAB, size=n - 1)) + [EOS])
stream = np.array([t for d in docs for t in d], dtype=np.uint16)
tokpath = os.path.join(work, "tokens.bin")
stream.tofile(tokpath)

SEQ, NSEQ = 64, 6


def rows(form):
    """The rows omn-audit builds for this form (first NSEQ), rebuilt independently here."""
    if form == "historical":
        kept = stream[stream != EOS]
        return [(torch.tensor(kept[i * SEQ:(i + 1) * SEQ].astype(np.int64)), torch.zeros(SEQ, dtype=torch.long))
                for i in range(NSEQ)]
    docid = np.cumsum(np.concatenate([[0], (stream[:-1] == EOS).astype(np.int64)]))
    if form == "packed":
        return [(torch.tensor(stream[i * SEQ:(i + 1) * SEQ].astype(np.int64)), torch.tensor(docid[i * SEQ:(i + 1) * SEQ]))
                for i in range(NSEQ)]
    out, starts = [], [0] + [i + 1 for i in range(len(stream) - 1) if stream[i] == EOS]
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(stream)
        for a in range(s, e, SEQ):
            b = min(e, a + SEQ)
            if b - a >= 2:
                out.append((torch.tensor(stream[a:b].astype(np.int64)), torch.zeros(b - a, dtype=torch.long)))
    return out[:NSEQ]


# The rounding bound of a bf16 run: unit roundoff, MCA samples, and the multiple of their RMS spread
# allowed. With N = 12 samples the estimated RMS is below half the true one with probability ~0.004
# (chi-square, 12 degrees of freedom); K = 8 then still allows 4 sigma. MCA's uniform [-u, u]
# perturbation has a larger variance than round-to-nearest's error, so the spread over-covers.
BF16_U, MCA_SAMPLES, MCA_K = 2.0 ** -8, 12, 8.0


def bf16_bounds(sd, cfg, rs):
    """Per row: the exact NLL (float64 on the bf16 weights) and the rounding bound around it."""
    exact = Reference(sd, cfg, arithmetic=Arithmetic.exact(), weights_dtype=torch.bfloat16)
    want = [exact.nll(t, d)[0] for t, d in rs]
    dev = np.zeros((MCA_SAMPLES, len(rs)))
    for k in range(MCA_SAMPLES):
        mca = Reference(sd, cfg, arithmetic=Arithmetic.mca(BF16_U, seed=1000 + k), weights_dtype=torch.bfloat16)
        dev[k] = [mca.nll(t, d)[0] - w for (t, d), w in zip(rs, want)]
    return want, MCA_K * np.sqrt((dev ** 2).mean(0))


def run_eval(ck, preset, form, attention, dtype, tag, products=None, stderr=None, batch=3):
    out = os.path.join(work, tag + ".json")
    logits = os.path.join(work, tag + ".npy")
    cmd = [omn, "eval", "--checkpoint", ck, "--preset", preset, "--tokens", tokpath, "--eos", str(EOS),
           "--tokenizer-revision", "parity", "--seq-len", str(SEQ), "--num-seqs", str(NSEQ), "--row-form", form,
           "--attention", attention, "--dtype", dtype, "--groups", "2", "--bootstrap-resamples", "200",
           "--json", out, "--dump-logits", logits, "--force", "--batch", str(batch)]
    env = dict(os.environ)
    if products:
        env["OMN_BF16_PRODUCTS"] = products
    # the blockwise path in blocks of 16 tokens: a 64-token row crosses every kind of tile
    env["OMN_ATTENTION_BLOCK"] = BLOCK
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    doc = json.load(open(out))
    return doc, np.load(logits)


passed = failed = 0
BLOCK = "16"
PATHS = ("masked", "per-document", "blockwise")


def expect(ok, what):
    global passed, failed  # noqa: PLW0603
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def check_fp32(ck, ck2, ppath, form, shape, ref, ref2, rs):
    want = [ref.nll(t, d) for t, d in rs]
    want2 = [ref2.nll(t, d) for t, d in rs]
    want_logits = ref.forward(*rs[0]).numpy()
    for attention in PATHS:
        tag = "%s-%s-%s" % (shape[0], form, attention)
        doc, logits = run_eval(ck, ppath, form, attention, "fp32", tag)
        got = doc["result"]["sequences"]
        expect(doc["model"]["attention"] == attention, tag + ": attention path reported")
        expect(got["tokens"] == [w[1] for w in want], tag + ": scored token counts %s vs %s" % (got["tokens"], [w[1] for w in want]))
        rel = max(abs(g - w[0]) / abs(w[0]) for g, w in zip(got["nll_sum"], want))
        expect(rel <= 1e-6, tag + ": NLL relative error %.3g > 1e-6" % rel)
        err = np.abs(logits - want_logits).max()
        expect(err <= 1e-4, tag + ": logits max abs error %.3g > 1e-4" % err)
        doc2, _ = run_eval(ck2, ppath, form, attention, "fp32", tag + "-gain")
        for g1, g2, w1, w2 in zip(got["nll_sum"], doc2["result"]["sequences"]["nll_sum"], want, want2):
            d_ours, d_ref = g2 - g1, w2[0] - w1[0]
            expect(abs(d_ours - d_ref) <= 1e-6 * abs(w1[0]) + 1e-9,
                   tag + ": gain change moved NLL by %.9g, reference by %.9g" % (d_ours, d_ref))


def cpu_flags():
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def isa_limit():
    return os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or ""


def native_runs():
    """libtorch's own bf16 products run unless it hands them to oneDNN (an AVX-512 CPU) and oneDNN is
    held below AVX-512, where it has none (products.h, written again here from the rule)."""
    cap = isa_limit().upper()
    avx512 = {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= cpu_flags()
    return not (avx512 and (cap in ("SSE41", "AVX") or cap.startswith("AVX2")))


def check_bf16(ck, ppath, form, shape, sd, cfg, rs):
    """Every attention path under both bf16 product kernels, each within the rounding bound."""
    want, bound = bf16_bounds(sd, cfg, rs)
    got = {}
    kernels = ["fp32-accumulate"]
    if native_runs():
        kernels.append("native")
    else:  # asked for anyway: a clear refusal, not libtorch's "primitive descriptor" exception
        tag = "%s-%s-bf16-native-refused" % (shape[0], form)
        try:
            run_eval(ck, ppath, form, "masked", "bf16", tag, "native", stderr=subprocess.PIPE)
            expect(False, tag + ": native bf16 products ran under " + isa_limit())
        except subprocess.CalledProcessError as e:
            expect(e.returncode == 2 and b"holds oneDNN below AVX-512" in e.stderr,
                   tag + ": exit %d (expected 2 naming the ISA limit): %s" % (e.returncode, e.stderr.decode(errors="replace").strip()))
    # every path under every kernel, and the default path a row at a time (a pass of 1 row against
    # one of 3: the same sums in another order, each within the bound of the exact value)
    runs = [(p, a, 3) for p in kernels + [None] for a in PATHS] + [(p, "auto", 1) for p in kernels]
    for products, a, batch in runs:
        tag = "%s-%s-%s-bf16-%s-b%d" % (shape[0], form, a, products or "default", batch)
        doc = run_eval(ck, ppath, form, a, "bf16", tag, products, batch=batch)[0]
        chosen = doc["model"]["products"]["bf16"]
        if products:
            expect(chosen == products, tag + ": products kernel reported")
        else:  # the default: native only with the CPU's bf16 instructions and oneDNN allowed them
            fast = {"avx512_bf16", "amx_bf16"} & cpu_flags()
            cap = isa_limit().upper()
            allowed = cap in ("", "ALL") or any(k in cap for k in ("BF16", "AMX", "FP16")) or cap.startswith("AVX10")
            expect(chosen == ("native" if fast and allowed else "fp32-accumulate"),
                   "%s: default kernel %s (%s)" % (tag, chosen, doc["model"]["products"]["reason"]))
        got[tag] = doc["result"]["sequences"]["nll_sum"]
        worst = max(abs(g - w) / b for g, w, b in zip(got[tag], want, bound))
        expect(worst <= 1.0, "%s: |NLL - exact| is %.3g of the rounding bound (bounds %s)"
               % (tag, worst, ["%.3g" % b for b in bound]))
    print("%s %s bf16: rounding bounds %.3g..%.3g nats; worst |NLL - exact| / bound %.3f"
          % (shape[0], form, min(bound), max(bound), max(abs(g - w) / b for v in got.values() for g, w, b in zip(v, want, bound))))


def main():
    for shape in SHAPES:
        sd, preset, cfg = make(shape)
        ck = os.path.join(work, shape[0] + ".pt")
        torch.save(sd, ck)
        ppath = os.path.join(work, shape[0] + ".preset.json")
        json.dump(preset, open(ppath, "w"))
        # the same checkpoint with one gain changed
        sd2 = collections.OrderedDict(sd)
        qn = OMN_NAMES["q_norm"].replace("{i}", "0")
        sd2[qn] = sd[qn] * 0.5
        ck2 = os.path.join(work, shape[0] + "-gain.pt")
        torch.save(sd2, ck2)
        ref, ref2 = Reference(sd, cfg), Reference(sd2, cfg)
        forms = ("packed", "per-document", "historical")
        for form in forms:
            rs = rows(form)
            if not BF16_ONLY:
                check_fp32(ck, ck2, ppath, form, shape, ref, ref2, rs)
            if ALL_FORMS or form == forms[SHAPES.index(shape) % len(forms)]:
                check_bf16(ck, ppath, form, shape, sd, cfg, rs)

    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
