#!/usr/bin/python3
"""Helper of tools/bench/bench-eval.sh: writes the benchmark model and tokens, times the Python reference
on the same rows, and measures the machine's matrix-product peaks.

  bench_eval.py setup DIR            -> DIR/model.pt, DIR/preset.json, DIR/tokens.bin
  bench_eval.py reference DIR DTYPE THREADS NSEQ SEQ -> prints tokens/s
  bench_eval.py peak DTYPE THREADS   -> prints GFLOP/s of a 2048^3 matrix product
  bench_eval.py flops DIR SEQ        -> prints FLOPs per scored token of one forward
"""
import collections
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "parity"))
from reference_model import Reference  # noqa: E402

L, D, NH, NKV, HD, F, V = 4, 512, 8, 2, 64, 1365, 32768
NAMES = {"embedding": "tok_embeddings.weight", "attention_norm": "layers.{i}.attention_norm.weight",
         "wq": "layers.{i}.attention.wq.weight", "wk": "layers.{i}.attention.wk.weight",
         "wv": "layers.{i}.attention.wv.weight", "wo": "layers.{i}.attention.wo.weight",
         "q_norm": "layers.{i}.attention.q_norm.weight", "k_norm": "layers.{i}.attention.k_norm.weight",
         "ffn_norm": "layers.{i}.ffn_norm.weight", "w13": "layers.{i}.feed_forward.w13.weight",
         "w2": "layers.{i}.feed_forward.w2.weight", "final_norm": "norm.weight", "output": "output.weight"}
CFG = {"tensors": NAMES, "head_dim": HD, "n_heads": NH, "n_kv_heads": NKV, "n_layers": L, "norm_eps": 1e-6,
       "qk_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_style": "rotate_half", "norm_cast": "multiply_then_cast",
       "qk_norm_cast": "multiply_then_cast", "qk_layout": "head", "one_plus": False}
EOS = 0


def setup(d):
    os.makedirs(d, exist_ok=True)
    g = torch.Generator().manual_seed(0)
    sd = collections.OrderedDict()

    def r(*s):
        return (torch.randn(*s, generator=g) / s[-1] ** 0.5).to(torch.bfloat16)
    sd[NAMES["embedding"]] = torch.randn(V, D, generator=g).to(torch.bfloat16)
    for i in range(L):
        def n(x):
            return NAMES[x].replace("{i}", str(i))
        sd[n("attention_norm")] = torch.ones(D, dtype=torch.bfloat16)
        sd[n("ffn_norm")] = torch.ones(D, dtype=torch.bfloat16)
        sd[n("wq")], sd[n("wk")], sd[n("wv")] = r(NH * HD, D), r(NKV * HD, D), r(NKV * HD, D)
        sd[n("wo")] = r(D, NH * HD)
        sd[n("q_norm")] = (torch.rand(HD, generator=g) * 4).to(torch.bfloat16)
        sd[n("k_norm")] = (torch.rand(HD, generator=g) * 4).to(torch.bfloat16)
        sd[n("w13")] = r(2 * F, D)
        sd[n("w2")] = r(D, F)
    sd[NAMES["final_norm"]] = torch.ones(D, dtype=torch.bfloat16)
    sd[NAMES["output"]] = r(V, D)
    torch.save(sd, os.path.join(d, "model.pt"))
    preset = {"schema": "omn-audit/preset@1", "name": "bench", "tensors": NAMES,
              "gain": {"parametrisation": "direct", "layout": "head"},
              "architecture": {"norm_eps": 1e-6, "qk_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_style": "rotate_half"}}
    json.dump(preset, open(os.path.join(d, "preset.json"), "w"))
    rng = np.random.default_rng(0)
    t = rng.integers(1, V, size=200000).astype(np.uint16)
    t[rng.integers(0, len(t), size=400)] = EOS
    t.tofile(os.path.join(d, "tokens.bin"))


def reference(d, dtype, threads, nseq, seq):
    torch.set_num_threads(threads)
    sd = torch.load(os.path.join(d, "model.pt"))
    ref = Reference(sd, CFG, dtype=torch.bfloat16 if dtype == "bf16" else torch.float32)
    t = np.fromfile(os.path.join(d, "tokens.bin"), dtype=np.uint16).astype(np.int64)
    docid = np.cumsum(np.concatenate([[0], (t[:-1] == EOS).astype(np.int64)]))
    scored = 0
    with torch.inference_mode():
        ref.nll(torch.tensor(t[:seq]), torch.tensor(docid[:seq]))  # warm-up
        start = time.perf_counter()
        for i in range(nseq):
            _, n = ref.nll(torch.tensor(t[i * seq:(i + 1) * seq]), torch.tensor(docid[i * seq:(i + 1) * seq]))
            scored += n
        secs = time.perf_counter() - start
    print("%.1f" % (scored / secs))


def peak(dtype, threads):
    torch.set_num_threads(threads)
    dt = torch.bfloat16 if dtype == "bf16" else torch.float32
    a, b = torch.randn(2048, 2048).to(dt), torch.randn(2048, 2048).to(dt)
    a @ b
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 2.0:
        a @ b
        n += 1
    print("%.1f" % (n * 2 * 2048 ** 3 / (time.perf_counter() - start) / 1e9))


def flops(seq):
    # matrix products per token (2 FLOPs per multiply-add), attention averaged over a causal row
    per_layer = 2 * D * (NH * HD + 2 * NKV * HD) + 2 * NH * HD * D + 2 * D * 2 * F + 2 * F * D
    attn = 2 * 2 * NH * HD * (seq / 2)
    print("%.0f" % (L * (per_layer + attn) + 2 * D * V))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "setup":
        setup(sys.argv[2])
    elif cmd == "reference":
        reference(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    elif cmd == "peak":
        peak(sys.argv[2], int(sys.argv[3]))
    elif cmd == "flops":
        flops(int(sys.argv[3]))
