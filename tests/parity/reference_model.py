#!/usr/bin/python3
"""An independent reference of the OMN architecture in plain PyTorch, written from the architecture
description (seed audit 000, issue 5), not from omn-audit's C++:

  u = RMSNorm(h)                      pre-norm block (OLMo2: post-norm)
  q, k, v = u Wq^T, u Wk^T, u Wv^T
  q = RMSNorm_q(q), k = RMSNorm_k(k)  over the head (or the whole projection), eps, float32, gain
  q, k = RoPE(q), RoPE(k)             after the norm; positions restart at each document
  k, v repeated to the query heads    GQA
  a = softmax(q k^T / sqrt(d) + causal, same-document mask) v
  h = h + a Wo^T
  h = h + W2 (silu(gate) * up)        SwiGLU, gate rows first when fused
  logits = RMSNorm(h) Wout^T

Used by the parity tests and tools/bench/bench-eval.sh.
"""
import math

import torch


class Arithmetic:
    """Where the reference rounds, and how.

    A real dtype (float32, bfloat16): torch rounds each op's output to it; norms, RoPE and the
    attention scores run in float32 (acc) and are cast back (work), as the architecture says.
    exact(): float64 throughout, no rounding anywhere: the value a rounding-free machine computes.
    mca(u, seed): Monte Carlo arithmetic (Parker 1997, as Verificarlo runs it) in float64: every
    value the working dtype would round, and every value a kernel may round (extra), is multiplied
    by (1 + d), d uniform in [-u, u]. With u the working dtype's unit roundoff (bf16: 2^-8) the
    spread of its results over seeds bounds the rounding error a real run in that dtype makes,
    whatever the CPU's kernels sum in which order (tests/parity/check_parity.py).
    """

    def __init__(self, dtype=torch.float32, acc=torch.float32, u=0.0, seed=None):
        self.dtype, self.acc, self.u = dtype, acc, u
        self.gen = torch.Generator().manual_seed(seed) if seed is not None else None

    @classmethod
    def exact(cls):
        return cls(torch.float64, torch.float64)

    @classmethod
    def mca(cls, u, seed):
        return cls(torch.float64, torch.float64, u, seed)

    def _perturb(self, x):
        d = (torch.rand(x.shape, generator=self.gen, dtype=torch.float64) * 2 - 1) * self.u
        return x * (1 + d)

    def work(self, x):
        """A value stored in the working dtype."""
        return self._perturb(x) if self.gen is not None else x.to(self.dtype)

    def extra(self, x):
        """A value a bf16 kernel may round that the real-dtype reference keeps in float32."""
        return self._perturb(x) if self.gen is not None else x


def rms_norm(x, w, eps, cast, one_plus=False, ar=None):
    ar = ar or Arithmetic(x.dtype)
    xf = x.to(ar.acc)
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    g = (w.to(ar.acc) + 1.0) if one_plus else w.to(ar.acc)
    if cast == "multiply_then_cast":
        return ar.work(xf * g)
    return ar.work(ar.work(xf) * ar.work(g))


def rope(x, pos, theta, style, ar=None):
    # x [T, H, D], pos [T]
    ar = ar or Arithmetic(x.dtype)
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    ang = pos.double()[:, None] * inv[None, :]            # [T, D/2]
    cos, sin = ang.cos().to(ar.acc)[:, None, :], ang.sin().to(ar.acc)[:, None, :]
    xf = x.to(ar.acc)
    if style == "rotate_half":
        a, b = xf[..., : d // 2], xf[..., d // 2:]
        out = torch.cat([a * cos - b * sin, b * cos + a * sin], -1)
    else:  # interleaved pairs (2i, 2i+1)
        a, b = xf[..., 0::2], xf[..., 1::2]
        out = torch.stack([a * cos - b * sin, b * cos + a * sin], -1).flatten(-2)
    return ar.work(out)


class Reference:
    def __init__(self, sd, cfg, dtype=torch.float32, bypass=(), arithmetic=None, weights_dtype=None):
        """dtype: a real working dtype; or arithmetic (Arithmetic.exact() / .mca()) in float64 on
        the weights as stored in weights_dtype (bf16: what `omn-audit --dtype bf16` multiplies)."""
        self.ar = arithmetic or Arithmetic(dtype)
        wd = weights_dtype or self.ar.dtype
        self.sd = {k: v.to(wd).to(self.ar.dtype) for k, v in sd.items()}
        self.c = cfg
        self.dtype = self.ar.dtype
        self.bypass = set(bypass)  # (layer, "q" | "k"): that normalisation removed (intervene's bypass)

    def w(self, role, i=None):
        name = self.c["tensors"][role]
        return self.sd[name.replace("{i}", str(i))] if i is not None else self.sd[name]

    def forward(self, tokens, doc):
        """tokens [T] int64, doc [T] document id per token -> logits [T, V] float32 (float64 in exact/MCA arithmetic)."""
        c = self.c
        T = tokens.shape[0]
        hd, nh, nkv = c["head_dim"], c["n_heads"], c["n_kv_heads"]
        pos = torch.zeros(T, dtype=torch.long)
        for t in range(1, T):
            pos[t] = 0 if doc[t] != doc[t - 1] else pos[t - 1] + 1
        mask = (doc[:, None] == doc[None, :]) & (torch.arange(T)[None, :] <= torch.arange(T)[:, None])
        ar = self.ar
        h = self.w("embedding")[tokens]
        cast, eps, qeps = c["norm_cast"], c["norm_eps"], c["qk_norm_eps"]
        post = c.get("norm_placement", "pre") == "post"
        for i in range(c["n_layers"]):
            u = h if post else rms_norm(h, self.w("attention_norm", i), eps, cast, ar=ar)
            q = ar.work(u @ self.w("wq", i).t())
            k = ar.work(u @ self.w("wk", i).t())
            v = ar.work(u @ self.w("wv", i).t())
            if not c.get("qk_norm", True):  # a model trained without QK-norm: no gains, no normalisation
                q, k = q.view(T, nh, hd), k.view(T, nkv, hd)
            elif c["qk_layout"] == "projection":
                q = rms_norm(q, self.w("q_norm", i), qeps, c["qk_norm_cast"], c["one_plus"], ar)
                k = rms_norm(k, self.w("k_norm", i), qeps, c["qk_norm_cast"], c["one_plus"], ar)
                q, k = q.view(T, nh, hd), k.view(T, nkv, hd)
            else:
                q = rms_norm(q.view(T, nh, hd), self.w("q_norm", i), qeps, c["qk_norm_cast"], c["one_plus"], ar)
                k = rms_norm(k.view(T, nkv, hd), self.w("k_norm", i), qeps, c["qk_norm_cast"], c["one_plus"], ar)
            if (i, "q") in self.bypass:
                q = ar.work(u @ self.w("wq", i).t()).view(T, nh, hd)
            if (i, "k") in self.bypass:
                k = ar.work(u @ self.w("wk", i).t()).view(T, nkv, hd)
            v = v.view(T, nkv, hd)
            q, k = rope(q, pos, c["rope_theta"], c["rope_style"], ar), rope(k, pos, c["rope_theta"], c["rope_style"], ar)
            rep = nh // nkv
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            s = ar.extra(torch.einsum("qhd,khd->hqk", q.to(ar.acc), k.to(ar.acc))) / math.sqrt(hd)
            s = s.masked_fill(~mask[None], float("-inf"))
            a = ar.work(torch.einsum("hqk,khd->qhd", ar.extra(s.softmax(-1)), v.to(ar.acc))).reshape(T, nh * hd)
            o = ar.work(a @ self.w("wo", i).t())
            h = ar.work(h + (rms_norm(o, self.w("post_attention_norm", i), eps, cast, ar=ar) if post else o))
            u = h if post else rms_norm(h, self.w("ffn_norm", i), eps, cast, ar=ar)
            if "w13" in c["tensors"]:
                gu = ar.work(u @ self.w("w13", i).t())
                g, up = gu[..., : gu.shape[-1] // 2], gu[..., gu.shape[-1] // 2:]
            else:
                g, up = ar.work(u @ self.w("w1", i).t()), ar.work(u @ self.w("w3", i).t())
            f = ar.work(ar.work(ar.work(torch.nn.functional.silu(g)) * up) @ self.w("w2", i).t())
            h = ar.work(h + (rms_norm(f, self.w("post_ffn_norm", i), eps, cast, ar=ar) if post else f))
        h = rms_norm(h, self.w("final_norm"), eps, cast, ar=ar)
        out = self.w("embedding") if c.get("tied_output") else self.w("output")
        z = ar.work(h @ out.t())
        return z if z.dtype == torch.float64 else z.float()

    def nll(self, tokens, doc):
        """Sum of next-token NLL within documents, and the number of scored tokens."""
        logits = self.forward(tokens, doc)
        lp = torch.log_softmax(logits[:-1], -1)
        tgt = tokens[1:]
        keep = doc[1:] == doc[:-1]
        nll = -lp.gather(-1, tgt[:, None])[:, 0]
        return nll[keep].double().sum().item(), int(keep.sum().item())
