#!/usr/bin/python3
"""The trainer against independent references (Debian's python3-torch), on a corpus built by
`omn-audit corpus` from small generated documents:

  check_train.py OMN_AUDIT WORKDIR

For QK-norm on and off, from the same Python-written initial weights:
  * the first step's loss and every gradient equal PyTorch autograd's on reference_model.py
    (same weights, same batch: the batch offsets are in the run's log), within 1e-5 relative;
  * one AdamW step (torch.optim.AdamW) and one Muon step (muon_update written here from
    KellerJordan/Muon) applied to those gradients give the weights of checkpoints/step-000001.pt;
  * final.pt loads with torch.load(weights_only=True) and its held-out loss under the reference
    equals `omn-audit eval`'s on the same rows;
  * QK-off: profile refuses with exit 2 ("no Q/K gains"), intervene refuses gain ops, eval scores it.
Then: a run killed with SIGKILL after a checkpoint and resumed gives bitwise the final weights of an
uninterrupted run; and bad input ends in exit 2/4 naming the place, with nothing overwritten.
"""
import collections
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Harness, write_corpus_config  # noqa: E402
from reference_model import Reference  # noqa: E402

omn, work = sys.argv[1], sys.argv[2]
h = Harness(omn, work)
check, run, env = h.check, h.run, h.env


# --- a corpus: generated documents with learnable structure --------------------------------------
cconf = write_corpus_config(work)
run("corpus", "--config", cconf, "--out", os.path.join(work, "data"))
corpus = json.load(open(os.path.join(work, "data", "corpus.json")))
V, EOS = corpus["tokenizer"]["vocab_size"], corpus["tokenizer"]["eos_id"]
heldout_docs = {d["name"] for d in corpus["documents"] if d["split"] == "heldout"}
check(0 < len(heldout_docs) < 40, "corpus: a document-level held-out split (%d of 40 held out)" % len(heldout_docs))
train_stream = np.fromfile(os.path.join(work, "data", "train.bin"), dtype=np.uint16).astype(np.int64)
held_stream = np.fromfile(os.path.join(work, "data", "heldout.bin"), dtype=np.uint16).astype(np.int64)
# rebuilt on 1 thread and on 3: the same bytes (SentencePiece records its thread count in the model;
# the corpus drops it, so a tokenizer revision does not depend on the machine's cores)
for threads in ("1", "3"):
    run("corpus", "--config", cconf, "--out", os.path.join(work, "data-t" + threads), "--threads", threads)
    same = all(open(os.path.join(work, "data", f), "rb").read() == open(os.path.join(work, "data-t" + threads, f), "rb").read()
               for f in ("train.bin", "heldout.bin", "tokenizer.model"))
    check(same, "corpus: rebuilding on %s thread(s) gives the same tokenizer and token streams byte for byte" % threads)
uconf = os.path.join(work, "corpus-unigram.json")  # unigram's EM sums per thread: it must not depend on them either
json.dump(dict(json.load(open(cconf)), tokenizer={"vocab_size": 300, "model_type": "unigram"}), open(uconf, "w"))
for threads in ("1", "3"):
    run("corpus", "--config", uconf, "--out", os.path.join(work, "data-u" + threads), "--threads", threads)
check(all(open(os.path.join(work, "data-u1", f), "rb").read() == open(os.path.join(work, "data-u3", f), "rb").read()
          for f in ("train.bin", "heldout.bin", "tokenizer.model")),
      "corpus: a unigram tokenizer built on 1 and on 3 threads, byte for byte the same")
# documents tokenized in 16-byte pieces (cut after a line break or a space; a longer word, ASCII or
# multi-byte UTF-8, is never cut): the same streams as whole documents (the default piece, 1 MiB,
# holds each of these documents whole), for BPE and unigram
ltext = os.path.join(work, "text-long-words")
shutil.rmtree(ltext, ignore_errors=True)
shutil.copytree(os.path.join(work, "text"), ltext)
for i in range(12):
    open(os.path.join(ltext, "long-%02d.txt" % i), "w", encoding="utf-8").write(
        ("supercalifragilisticexpialidocious Überstraßenbahnhaltestellenüberdachung\n" * 3 +
         "antidisestablishmentarianism, floccinaucinihilipilification. ") * (i + 1) + "\n")
for model in ("bpe", "unigram"):
    base = dict(json.load(open(cconf)), inputs=[ltext], tokenizer={"vocab_size": 300, "model_type": model})
    outs = []
    for piece in (None, 16):
        kconf = os.path.join(work, "corpus-chunked.json")
        json.dump(base if piece is None else dict(base, encode_chunk_bytes=piece), open(kconf, "w"))
        outs.append(os.path.join(work, "data-long-%s-%s" % (model, piece)))
        run("corpus", "--config", kconf, "--out", outs[-1], "--force")
    cj = json.load(open(os.path.join(outs[0], "corpus.json")))
    same = all(open(os.path.join(outs[0], f), "rb").read() == open(os.path.join(outs[1], f), "rb").read()
               for f in ("train.bin", "heldout.bin", "tokenizer.model"))
    check(same and max(d["bytes"] for d in cj["documents"]) < 2 ** 20 and cj["train"]["n_tokens"] > 1000,
          "corpus (%s): 16-byte pieces give the whole-document token streams, byte for byte, long words included" % model)
here = os.path.dirname(os.path.abspath(__file__))
schema_dir = os.path.join(here, "..", "..", "docs", "schema")
check(subprocess.run([sys.executable, os.path.join(here, "..", "interop", "check_schema.py"), schema_dir, "corpus.schema.json",
                      os.path.join(work, "data", "corpus.json")]).returncode == 0,
      "corpus: corpus.json validates against docs/schema/corpus.schema.json")

# corpus: bad input ends in exit 2 naming the place; an existing corpus is not overwritten
def bad_corpus(conf, want, out="data-bad"):
    p = os.path.join(work, "bad-corpus.json")
    json.dump(conf, open(p, "w"))
    r = run("corpus", "--config", p, "--out", os.path.join(work, out), expect=2)
    check(want in r.stderr, "corpus bad input: %s -> exit 2" % want)


good = json.load(open(cconf))
bad_corpus(dict(good, colour=1), "/colour: unknown key")
bad_corpus(dict(good, inputs=["missing-dir"]), "missing-dir")
bad_corpus(dict(good, heldout_fraction=1.5), "/heldout_fraction")
bad_corpus(dict(good, tokenizer={"vocab_size": 2 ** 70}), "/tokenizer/vocab_size")
# symbolic-link loops: an input that is one, and one among a directory's entries, each named (exit 2, not 1)
for name in ("loop-a", "loop-b"):
    if os.path.lexists(os.path.join(work, name)):
        os.remove(os.path.join(work, name))
os.symlink("loop-b", os.path.join(work, "loop-a"))
os.symlink("loop-a", os.path.join(work, "loop-b"))
bad_corpus(dict(good, inputs=[os.path.join(work, "loop-a")]), "loop-a: Too many levels of symbolic links")
looped = os.path.join(work, "text-looped")
shutil.rmtree(looped, ignore_errors=True)
shutil.copytree(os.path.join(work, "text"), looped)
os.symlink("y.txt", os.path.join(looped, "x.txt"))
os.symlink("x.txt", os.path.join(looped, "y.txt"))
bad_corpus(dict(good, inputs=[looped]), "x.txt: Too many levels of symbolic links")
before = open(os.path.join(work, "data", "train.bin"), "rb").read()
bad_corpus(good, "exists", out="data")
check(open(os.path.join(work, "data", "train.bin"), "rb").read() == before, "corpus: an existing corpus is left as it was")

NAMES = {"embedding": "tok_embeddings.weight", "attention_norm": "layers.{i}.attention_norm.weight",
         "wq": "layers.{i}.attention.wq.weight", "wk": "layers.{i}.attention.wk.weight",
         "wv": "layers.{i}.attention.wv.weight", "wo": "layers.{i}.attention.wo.weight",
         "q_norm": "layers.{i}.attention.q_norm.weight", "k_norm": "layers.{i}.attention.k_norm.weight",
         "ffn_norm": "layers.{i}.ffn_norm.weight", "w13": "layers.{i}.feed_forward.w13.weight",
         "w2": "layers.{i}.feed_forward.w2.weight", "final_norm": "norm.weight", "output": "output.weight"}
L, D, H, KV, HD, F = 2, 32, 4, 2, 8, 48
HIDDEN = ("wq", "wk", "wv", "wo", "w13", "w2")


def init_weights(qk):
    g = torch.Generator().manual_seed(1)
    sd = collections.OrderedDict()
    sd["tok_embeddings.weight"] = torch.randn(V, D, generator=g) * 0.5
    for i in range(L):
        p = "layers.%d." % i
        sd[p + "attention_norm.weight"] = 1 + 0.1 * torch.randn(D, generator=g)
        sd[p + "attention.wq.weight"] = torch.randn(H * HD, D, generator=g) / D ** 0.5
        sd[p + "attention.wk.weight"] = torch.randn(KV * HD, D, generator=g) / D ** 0.5
        sd[p + "attention.wv.weight"] = torch.randn(KV * HD, D, generator=g) / D ** 0.5
        sd[p + "attention.wo.weight"] = torch.randn(D, H * HD, generator=g) / (H * HD) ** 0.5
        if qk:
            sd[p + "attention.q_norm.weight"] = 1 + 0.3 * torch.randn(HD, generator=g)
            sd[p + "attention.k_norm.weight"] = 1 + 0.3 * torch.randn(HD, generator=g)
        sd[p + "ffn_norm.weight"] = 1 + 0.1 * torch.randn(D, generator=g)
        sd[p + "feed_forward.w13.weight"] = torch.randn(2 * F, D, generator=g) / D ** 0.5
        sd[p + "feed_forward.w2.weight"] = torch.randn(D, F, generator=g) / F ** 0.5
    sd["norm.weight"] = 1 + 0.1 * torch.randn(D, generator=g)
    sd["output.weight"] = torch.randn(V, D, generator=g) / D ** 0.5
    return sd


def cfg(qk):
    return {"tensors": NAMES, "head_dim": HD, "n_heads": H, "n_kv_heads": KV, "n_layers": L, "norm_eps": 1e-6,
            "qk_norm_eps": 1e-6, "rope_theta": 10000.0, "rope_style": "rotate_half", "norm_cast": "multiply_then_cast",
            "qk_norm_cast": "multiply_then_cast", "qk_layout": "head", "one_plus": False, "qk_norm": qk}


def docids(tokens):
    return torch.tensor(np.concatenate([[0], np.cumsum(tokens[:-1] == EOS)]))


def batch_loss(ref, stream, offsets, T):
    nll, n = 0, 0
    for off in offsets:
        tok = stream[off:off + T]
        t, d = torch.tensor(tok), docids(tok)
        logits = ref.forward(t, d)
        keep = d[1:] == d[:-1]
        lp = torch.log_softmax(logits[:-1], -1).gather(-1, t[1:, None])[:, 0]
        nll = nll - lp[keep].sum()
        n += int(keep.sum())
    return nll / n


def muon_step(p, g, m, lr, beta=0.95, wd=0.0):
    """KellerJordan/Muon's muon_update + step, in float32."""
    m.lerp_(g, 1 - beta)
    u = g.lerp(m, beta)
    X = u.float()
    tall = X.size(0) > X.size(1)
    if tall:
        X = X.T
    X = X / (X.norm() + 1e-7)
    for _ in range(5):
        A = X @ X.T
        B = -4.7750 * A + 2.0315 * A @ A
        X = 3.4445 * X + B @ X
    if tall:
        X = X.T
    X = X * max(1, p.size(0) / p.size(1)) ** 0.5
    return p * (1 - lr * wd) - lr * X


def rel(a, b):
    return float((a - b).norm() / max(b.norm(), 1e-30))


T, B = 32, 3
for qk in (True, False):
    tag = "qk-on" if qk else "qk-off"
    sd0 = init_weights(qk)
    init = os.path.join(work, "init-%s.pt" % tag)
    torch.save({"model": sd0}, init)
    conf = {"schema": "omn-audit/train-config@1", "name": tag, "corpus": "data", "init": {"from": os.path.basename(init)},
            "model": {"n_layers": L, "d_model": D, "n_heads": H, "n_kv_heads": KV, "head_dim": HD, "ffn_hidden": F,
                      "qk_norm": qk, "rope_theta": 10000.0},
            "optimizer": {"kind": "muon+adamw", "lr": 0.01, "muon_lr": 0.05, "betas": [0.9, 0.95], "eps": 1e-8,
                          "weight_decay": 0.1, "muon_weight_decay": 0.05,
                          "qk_gain_lr_scale": 3.0, "qk_gain_weight_decay": 0.2},
            "schedule": {"warmup_steps": 0, "decay": "constant"}, "clip_grad_norm": 0, "steps": 3, "batch_size": B,
            "seq_len": T, "seed": 7, "log_every": 1, "eval": {"every": 3, "rows": 4}, "checkpoint_every": 1}
    cpath = os.path.join(work, "train-%s.json" % tag)
    json.dump(conf, open(cpath, "w"))
    out = os.path.join(work, "run-" + tag)
    grads_path = os.path.join(work, "grads-%s.pt" % tag)
    run("train", "--config", cpath, "--out", out, "--dump-grads", grads_path)
    log = [json.loads(x) for x in open(os.path.join(out, "log.jsonl"))]
    rec = json.load(open(os.path.join(out, "train.json")))
    check(rec["status"] == "finished" and rec["model"]["qk_norm"] == qk, tag + ": train.json finished, qk_norm recorded")
    check(open(os.path.join(out, "config.json"), "rb").read() == open(cpath, "rb").read(),
          tag + ": the run keeps the config's exact bytes")
    schema_ok = subprocess.run([sys.executable, os.path.join(here, "..", "interop", "check_schema.py"), schema_dir,
                                "train.schema.json", os.path.join(out, "train.json")]).returncode == 0
    check(schema_ok, tag + ": train.json validates against docs/schema/train.schema.json")

    # step 0: L0 is the held-out loss of the starting weights, which the step-0 checkpoint holds
    nrows = 4
    l0_ref = Reference({k: v.clone() for k, v in sd0.items()}, cfg(qk))
    nll0, n0 = 0.0, 0
    for r in range(nrows):
        tok = held_stream[r * T:(r + 1) * T]
        a, b = l0_ref.nll(torch.tensor(tok), docids(tok))
        nll0, n0 = nll0 + a, n0 + b
    check(log[0]["step"] == 0 and "train_loss" not in log[0] and rec["evals"][0]["step"] == 0 and
          abs(log[0]["eval"]["heldout_loss"] - nll0 / n0) <= 1e-6 * (nll0 / n0) and rec["initial_loss"] == log[0]["eval"]["heldout_loss"],
          "%s: step 0 is evaluated and is L0: %.8f vs Python %.8f" % (tag, rec["initial_loss"], nll0 / n0))
    step0 = torch.load(os.path.join(out, "checkpoints", "step-000000.pt"), weights_only=True)["model"]
    check(set(step0) == set(sd0) and all(torch.equal(step0[k], sd0[k]) for k in sd0) and rec["checkpoints"][0]["step"] == 0,
          tag + ": checkpoints/step-000000.pt holds the starting weights")
    log = log[1:]
    check(rec["initial_train_loss"] == log[0]["train_loss"], tag + ": initial_train_loss is the first batch's loss")

    # gradients and loss of step 1
    ref = Reference({k: v.clone() for k, v in sd0.items()}, cfg(qk))
    for v in ref.sd.values():
        v.requires_grad_(True)
    loss = batch_loss(ref, train_stream, log[0]["batch_offsets"], T)
    loss.backward()
    check(abs(loss.item() - log[0]["train_loss"]) <= 1e-5 * loss.item(),
          "%s: step-1 loss %.8f vs reference %.8f" % (tag, log[0]["train_loss"], loss.item()))
    ours = torch.load(grads_path, weights_only=True)["model"]
    worst = max(rel(ours[k], ref.sd[k].grad) for k in sd0)
    check(set(ours) == set(sd0) and worst <= 1e-5, "%s: every gradient within 1e-5 relative of autograd's (worst %.2e)" % (tag, worst))

    # one optimizer step from the C++ gradients
    step1 = torch.load(os.path.join(out, "checkpoints", "step-000001.pt"), weights_only=True)["model"]
    adam_names = [k for k in sd0 if not any(k == NAMES[r].replace("{i}", str(i)) for r in HIDDEN for i in range(L))]
    params = {k: torch.nn.Parameter(sd0[k].clone()) for k in adam_names}
    # the QK-norm gains in their own group: rate 3 × 0.01, decay 0.2 (qk_gain_lr_scale, qk_gain_weight_decay)
    qk_gains = {NAMES[r].replace("{i}", str(i)) for r in ("q_norm", "k_norm") for i in range(L)} if qk else set()
    check(len(qk_gains & set(adam_names)) == (2 * L if qk else 0), tag + ": the QK-norm gains are AdamW's")
    groups = [{"params": [params[k]], "lr": 0.03 if k in qk_gains else 0.01,
               "weight_decay": 0.2 if k in qk_gains else 0.1 if sd0[k].dim() == 2 else 0.0} for k in adam_names]
    opt = torch.optim.AdamW(groups, lr=0.01, betas=(0.9, 0.95), eps=1e-8, foreach=False)
    for k in adam_names:
        params[k].grad = ours[k].clone()
    opt.step()
    worst_adam = max(float((params[k].detach() - step1[k]).abs().max()) for k in adam_names)
    check(worst_adam <= 1e-6, "%s: one AdamW step equals torch.optim.AdamW's, the QK gains' group at its own rate and decay (max abs diff %.2e)" % (tag, worst_adam))
    worst_muon = 0.0
    for k in sd0:
        if k in adam_names:
            continue
        want = muon_step(sd0[k].clone(), ours[k].clone(), torch.zeros_like(sd0[k]), lr=0.05, wd=0.05)
        worst_muon = max(worst_muon, float((want - step1[k]).abs().max()))
    check(worst_muon <= 1e-5, "%s: one Muon step equals the reference muon_update's (max abs diff %.2e)" % (tag, worst_muon))

    # final.pt: Python reads it; held-out loss equal to omn-audit eval's
    final = torch.load(os.path.join(out, "final.pt"), weights_only=True)
    fref = Reference(final["model"], cfg(qk))
    nrows = 4
    nll, n = 0.0, 0
    for r in range(nrows):
        tok = held_stream[r * T:(r + 1) * T]
        a, b = fref.nll(torch.tensor(tok), docids(tok))
        nll, n = nll + a, n + b
    ej = os.path.join(work, "eval-%s.json" % tag)
    run("eval", "--checkpoint", os.path.join(out, "final.pt"), "--tokens", os.path.join(work, "data", "heldout.bin"),
        "--eos", str(EOS), "--tokenizer-revision", corpus["tokenizer"]["sha256"], "--seq-len", str(T), "--num-seqs",
        str(nrows), "--dtype", "fp32", "--json", ej, "--bootstrap-resamples", "100", "--groups", "1")
    e = json.load(open(ej))["result"]
    ours_loss = math.log(e["perplexity"])
    check(abs(ours_loss - nll / n) <= 1e-6 * (nll / n),
          "%s: held-out loss of final.pt, omn-audit eval %.8f vs Python %.8f" % (tag, ours_loss, nll / n))
    if not qk:
        p = run("profile", os.path.join(out, "final.pt"), expect=2)
        check("no Q/K gain" in p.stderr, "qk-off: profile refuses with exit 2 naming the missing gains")
        man = os.path.join(work, "m.json")
        import hashlib
        digest = lambda f: hashlib.sha256(open(f, "rb").read()).hexdigest()
        ck, hb = os.path.join(out, "final.pt"), os.path.join(work, "data", "heldout.bin")
        json.dump({"schema": "omn-audit/manifest@1", "checkpoint": {"path": ck, "sha256": digest(ck)},
                   "tokens": {"path": hb, "sha256": digest(hb), "format": "u16", "eos": EOS,
                              "tokenizer_revision": corpus["tokenizer"]["sha256"]},
                   "rows": {"seq_len": T, "num_seqs": 4, "selection": "first", "form": "packed"}, "groups": 2,
                   "conditions": [{"op": "constant", "values": [1.0], "targets": ["qk"], "layers": "all"}],
                   "output": {"json": os.path.join(work, "m-out.json")}}, open(man, "w"))
        p = run("intervene", "--manifest", man, expect=2)
        check("no Q/K gains" in p.stderr, "qk-off: intervene refuses gain ops with exit 2")

# --- the gradient clip against torch.nn.utils.clip_grad_norm_ ------------------------------------
# AdamW for every parameter with eps near the gradients' size, so one step depends on the clipped
# gradients' scale (Adam's m/sqrt(v) alone would not see a clip at step 1); the clip at a quarter of
# the first step's norm. The norm omn-audit logs (float64 sums of squares, one reduction) against
# torch's (float32 norms): within float32 roundoff of the longest norm, (n_max + P + 2) * 2^-24.
sd0 = torch.load(os.path.join(work, "init-qk-on.pt"), weights_only=True)["model"]
norm1 = [json.loads(x) for x in open(os.path.join(work, "run-qk-on", "log.jsonl"))][1]["grad_norm"]
max_norm = 0.25 * norm1
conf = dict(json.load(open(os.path.join(work, "train-qk-on.json"))), name="clip", clip_grad_norm=max_norm, steps=1,
            checkpoint_every=1, eval={"every": 1, "rows": 2})
conf["optimizer"] = {"kind": "adamw", "lr": 0.01, "betas": [0.9, 0.95], "eps": 1e-3, "weight_decay": 0.1,
                     "qk_gain_lr_scale": 3.0, "qk_gain_weight_decay": 0.2}
clip_conf, clip_out, clip_grads = (os.path.join(work, n) for n in ("train-clip.json", "run-clip", "grads-clip.pt"))
json.dump(conf, open(clip_conf, "w"))
run("train", "--config", clip_conf, "--out", clip_out, "--dump-grads", clip_grads)
logged = [json.loads(x) for x in open(os.path.join(clip_out, "log.jsonl"))][1]["grad_norm"]
ours = torch.load(clip_grads, weights_only=True)["model"]  # before the clip
step1 = torch.load(os.path.join(clip_out, "final.pt"), weights_only=True)["model"]  # the one step
qk_gains = {NAMES[r].replace("{i}", str(i)) for r in ("q_norm", "k_norm") for i in range(L)}


def adamw_step(clip):
    params = {k: torch.nn.Parameter(sd0[k].clone()) for k in sd0}
    for k in sd0:
        params[k].grad = ours[k].clone()
    total = torch.nn.utils.clip_grad_norm_(list(params.values()), max_norm) if clip else None
    groups = [{"params": [params[k]], "lr": 0.03 if k in qk_gains else 0.01,
               "weight_decay": 0.2 if k in qk_gains else 0.1 if sd0[k].dim() == 2 else 0.0} for k in sd0]
    torch.optim.AdamW(groups, lr=0.01, betas=(0.9, 0.95), eps=1e-3, foreach=False).step()
    return total, {k: params[k].detach() for k in sd0}


total, clipped = adamw_step(True)
bound = (max(v.numel() for v in ours.values()) + len(ours) + 2) * 2.0 ** -24
check(abs(float(total) - logged) <= bound * float(total),
      "clip: the logged gradient norm %.10g equals torch.nn.utils.clip_grad_norm_'s %.10g (bound %.1e relative)" % (logged, float(total), bound))
worst = max(float((clipped[k] - step1[k]).abs().max()) for k in sd0)
_, unclipped = adamw_step(False)
unseen = max(float((unclipped[k] - step1[k]).abs().max()) for k in sd0)
check(worst <= 1e-6 and unseen > 100 * 1e-6,
      "clip: one AdamW step from torch's clipped gradients equals omn-audit's (max abs diff %.2e; unclipped it would differ by %.2e)" % (worst, unseen))

# --- kill -9 and --resume: bitwise the uninterrupted run's weights -------------------------------
conf = json.load(open(os.path.join(work, "train-qk-on.json")))
conf.update({"steps": 120, "checkpoint_every": 4, "log_every": 10, "eval": {"every": 60, "rows": 2}})
conf["init"] = {"std": 0.02}
cpath = os.path.join(work, "train-resume.json")
json.dump(conf, open(cpath, "w"))
ref_out, cut_out = os.path.join(work, "run-whole"), os.path.join(work, "run-cut")
run("train", "--config", cpath, "--out", ref_out)
proc = subprocess.Popen([omn, "train", "--config", cpath, "--out", cut_out], env=env, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
marker = os.path.join(cut_out, "checkpoints", "step-000012.optim.pt")
deadline = time.time() + 120
while not os.path.exists(marker) and time.time() < deadline and proc.poll() is None:
    time.sleep(0.002)
proc.send_signal(signal.SIGKILL)
proc.wait()
killed_early = not os.path.exists(os.path.join(cut_out, "final.pt"))
check(killed_early, "resume: the run was killed before it finished (after step %s)" %
      json.load(open(os.path.join(cut_out, "train.json")))["last_checkpoint_step"])
killed = cut_out + "-killed"  # the interrupted state, kept for the tampering checks below
shutil.copytree(cut_out, killed)
run("train", "--config", cpath, "--out", cut_out, "--resume")
a = torch.load(os.path.join(ref_out, "final.pt"), weights_only=True)["model"]
b = torch.load(os.path.join(cut_out, "final.pt"), weights_only=True)["model"]
check(all(torch.equal(a[k], b[k]) for k in a), "resume: kill -9 then --resume gives bitwise the uninterrupted final weights")
la = [json.loads(x).get("train_loss") for x in open(os.path.join(ref_out, "log.jsonl"))]
lb = [json.loads(x).get("train_loss") for x in open(os.path.join(cut_out, "log.jsonl"))]
check(la == lb, "resume: the log equals the uninterrupted run's, step for step")
# the record keeps both processes: the killed one to its last record (a checkpoint), the resumed one
# from that checkpoint to the end; the run's timing adds them up
rw, rc = (json.load(open(os.path.join(d, "train.json"))) for d in (ref_out, cut_out))
segs = rc["segments"]
per_step = conf["batch_size"] * conf["seq_len"]
check(len(rw["segments"]) == 1 and rw["segments"][0]["start_step"] == 0 and rw["segments"][0]["end_step"] == 120 and
      len(segs) == 2 and segs[0]["end"] == "checkpoint" and segs[1]["start_step"] == segs[0]["end_step"] and
      segs[1]["end_step"] == 120 and segs[1]["end"] == "finished" and
      all(s["tokens"] == (s["end_step"] - s["start_step"]) * per_step for s in segs) and
      rc["timing"]["tokens_trained"] == 120 * per_step and rc["timing"]["segments"] == 2 and
      abs(rc["timing"]["seconds"] - sum(s["seconds"] for s in segs)) <= 1e-9 * rc["timing"]["seconds"],
      "resume: train.json records both segments (killed at step %d, resumed to 120) and times both" % segs[0]["end_step"])

# --- track of a run directory verifies every checkpoint against the digest train.json records ----
rec = json.load(open(os.path.join(ref_out, "train.json")))
tj = os.path.join(work, "track-run.json")
run("track", ref_out, "--json", tj)
t = json.load(open(tj))
n_recorded = len(rec["checkpoints"]) + 1  # and final.pt
check(t["summary"]["verified"] == n_recorded == t["summary"]["checkpoints"] and all(c["sha256_verified"] for c in t["checkpoints"]),
      "track RUN: each of its %d checkpoints verified against train.json's digest" % n_recorded)
r = run("profile", ref_out, expect=2)
check("omn-audit run directory" in r.stderr and "final.pt" in r.stderr,
      "profile RUN_DIR (its config.json is the train config, not a model's): exit 2 pointing at final.pt")
tdir = os.path.join(work, "run-track-tampered")
shutil.copytree(ref_out, tdir)
victim = os.path.join(tdir, rec["checkpoints"][-1]["path"])
blob = bytearray(open(victim, "rb").read())
blob[-100] ^= 0x01
open(victim, "wb").write(bytes(blob))
r = run("track", tdir, expect=4)
check(rec["checkpoints"][-1]["path"].split("/")[-1] in r.stderr and "train.json" in r.stderr,
      "track RUN with a flipped byte in a checkpoint: exit 4 naming it and train.json (%s)" % r.stderr.strip()[-160:])
# each checkpoint is bound to the record of the run directory it was found in, links resolved, in
# any order: A's last checkpoint a link to B's (which B's record pins) is A's, and A's record refuses it
run_a, run_b = os.path.join(work, "run-track-a"), os.path.join(work, "run-track-b")
shutil.copytree(ref_out, run_a)
shutil.copytree(ref_out, run_b)
b_last = os.path.join(run_b, rec["checkpoints"][-1]["path"])
shutil.copy(os.path.join(run_b, rec["checkpoints"][0]["path"]), b_last)  # another valid checkpoint
rec_b = json.load(open(os.path.join(run_b, "train.json")))
rec_b["checkpoints"][-1]["sha256"] = hashlib.sha256(open(b_last, "rb").read()).hexdigest()  # B's own record of its file
json.dump(rec_b, open(os.path.join(run_b, "train.json"), "w"))
a_last = os.path.join(run_a, rec["checkpoints"][-1]["path"])
os.remove(a_last)
os.symlink(b_last, a_last)
run("track", run_b, "--json", os.path.join(work, "track-b.json"))  # B alone: its record and its files agree
for order in ((run_a, run_b), (run_b, run_a)):
    r = run("track", *order, expect=4)
    check(os.path.join(run_a, "train.json") in r.stderr and "disagree" in r.stderr or "SHA-256 mismatch" in r.stderr and "run-track-a" in r.stderr,
          "track %s %s: A's checkpoint linked to B's is checked against A's record: exit 4 naming it (%s)"
          % (os.path.basename(order[0]), os.path.basename(order[1]), r.stderr.strip()[-200:]))

# --- bad input: exit 2 (or 4) naming the place; nothing overwritten ------------------------------
def bad(conf_change, want, expect=2, extra=()):
    c = json.load(open(os.path.join(work, "train-qk-on.json")))
    conf_change(c)
    p = os.path.join(work, "bad.json")
    json.dump(c, open(p, "w"))
    r = run("train", "--config", p, "--out", os.path.join(work, "run-bad"), *extra, expect=expect)
    check(want in r.stderr, "bad input: %s -> exit %d, message names %r" % (want, expect, want))


bad(lambda c: c.update({"colour": 1}), "/colour: unknown key")
bad(lambda c: c.update({"device": "cudax"}), "/device")
bad(lambda c: c.update({"seq_len": 10 ** 7}), "/seq_len")
bad(lambda c: c["model"].update({"n_kv_heads": 3}), "/model/n_kv_heads")
bad(lambda c: c["model"].update({"head_dim": 7}), "/model/head_dim")
bad(lambda c: c.update({"steps": -3}), "/steps")
bad(lambda c: c.update({"corpus": "nowhere"}), "nowhere")
bad(lambda c: c["optimizer"].update({"lr": float("nan")}) if False else c["optimizer"].update({"lr": 0}), "/optimizer/lr")
before = open(os.path.join(ref_out, "final.pt"), "rb").read()
r = run("train", "--config", cpath, "--out", ref_out, expect=2)
check("--resume" in r.stderr and open(os.path.join(ref_out, "final.pt"), "rb").read() == before,
      "an existing run without --force or --resume: exit 2, nothing overwritten")
fifo = os.path.join(work, "fifo")
os.mkfifo(fifo)
for cmd in (["train", "--config", fifo, "--out", os.path.join(work, "run-fifo")],
            ["corpus", "--config", fifo, "--out", os.path.join(work, "data-fifo")]):
    r = subprocess.run([omn, *cmd], capture_output=True, text=True, env=env, timeout=60)
    check(r.returncode == 2 and "not a regular file" in r.stderr, "%s --config FIFO: exit 2 at once, no hang" % cmd[0])
conf["seed"] = 8
json.dump(conf, open(cpath, "w"))
shutil.copytree(cut_out, cut_out + "-2")
t = json.load(open(os.path.join(cut_out + "-2", "train.json")))
t["status"] = "running"
json.dump(t, open(os.path.join(cut_out + "-2", "train.json"), "w"))
r = run("train", "--config", cpath, "--out", cut_out + "-2", "--resume", expect=4)
check("not the config this run started with" in r.stderr, "--resume with a changed config: exit 4")


# --- what a resume reads is verified before it is used: tampering and damage are exit 2/4 -------
def tampered(name, change, want, expect):
    d = os.path.join(work, "tamper-" + name)
    shutil.copytree(killed, d)
    rec = json.load(open(os.path.join(d, "train.json")))
    change(d, rec)
    r = run("train", "--config", cpath, "--out", d, "--resume", expect=expect)
    check(want in r.stderr and not os.path.exists(os.path.join(d, "final.pt")),
          "resume of a run with %s: exit %d naming %r, nothing trained (%s)" % (name, expect, want, r.stderr.strip()[-160:]))


def flip(path, at=-100):
    b = bytearray(open(path, "rb").read())
    b[at] ^= 0x01
    open(path, "wb").write(bytes(b))


def edit_record(**fields):
    def change(d, rec):
        rec.update(fields)
        json.dump(rec, open(os.path.join(d, "train.json"), "w"))
    return change


def edit_log(fn):
    def change(d, rec):
        p = os.path.join(d, "log.jsonl")
        lines = open(p).read().splitlines(True)  # read before the file is opened for writing
        open(p, "w").write(fn(lines))
    return change


last = json.load(open(os.path.join(killed, "train.json")))["last_checkpoint_step"]
shutil.copyfile(os.path.join(killed, "config.json"), cpath)  # the killed run's config again, byte for byte
tampered("a flipped byte in its checkpoint", lambda d, rec: flip(os.path.join(d, "checkpoints", "step-%06d.pt" % last)),
         "step-%06d.pt" % last, 4)
tampered("a flipped byte in its optimizer state", lambda d, rec: flip(os.path.join(d, "checkpoints", "step-%06d.optim.pt" % last)),
         "step-%06d.optim.pt" % last, 4)
tampered("no optimizer digest recorded",
         edit_record(checkpoints=[{k: v for k, v in c.items() if k != "optimizer_sha256"} for c in
                                  json.load(open(os.path.join(killed, "train.json")))["checkpoints"]]), "cannot be verified", 4)
tampered("a negative last_checkpoint_step", edit_record(last_checkpoint_step=-5), "/last_checkpoint_step", 2)
tampered("a last_checkpoint_step before its last checkpoint", edit_record(last_checkpoint_step=4), "/last_checkpoint_step", 2)
tampered("checkpoints that are not a list", edit_record(checkpoints="abc"), "/checkpoints", 2)
tampered("a checkpoint path elsewhere",
         edit_record(checkpoints=[dict(c, path="../x.pt") for c in json.load(open(os.path.join(killed, "train.json")))["checkpoints"]]),
         "/path", 2)
tampered("a status of the wrong type", edit_record(status=7), "/status", 2)
# the log as the checkpoint left it is pinned by the record (log_bytes, log_sha256): any change to it
tampered("a torn line in the middle of its log", edit_log(lambda ls: "".join([ls[0][:12] + "\n"] + ls)), "log.jsonl", 4)
tampered("an edited loss in its log", edit_log(lambda ls: "".join(ls[:1] + [ls[1].replace('"train_loss":', '"train_loss":1')] + ls[2:])),
         "log.jsonl", 4)
tampered("a deleted log", lambda d, rec: os.remove(os.path.join(d, "log.jsonl")), "log.jsonl", 4)
# a torn last line is what a kill leaves: cut, and the resume finishes with the uninterrupted weights
d = os.path.join(work, "tamper-torn-tail")
shutil.copytree(killed, d)
open(os.path.join(d, "log.jsonl"), "a").write('{"step": 99999, "train_lo')
run("train", "--config", cpath, "--out", d, "--resume")
b = torch.load(os.path.join(d, "final.pt"), weights_only=True)["model"]
check(all(torch.equal(a[k], b[k]) for k in a), "resume after a torn last log line: bitwise the uninterrupted final weights")

# SIGTERM (as SIGINT): the run stops between two steps, exit 130 naming the resume command; resumed,
# it ends with the uninterrupted weights
term = os.path.join(work, "run-term")
proc = subprocess.Popen([omn, "train", "--config", cpath, "--out", term], env=env, stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, text=True)
marker = os.path.join(term, "checkpoints", "step-000004.optim.pt")
deadline = time.time() + 120
while not os.path.exists(marker) and time.time() < deadline and proc.poll() is None:
    time.sleep(0.002)
proc.send_signal(signal.SIGTERM)
err = proc.communicate()[1]
check(proc.returncode == 130 and "omn-audit train --config %s --out %s --resume" % (cpath, term) in err,
      "SIGTERM in train: exit 130 with the resume command (exit %d: %s)" % (proc.returncode, err.strip()[-200:]))
stopped = json.load(open(os.path.join(term, "train.json")))
term_copy = term + "-other-kernels"  # the stopped state, resumed below on other OpenBLAS kernels
shutil.copytree(term, term_copy)
run("train", "--config", cpath, "--out", term, "--resume")
b = torch.load(os.path.join(term, "final.pt"), weights_only=True)["model"]
check(all(torch.equal(a[k], b[k]) for k in a), "SIGTERM then --resume: bitwise the uninterrupted final weights")
s0 = stopped["segments"][-1]
segs = json.load(open(os.path.join(term, "train.json")))["segments"]
check(s0["end"] == "interrupted" and s0["end_step"] == stopped["steps_done"] >= stopped["last_checkpoint_step"] and
      len(segs) == 2 and segs[0] == s0 and segs[1]["start_step"] == stopped["last_checkpoint_step"],
      "SIGTERM: the record says how far the stopped segment got (step %d; its last checkpoint %d), and the resume "
      "starts the next from that checkpoint" % (s0["end_step"], stopped["last_checkpoint_step"]))
# a resume on other kernels (OpenBLAS's SSE3 Prescott ones, which every x86-64 CPU runs) is visible
# in the record: each segment keeps its own OpenBLAS string and OPENBLAS_CORETYPE
r = subprocess.run([omn, "train", "--config", cpath, "--out", term_copy, "--resume"], capture_output=True, text=True,
                   env=dict(env, OPENBLAS_CORETYPE="Prescott"))
other = json.load(open(os.path.join(term_copy, "train.json")))
osegs = other["segments"]
check(r.returncode == 0 and len(osegs) == 2 and osegs[0] == s0 and "Prescott" in (osegs[1]["openblas"] or "") and
      "Prescott" not in (osegs[0]["openblas"] or "") and osegs[1]["openblas_coretype"] == "Prescott" and
      osegs[1]["openblas"] == other["provenance"]["libraries"]["openblas"],
      "a resume on other OpenBLAS kernels: segment 0 %r, segment 1 %r (exit %d)" % (osegs[0]["openblas"], osegs[1]["openblas"], r.returncode))
schema_ok = subprocess.run([sys.executable, os.path.join(here, "..", "interop", "check_schema.py"), schema_dir,
                            "train.schema.json", os.path.join(term_copy, "train.json")]).returncode == 0
check(schema_ok, "a resumed run's train.json, segments and timing, validates against docs/schema/train.schema.json")

# past `ulimit -f` a write fails: exit 5 naming the file (not death by SIGXFSZ), no temporary left;
# a temporary a killed writer left (NAME.tmp.PID, PID gone) is removed by --resume
import resource  # noqa: E402
xout = os.path.join(work, "run-fsize")
lim = os.path.getsize(os.path.join(ref_out, "checkpoints", "step-000000.pt")) + 4096  # the weights fit, the optimizer state does not
p = subprocess.run([omn, "train", "--config", cpath, "--out", xout], env=env, capture_output=True, text=True,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (lim, lim)))
left = [f for d in (xout, os.path.join(xout, "checkpoints")) for f in os.listdir(d) if ".tmp." in f]
check(p.returncode == 5 and ".optim.pt: File too large" in p.stderr and not left,
      "train past ulimit -f: exit 5 naming the file, no temporary left (exit %d: %s)" % (p.returncode, p.stderr.strip()[-110:]))
gone = subprocess.Popen(["true"])
gone.wait()
stale = [os.path.join(xout, "checkpoints", "step-000004.pt.tmp.%d" % gone.pid), os.path.join(xout, "train.json.tmp.%d" % gone.pid)]
for f in stale:
    open(f, "w").write("half a file")
live = os.path.join(xout, "log.jsonl.tmp.%d" % os.getpid())  # a writer that still runs keeps its file
open(live, "w").write("x")
run("train", "--config", cpath, "--out", xout, "--resume")
b = torch.load(os.path.join(xout, "final.pt"), weights_only=True)["model"]
ref_final = torch.load(os.path.join(ref_out, "final.pt"), weights_only=True)["model"]
check(not any(os.path.exists(f) for f in stale) and os.path.exists(live) and all(torch.equal(ref_final[k], b[k]) for k in b),
      "train --resume removes the temporaries of dead writers, keeps a live one's, and finishes bitwise as the uninterrupted run")
os.remove(live)

# sizes checked before anything is allocated, and token ids against the vocabulary (exit 2 or 4, not 1)
huge = json.load(open(cpath))
huge["model"].update({"n_layers": 1024, "d_model": 65536, "n_heads": 1024, "n_kv_heads": 1024, "head_dim": 1024, "ffn_hidden": 262144})
json.dump(huge, open(os.path.join(work, "train-huge.json"), "w"))
t0 = time.time()
r = run("train", "--config", os.path.join(work, "train-huge.json"), "--out", os.path.join(work, "run-huge"), expect=2)
check("parameters" in r.stderr and "4 GiB" in r.stderr and time.time() - t0 < 30, "a model of 3e14 parameters: exit 2 before allocating")
for vocab, code, want in ((2 ** 24, 2, "parameters (vocabulary 16777216)"), (40, 2, "/tokenizer/vocab_size 40 is below token id")):
    vdir = os.path.join(work, "data-vocab-%d" % vocab)
    shutil.rmtree(vdir, ignore_errors=True)
    shutil.copytree(os.path.join(work, "data"), vdir)
    cj = json.load(open(os.path.join(vdir, "corpus.json")))
    cj["tokenizer"]["vocab_size"] = vocab
    json.dump(cj, open(os.path.join(vdir, "corpus.json"), "w"))
    r = run("train", "--config", cpath, "--corpus", vdir, "--out", os.path.join(work, "run-vocab-%d" % vocab), expect=code)
    check(want in r.stderr, "a corpus.json claiming a vocabulary of %d: exit %d naming it (%s)" % (vocab, code, r.stderr.strip()[-100:]))

# --dump-grads over a file the run is still to write (its log): refused before anything is written
r = run("train", "--config", cpath, "--out", os.path.join(work, "run-dump-log"), "--dump-grads",
        os.path.join(work, "run-dump-log", "log.jsonl"), expect=2)
check("a file of the run" in r.stderr and not os.path.exists(os.path.join(work, "run-dump-log", "log.jsonl")),
      "train --dump-grads OUT/log.jsonl on a fresh run: exit 2 (%s)" % r.stderr.strip()[-80:])

# one output rule: --dump-grads over a corpus file, /init/from a file of the run --force would delete
train_bin = os.path.join(work, "data", "train.bin")
before = open(train_bin, "rb").read()
r = run("train", "--config", cpath, "--out", os.path.join(work, "run-dump"), "--dump-grads", train_bin, "--force", expect=2)
check("is the input" in r.stderr and open(train_bin, "rb").read() == before and not os.path.exists(os.path.join(work, "run-dump", "log.jsonl")),
      "train --dump-grads data/train.bin --force: exit 2 before a step, the corpus untouched (%s)" % r.stderr.strip()[-80:])
own = json.load(open(cpath))
own["init"] = {"from": os.path.join(ref_out, "final.pt")}
own_path = os.path.join(work, "train-own-init.json")
json.dump(own, open(own_path, "w"))
before = open(os.path.join(ref_out, "final.pt"), "rb").read()
r = run("train", "--config", own_path, "--out", ref_out, "--force", expect=2)
check("/init/from" in r.stderr and open(os.path.join(ref_out, "final.pt"), "rb").read() == before,
      "train --force whose /init/from is the run's own final.pt: exit 2, nothing deleted (%s)" % r.stderr.strip()[-80:])

# a run stopped after step 0 continues from its own step-0 checkpoint (pinned by its digest), not from
# /init/from, which may have changed since; the uninterrupted run from the same file is the reference
iconf = json.load(open(os.path.join(work, "train-qk-on.json")))
shutil.copyfile(os.path.join(work, "init-qk-on.pt"), os.path.join(work, "init-copy.pt"))
iconf.update({"init": {"from": "init-copy.pt"}, "steps": 300, "checkpoint_every": 0, "log_every": 100, "eval": {"every": 300, "rows": 1}})
ipath = os.path.join(work, "train-init.json")
json.dump(iconf, open(ipath, "w"))
run("train", "--config", ipath, "--out", os.path.join(work, "run-init-ref"))
iout = os.path.join(work, "run-init")
proc = subprocess.Popen([omn, "train", "--config", ipath, "--out", iout], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
deadline = time.time() + 120
while not os.path.exists(os.path.join(iout, "checkpoints", "step-000000.optim.pt")) and time.time() < deadline and proc.poll() is None:
    time.sleep(0.002)
proc.send_signal(signal.SIGTERM)
proc.wait()
other = torch.load(os.path.join(work, "init-copy.pt"), weights_only=True)
other["model"] = {k: v + 1e-3 for k, v in other["model"].items()}
torch.save(other, os.path.join(work, "init-copy.pt"))
run("train", "--config", ipath, "--out", iout, "--resume")
a = torch.load(os.path.join(work, "run-init-ref", "final.pt"), weights_only=True)["model"]
b = torch.load(os.path.join(iout, "final.pt"), weights_only=True)["model"]
check(proc.returncode == 130 and all(torch.equal(a[k], b[k]) for k in a),
      "stopped after step 0, resumed with a changed /init/from: continues from its step-0 checkpoint, bitwise the uninterrupted run")

h.finish()
