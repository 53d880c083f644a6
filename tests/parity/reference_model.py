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

Used by the parity tests and tools/bench-eval.sh.
"""
import math

import torch


def rms_norm(x, w, eps, cast, one_plus=False):
    dt = x.dtype
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    g = (w.float() + 1.0) if one_plus else w.float()
    if cast == "multiply_then_cast":
        return (xf * g).to(dt)
    return xf.to(dt) * (g.to(dt))


def rope(x, pos, theta, style):
    # x [T, H, D], pos [T]
    d = x.shape[-1]
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    ang = pos.double()[:, None] * inv[None, :]            # [T, D/2]
    cos, sin = ang.cos().float()[:, None, :], ang.sin().float()[:, None, :]
    xf = x.float()
    if style == "rotate_half":
        a, b = xf[..., : d // 2], xf[..., d // 2:]
        out = torch.cat([a * cos - b * sin, b * cos + a * sin], -1)
    else:  # interleaved pairs (2i, 2i+1)
        a, b = xf[..., 0::2], xf[..., 1::2]
        out = torch.stack([a * cos - b * sin, b * cos + a * sin], -1).flatten(-2)
    return out.to(x.dtype)


class Reference:
    def __init__(self, sd, cfg, dtype=torch.float32, bypass=()):
        self.sd = {k: v.to(dtype) for k, v in sd.items()}
        self.c = cfg
        self.dtype = dtype
        self.bypass = set(bypass)  # (layer, "q" | "k"): that normalisation removed (intervene's bypass)

    def w(self, role, i=None):
        name = self.c["tensors"][role]
        return self.sd[name.replace("{i}", str(i))] if i is not None else self.sd[name]

    def forward(self, tokens, doc):
        """tokens [T] int64, doc [T] document id per token -> logits [T, V] float32."""
        c = self.c
        T = tokens.shape[0]
        hd, nh, nkv = c["head_dim"], c["n_heads"], c["n_kv_heads"]
        pos = torch.zeros(T, dtype=torch.long)
        for t in range(1, T):
            pos[t] = 0 if doc[t] != doc[t - 1] else pos[t - 1] + 1
        mask = (doc[:, None] == doc[None, :]) & (torch.arange(T)[None, :] <= torch.arange(T)[:, None])
        h = self.w("embedding")[tokens]
        cast, eps, qeps = c["norm_cast"], c["norm_eps"], c["qk_norm_eps"]
        post = c.get("norm_placement", "pre") == "post"
        for i in range(c["n_layers"]):
            u = h if post else rms_norm(h, self.w("attention_norm", i), eps, cast)
            q = u @ self.w("wq", i).t()
            k = u @ self.w("wk", i).t()
            v = u @ self.w("wv", i).t()
            if not c.get("qk_norm", True):  # a model trained without QK-norm: no gains, no normalisation
                q, k = q.view(T, nh, hd), k.view(T, nkv, hd)
            elif c["qk_layout"] == "projection":
                q = rms_norm(q, self.w("q_norm", i), qeps, c["qk_norm_cast"], c["one_plus"])
                k = rms_norm(k, self.w("k_norm", i), qeps, c["qk_norm_cast"], c["one_plus"])
                q, k = q.view(T, nh, hd), k.view(T, nkv, hd)
            else:
                q = rms_norm(q.view(T, nh, hd), self.w("q_norm", i), qeps, c["qk_norm_cast"], c["one_plus"])
                k = rms_norm(k.view(T, nkv, hd), self.w("k_norm", i), qeps, c["qk_norm_cast"], c["one_plus"])
            if (i, "q") in self.bypass:
                q = (u @ self.w("wq", i).t()).view(T, nh, hd)
            if (i, "k") in self.bypass:
                k = (u @ self.w("wk", i).t()).view(T, nkv, hd)
            v = v.view(T, nkv, hd)
            q, k = rope(q, pos, c["rope_theta"], c["rope_style"]), rope(k, pos, c["rope_theta"], c["rope_style"])
            rep = nh // nkv
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
            s = torch.einsum("qhd,khd->hqk", q.float(), k.float()) / math.sqrt(hd)
            s = s.masked_fill(~mask[None], float("-inf"))
            a = torch.einsum("hqk,khd->qhd", s.softmax(-1), v.float()).to(h.dtype).reshape(T, nh * hd)
            o = a @ self.w("wo", i).t()
            h = h + (rms_norm(o, self.w("post_attention_norm", i), eps, cast) if post else o)
            u = h if post else rms_norm(h, self.w("ffn_norm", i), eps, cast)
            if "w13" in c["tensors"]:
                gu = u @ self.w("w13", i).t()
                g, up = gu[..., : gu.shape[-1] // 2], gu[..., gu.shape[-1] // 2:]
            else:
                g, up = u @ self.w("w1", i).t(), u @ self.w("w3", i).t()
            f = (torch.nn.functional.silu(g) * up) @ self.w("w2", i).t()
            h = h + (rms_norm(f, self.w("post_ffn_norm", i), eps, cast) if post else f)
        h = rms_norm(h, self.w("final_norm"), eps, cast)
        out = self.w("embedding") if c.get("tied_output") else self.w("output")
        return (h @ out.t()).float()

    def nll(self, tokens, doc):
        """Sum of next-token NLL within documents, and the number of scored tokens."""
        logits = self.forward(tokens, doc)
        lp = torch.log_softmax(logits[:-1], -1)
        tgt = tokens[1:]
        keep = doc[1:] == doc[:-1]
        nll = -lp.gather(-1, tgt[:, None])[:, 0]
        return nll[keep].double().sum().item(), int(keep.sum().item())
