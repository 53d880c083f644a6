#!/usr/bin/python3
"""The baseline of tools/bench/bench-train.sh: a plain-PyTorch eager training loop of the model
`omn-audit train` trains (the same architecture, batch, sequence length, dtype, threads and
optimizers), written the way a researcher would write it (nn.Module, autograd, torch.optim.AdamW
and a Muon step). Prints tokens/s over the timed steps.

  bench_train.py loop CONFIG.json CORPUS_DIR THREADS STEPS   -> tokens/s
  bench_train.py gemm CONFIG.json CORPUS_DIR THREADS STEPS   -> the loop's seconds per step in matrix
      products (torch.profiler self time of mm/addmm/bmm), its seconds per step unprofiled, and the
      bound that leaves any implementation on the same kernels: step / products
  bench_train.py flops CONFIG.json VOCAB                     -> FLOPs per trained token (6N + attention)
  bench_train.py peak THREADS                                -> fp32 matmul GFLOP/s
"""
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as Fn


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        D, H, KV, HD, F = c["d_model"], c["n_heads"], c["n_kv_heads"], c["head_dim"], c["ffn_hidden"]
        self.c = c
        self.attention_norm = torch.nn.Parameter(torch.ones(D))
        self.wq = torch.nn.Parameter(torch.randn(H * HD, D) * 0.02)
        self.wk = torch.nn.Parameter(torch.randn(KV * HD, D) * 0.02)
        self.wv = torch.nn.Parameter(torch.randn(KV * HD, D) * 0.02)
        self.wo = torch.nn.Parameter(torch.randn(D, H * HD) * 0.02)
        self.q_norm = torch.nn.Parameter(torch.ones(HD))
        self.k_norm = torch.nn.Parameter(torch.ones(HD))
        self.ffn_norm = torch.nn.Parameter(torch.ones(D))
        self.w13 = torch.nn.Parameter(torch.randn(2 * F, D) * 0.02)
        self.w2 = torch.nn.Parameter(torch.randn(D, F) * 0.02)


def rms(x, g, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g


def rope(x, cos, sin):
    d = x.shape[-1] // 2
    a, b = x[..., :d], x[..., d:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)


class Model(torch.nn.Module):
    def __init__(self, c, V):
        super().__init__()
        self.c = c
        self.emb = torch.nn.Parameter(torch.randn(V, c["d_model"]) * 0.02)
        self.blocks = torch.nn.ModuleList([Block(c) for _ in range(c["n_layers"])])
        self.norm = torch.nn.Parameter(torch.ones(c["d_model"]))
        self.out = torch.nn.Parameter(torch.randn(V, c["d_model"]) * 0.02)

    def forward(self, tok, doc):
        c = self.c
        B, T = tok.shape
        H, KV, HD = c["n_heads"], c["n_kv_heads"], c["head_dim"]
        start = torch.cat([torch.ones(B, 1, dtype=torch.bool), doc[:, 1:] != doc[:, :-1]], 1)
        idx = torch.arange(T).expand(B, T)
        pos = idx - torch.cummax(torch.where(start, idx, torch.zeros_like(idx)), 1).values
        inv = 1.0 / (c.get("rope_theta", 10000.0) ** (torch.arange(0, HD, 2, dtype=torch.float64) / HD))
        ang = pos.double()[..., None] * inv
        cos, sin = ang.cos().float()[:, :, None, :], ang.sin().float()[:, :, None, :]
        mask = ((doc[:, :, None] == doc[:, None, :]) & torch.ones(T, T, dtype=torch.bool).tril())[:, None]
        h = self.emb[tok]
        for b in self.blocks:
            u = rms(h, b.attention_norm)
            q = rms((u @ b.wq.t()).view(B, T, H, HD), b.q_norm)
            k = rms((u @ b.wk.t()).view(B, T, KV, HD), b.k_norm)
            v = (u @ b.wv.t()).view(B, T, KV, HD)
            q, k = rope(q, cos, sin), rope(k, cos, sin)
            k, v = k.repeat_interleave(H // KV, 2), v.repeat_interleave(H // KV, 2)
            s = (q.transpose(1, 2) @ k.transpose(1, 2).transpose(-2, -1)) / math.sqrt(HD)
            s = s.masked_fill(~mask, float("-inf"))
            a = (s.softmax(-1) @ v.transpose(1, 2)).transpose(1, 2).reshape(B, T, H * HD)
            h = h + a @ b.wo.t()
            gu = rms(h, b.ffn_norm) @ b.w13.t()
            g, up = gu.chunk(2, -1)
            h = h + (Fn.silu(g) * up) @ b.w2.t()
        return rms(h, self.norm) @ self.out.t()


def muon_(p, m, lr, beta=0.95):
    m.lerp_(p.grad, 1 - beta)
    X = p.grad.lerp(m, beta)
    tall = X.size(0) > X.size(1)
    X = X.T if tall else X
    X = X / (X.norm() + 1e-7)
    for _ in range(5):
        A = X @ X.T
        X = 3.4445 * X + (-4.7750 * A + 2.0315 * A @ A) @ X
    X = X.T if tall else X
    p.add_(X, alpha=-lr * max(1, p.size(0) / p.size(1)) ** 0.5)


def loop(config, corpus, threads, steps, profiler=None):
    torch.set_num_threads(threads)
    cfg = json.load(open(config))
    c = cfg["model"]
    meta = json.load(open(corpus + "/corpus.json"))
    V, EOS = meta["tokenizer"]["vocab_size"], meta["tokenizer"]["eos_id"]
    stream = torch.from_numpy(np.fromfile(corpus + "/train.bin", dtype=np.uint16).astype(np.int64))
    model = Model(c, V)
    hidden = [p for n, p in model.named_parameters() if p.dim() == 2 and n.startswith("blocks")]
    other = [p for n, p in model.named_parameters() if not (p.dim() == 2 and n.startswith("blocks"))]
    adam = torch.optim.AdamW(other, lr=cfg["optimizer"]["lr"], betas=(0.9, 0.95), eps=1e-8, weight_decay=0.0)
    moms = [torch.zeros_like(p) for p in hidden]
    B, T = cfg["batch_size"], cfg["seq_len"]
    g = torch.Generator().manual_seed(0)
    timed = 0.0
    for step in range(steps):
        if profiler is not None and step == 3:  # the timed steps only
            profiler.__enter__()
        t0 = time.perf_counter()
        off = torch.randint(0, len(stream) - T, (B,), generator=g)
        tok = torch.stack([stream[o:o + T] for o in off.tolist()])
        doc = torch.cat([torch.zeros(B, 1, dtype=torch.long), (tok[:, :-1] == EOS).long().cumsum(1)], 1)
        logits = model(tok, doc)
        tgt = torch.where(doc[:, 1:] == doc[:, :-1], tok[:, 1:], torch.full_like(tok[:, 1:], -100))
        loss = Fn.cross_entropy(logits[:, :-1].reshape(-1, V), tgt.reshape(-1), ignore_index=-100)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        adam.step()
        with torch.no_grad():
            for p, m in zip(hidden, moms):
                muon_(p, m, cfg["optimizer"]["muon_lr"])
        model.zero_grad(set_to_none=True)
        if step >= 3:  # warm-up steps untimed
            timed += time.perf_counter() - t0
    if profiler is not None:
        profiler.__exit__(None, None, None)
    return (steps - 3) * B * T / timed


GEMM_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addmv", "aten::mv", "aten::dot")


def gemm(config, corpus, threads, steps):
    """The share of the eager loop's step spent in matrix products: what no implementation on the
    same kernels can remove, so 1 / share bounds its speed-up over this loop."""
    cfg = json.load(open(config))
    tokens_per_step = cfg["batch_size"] * cfg["seq_len"]
    step_s = tokens_per_step / loop(config, corpus, threads, steps)
    prof = torch.autograd.profiler.profile()
    loop(config, corpus, threads, steps, prof)
    gemm_us = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in GEMM_OPS)
    gemm_s = gemm_us / 1e6 / (steps - 3)  # the steps after the 3 warm-up steps, as loop() times them
    print("%.4f %.4f %.2f" % (gemm_s, step_s, step_s / gemm_s))


def flops(config, V):
    cfg = json.load(open(config))
    c, T = cfg["model"], cfg["seq_len"]
    D, H, KV, HD, F, L = c["d_model"], c["n_heads"], c["n_kv_heads"], c["head_dim"], c["ffn_hidden"], c["n_layers"]
    n = L * (D * (H * HD + 2 * KV * HD) + H * HD * D + 3 * D * F) + D * V  # matrix parameters a token passes
    attn = L * 2 * 2 * H * HD * (T / 2)  # scores and weighted values, forward, causal average
    print("%.0f" % (6 * n + 3 * attn))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "loop":
        print("%.1f" % loop(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
    elif cmd == "gemm":
        gemm(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif cmd == "flops":
        flops(sys.argv[2], int(sys.argv[3]))
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_eval import peak  # the one matmul-peak measurement of the benchmarks
        peak("fp32", int(sys.argv[2]))
