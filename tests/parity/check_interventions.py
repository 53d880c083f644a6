#!/usr/bin/python3
"""Each intervention op against the Python reference applying the same op to the same checkpoint
(fp32, same NLL per sequence within 1e-6 relative), and the sweep's own bookkeeping: restore
recorded bitwise, the closing control equal to the opening one, every derived number recomputable
from the raw per-sequence values, the activation cache bitwise equal to full passes. The tool's own
verdicts (restore ok, reproduced bitwise) are recomputed here, not trusted.

  check_interventions.py OMN_AUDIT WORKDIR
"""
import collections
import copy
import hashlib
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

omn, work = sys.argv[1], sys.argv[2]
os.environ["OMN_PARITY_WORK"] = work  # check_parity writes its token stream there on import
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_parity as P  # noqa: E402  (shapes, names, token stream)
from reference_model import Reference  # noqa: E402

os.makedirs(work, exist_ok=True)
MASK = (1 << 64) - 1


def splitmix(seed):
    s = seed & MASK
    while True:
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def below(gen, n):
    limit = MASK - (MASK % n)  # as UINT64_MAX - UINT64_MAX % n
    while True:
        v = next(gen)
        if v < limit:
            return v % n


SOURCES = {}  # transplant: the other checkpoints' state dicts, by the path the manifest wrote


def normals(seed, i, role, n):
    """noise's epsilon: Box-Muller (cosine branch) on two SplitMix64 draws, u1 in (0, 1], u2 in [0, 1)."""
    gen = splitmix(seed ^ (i << 32) ^ role)
    out = []
    for _ in range(n):
        u1 = ((next(gen) >> 11) + 1) / 2.0 ** 53
        u2 = (next(gen) >> 11) / 2.0 ** 53
        out.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
    return torch.tensor(out, dtype=torch.float64)


def choose(g, coords):
    """The coordinates a step acts on, ascending."""
    if coords in (None, "all"):
        return torch.arange(g.numel())
    if coords == "negative":
        return torch.nonzero(g < 0).flatten()
    if isinstance(coords, dict):
        order = torch.sort(g.abs(), stable=True, descending=True).indices
        return torch.sort(order[:coords["top_k"]]).values
    return torch.tensor(sorted(coords), dtype=torch.long)


def step(cur, op, L, written):
    """One op on the current effective gains (float32), every vector from the values the step found."""
    name = lambda r, i: P.OMN_NAMES[r].replace("{i}", str(i))  # noqa: E731
    before = dict(cur)
    layers = list(range(L)) if op["layers"] == "all" else op["layers"]
    roles = {"q": ["q_norm"], "k": ["k_norm"], "qk": ["q_norm", "k_norm"]}[op["target"]]
    chosen = [(i, r, choose(before[name(r, i)], op.get("coordinates"))) for i in layers for r in roles]
    if op["op"] == "global_mean":
        total = 0.0
        for i, r, idx in chosen:
            total += before[name(r, i)][idx].double().sum().item()
        gmean = total / max(1, sum(len(idx) for _, _, idx in chosen))
    for i, r, idx in chosen:
        if len(idx) == 0:
            continue
        whole = before[name(r, i)]
        g = whole[idx]
        o = op["op"]
        if o == "constant":
            new = torch.full_like(g, op["value"])
        elif o == "scale":
            new = g * op["value"]
        elif o == "vector_mean":
            new = torch.full_like(g, g.double().mean().item())
        elif o == "global_mean":
            new = torch.full_like(g, gmean)
        elif o == "permute":
            gen = splitmix(op["seed"] ^ (i << 32) ^ (0 if r == "q_norm" else 1))
            perm = list(range(g.numel()))
            for j in range(len(perm) - 1, 0, -1):
                k = below(gen, j + 1)
                perm[j], perm[k] = perm[k], perm[j]
            new = g[torch.tensor(perm)]
        elif o == "sign_fix":
            new = g.clamp_min(0) if op["mode"] == "zero" else g.abs()
        elif o == "copy_layer":
            new = before[name(r, op["source_layer"])][idx]
        elif o == "swap_qk":
            new = before[name("k_norm" if r == "q_norm" else "q_norm", i)][idx]
        elif o == "rescale_pattern":
            new = (g.double() * (op["value"] / g.double().mean().item())).float()
        elif o == "compensate":
            new = g * op["value"] if r == "q_norm" else g / op["value"]
        elif o == "bypass":  # the gain stays (unused): the reference model drops the normalisation
            written.add(name(r, i))
            continue
        elif o == "transplant":
            new = SOURCES[op["source"]["path"]][name(r, i)].float()[idx]
        elif o == "noise":
            eps = normals(op["seed"], i, 0 if r == "q_norm" else 1, g.numel())
            new = (g.double() * (1 + op["value"] * eps)).float()
        else:
            raise SystemExit("check_interventions.py: no reference for op %r" % o)
        cur[name(r, i)] = whole.index_copy(0, idx, new.float())
        written.add(name(r, i))


def bypassed(op, L):
    """The (layer, role) pairs whose normalisation a condition removes."""
    out = set()
    for st in (op["steps"] if op["op"] == "composite" else [op]):
        if st["op"] == "bypass":
            layers = list(range(L)) if st["layers"] == "all" else st["layers"]
            out |= {(i, r) for i in layers for r in ({"q": ["q"], "k": ["k"], "qk": ["q", "k"]}[st["target"]])}
    return out


def apply(sd, op, L):
    """The condition's steps on the effective gains in float32 from the stored values, one cast back."""
    sd = collections.OrderedDict((k, v.clone()) for k, v in sd.items())
    names = [P.OMN_NAMES[r].replace("{i}", str(i)) for i in range(L) for r in ("q_norm", "k_norm")]
    cur = {n: sd[n].float() for n in names}
    written = set()
    for st in (op["steps"] if op["op"] == "composite" else [op]):
        step(cur, st, L, written)
    for n in written:
        sd[n] = cur[n].to(sd[n].dtype)
    return sd


passed = failed = 0


def expect(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


shape = P.SHAPES[0]
sd, preset, cfg = P.make(shape)
sd = collections.OrderedDict((k, v.to(torch.bfloat16)) for k, v in sd.items())  # gains as stored in BF16
ck = os.path.join(work, "model.pt")
torch.save(sd, ck)
json.dump(preset, open(os.path.join(work, "preset.json"), "w"))
sha = lambda p: subprocess.run(["sha256sum", p], capture_output=True, text=True).stdout.split()[0]  # noqa: E731
L = cfg["n_layers"]
# transplant's source: another checkpoint of the same shapes (its gains halved plus a shift, stored in
# fp32 to exercise the cast into the BF16 gains)
src_sd = collections.OrderedDict((k, v.float().clone()) for k, v in sd.items())
for k in src_sd:
    if "q_norm" in k or "k_norm" in k:
        src_sd[k] = src_sd[k] * 0.5 + 0.3
torch.save(src_sd, os.path.join(work, "source.pt"))
SOURCES["source.pt"] = src_sd
conditions = [
    {"op": "constant", "values": [2.0, 0.5], "targets": ["qk", "q", "k"], "layers": "all"},
    {"op": "scale", "values": [1.7], "targets": ["qk"], "layers": [1]},
    {"op": "vector_mean", "targets": ["q"], "layers": "all"},
    {"op": "global_mean", "targets": ["qk"], "layers": "0-1"},
    {"op": "permute", "seeds": [3], "targets": ["qk"], "layers": "all"},
    {"op": "sign_fix", "modes": ["zero", "abs"], "targets": ["qk"], "layers": "all"},
    {"op": "copy_layer", "source_layers": [1], "targets": ["qk"], "layers": [0]},
    {"op": "swap_qk", "layers": "all"},
    {"op": "rescale_pattern", "values": [1.0, 3.0], "targets": ["qk", "q"], "layers": "all"},
    {"op": "compensate", "values": [2.0, 2.5], "layers": "all"},
    {"op": "noise", "values": [0.1], "seeds": [1, 2], "targets": ["k"], "layers": "0-1"},
    {"op": "constant", "values": [1.0], "coordinates": "negative"},
    {"op": "vector_mean", "targets": ["q"], "coordinates": {"top_k": 3}},
    {"op": "permute", "seeds": [5], "coordinates": [0, 2, 4, 6]},
    {"name": "abs, then Q rescaled to mean 1", "steps": [{"op": "sign_fix", "modes": "abs"},
                                                         {"op": "rescale_pattern", "values": 1.0, "targets": "q"}]},
    {"steps": [{"op": "swap_qk", "layers": [0]}, {"op": "copy_layer", "source_layers": 0, "layers": [1], "targets": "k"}]},
    {"op": "transplant", "sources": [{"path": "source.pt", "sha256": sha(os.path.join(work, "source.pt"))}], "targets": ["q", "qk"]},
    {"op": "transplant", "sources": {"path": "source.pt", "sha256": sha(os.path.join(work, "source.pt"))}, "coordinates": {"top_k": 2}},
    {"op": "bypass", "targets": ["qk", "k"], "layers": "all"},
    {"op": "bypass", "targets": ["q"], "layers": [1]},
]
# every op the manifest schema allows (checked against the catalog by test_manifest.cpp) is checked here
schema_ops = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../docs/schema/manifest.schema.json")))
schema_ops = set(schema_ops["$defs"]["op"]["properties"]["op"]["enum"])
used = {c["op"] for c in conditions if "op" in c} | {s["op"] for c in conditions for s in c.get("steps", [])}
expect(used == schema_ops, "every op has a reference check here (missing: %s)" % sorted(schema_ops - used))
manifest = {"schema": "omn-audit/manifest@1",
            "checkpoint": {"path": "model.pt", "sha256": sha(ck), "preset": "preset.json"},
            "tokens": {"path": "tokens.bin", "sha256": sha(P.tokpath), "eos": P.EOS, "tokenizer_revision": "parity"},
            "rows": {"seq_len": P.SEQ, "num_seqs": P.NSEQ, "form": "packed"},
            "groups": 2, "bootstrap": {"resamples": 300, "seed": 4},
            "model": {"dtype": "fp32", "attention": "masked", "batch": 2},
            "conditions": conditions, "output": {"json": "sweep.json", "csv": "sweep.csv"}}
os.replace(P.tokpath, os.path.join(work, "tokens.bin"))
mpath = os.path.join(work, "manifest.json")
json.dump(manifest, open(mpath, "w"))
subprocess.run([omn, "-q", "intervene", "--manifest", mpath, "--force", "--mechanism"], check=True, stdout=subprocess.DEVNULL)
doc = json.load(open(os.path.join(work, "sweep.json")))
# no output may be an input reached through the manifest, whatever --force says: a transplant source,
# the preset file
for victim in ("source.pt", "preset.json"):
    before = open(os.path.join(work, victim), "rb").read()
    r = subprocess.run([omn, "-q", "intervene", "--manifest", mpath, "--force", "-o", os.path.join(work, victim)],
                       capture_output=True, text=True)
    expect(r.returncode == 2 and "is the input" in r.stderr and open(os.path.join(work, victim), "rb").read() == before,
           "intervene -o %s --force: exit 2, the input named and left as it was (%s)" % (victim, r.stderr.strip()[-90:]))

rows = P.rows("packed")
fsd = collections.OrderedDict((k, v.float()) for k, v in sd.items())
ctl = [Reference(fsd, cfg).nll(t, d)[0] for t, d in rows]
got_ctl = doc["control"]["open"]["result"]["sequences"]["nll_sum"]
expect(max(abs(a - b) / abs(b) for a, b in zip(got_ctl, ctl)) <= 1e-6, "control NLL vs reference")
# the tool's own verdicts are not evidence: the closing control against the opening one from the raw
# values, and the restore digest against the checkpoint's gains hashed here
close = doc["control"]["close"]["result"]["sequences"]
expect(close["nll_sum"] == got_ctl and close["tokens"] == doc["control"]["open"]["result"]["sequences"]["tokens"],
       "closing control equal to the opening one, value by value")
expect(doc["control"]["reproduced_bitwise"] == (close["nll_sum"] == got_ctl), "reproduced_bitwise says what the raw values say")
gname = lambda r, i: P.OMN_NAMES[r].replace("{i}", str(i))  # noqa: E731
working = hashlib.sha256(b"".join(sd[gname(r, i)].float().contiguous().numpy().tobytes()
                                  for i in range(L) for r in ("q_norm", "k_norm"))).hexdigest()
stored = hashlib.sha256(b"".join(sd[gname(r, i)].contiguous().view(torch.int16).numpy().tobytes()
                                 for i in range(L) for r in ("q_norm", "k_norm"))).hexdigest()
expect(doc["gains"]["working_sha256"] == working, "the fp32 gains' digest recomputes from the checkpoint")
expect(doc["gains"]["checkpoint_sha256"] == stored, "the stored gains' digest recomputes from the checkpoint")
for c in doc["conditions"]:
    op = dict(c["op"])
    ref_sd = apply(sd, op, L)
    ref_model = Reference(collections.OrderedDict((k, v.float()) for k, v in ref_sd.items()), cfg, bypass=bypassed(op, L))
    want = [ref_model.nll(t, d)[0] for t, d in rows]
    got = c["result"]["sequences"]["nll_sum"]
    rel = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    expect(rel <= 1e-6, "%s (%s): NLL relative error %.3g vs the reference applying the same op" % (c["id"], c["label"], rel))
    expect(c["restore"]["sha256"] == working and c["restore"]["ok"], c["id"] + ": restored gains hash to the checkpoint's, recomputed here")
    # the applied gains, bitwise: their digest and per-vector summary recompute from the reference's op
    applied = hashlib.sha256(b"".join(ref_sd[gname(r, i)].float().contiguous().numpy().tobytes()
                                      for i in range(L) for r in ("q_norm", "k_norm"))).hexdigest()
    expect(c["applied"]["sha256"] == applied, c["id"] + ": applied gains' digest equals the reference op's, bitwise")
    vec_ok = True
    for v in c["applied"]["vectors"]:
        n = gname(v["role"] + "_norm", v["layer"])
        new, old = ref_sd[n], sd[n]
        vec_ok = vec_ok and v["changed"] == int((new != old).sum()) and v["mean"] == new.double().mean().item() \
            and v["min"] == new.double().min().item() and v["max"] == new.double().max().item()
    expect(vec_ok and len(c["applied"]["vectors"]) == len(c["touched"]), c["id"] + ": applied per-vector summary recomputes")
    # every derived number recomputes from the raw per-sequence values
    s = c["result"]["sequences"]
    ppl = math.exp(sum(s["nll_sum"]) / sum(s["tokens"]))
    expect(abs(ppl - c["result"]["perplexity"]) <= 1e-12 * ppl, c["id"] + ": perplexity recomputes")
    d = (sum(s["nll_sum"]) - sum(got_ctl)) / sum(s["tokens"])
    expect(abs(d - c["vs_control"]["delta_nll_per_token"]["estimate"]) <= 1e-12 * max(1, abs(d)), c["id"] + ": delta recomputes")
    expect(abs(math.exp(d) - c["vs_control"]["ppl_ratio"]["estimate"]) <= 1e-12 * math.exp(d), c["id"] + ": ratio recomputes")
    expect(len(c["mechanism"]) == L and all(m["max_attention_logit"] is not None for m in c["mechanism"]), c["id"] + ": mechanism recorded")
expect(doc["gains"]["checkpoint_sha256"] != doc["gains"]["working_sha256"], "fp32 working copy of BF16 gains: digests differ")
# provenance: the manifest's exact bytes hash to its recorded digest; paths as the manifest names them
expect(hashlib.sha256(doc["manifest"]["bytes"].encode("utf-8")).hexdigest() == doc["manifest"]["sha256"] == sha(mpath),
       "the recorded manifest bytes hash to the recorded (and the file's) SHA-256")
expect(doc["checkpoint"]["path"] == "model.pt" and doc["tokens"]["path"] == "tokens.bin" and doc["manifest"]["path"] == "manifest.json",
       "paths recorded relative to the manifest")
expect(not any(i["path"].startswith("/") for i in doc["provenance"]["inputs"]), "no absolute path among the provenance inputs")
pv = doc["provenance"]
expect(pv["build"]["compiler"] and pv["host"]["os"] and pv["libraries"]["openblas"] and pv["libraries"]["libtorch"],
       "provenance: compiler, OS, OpenBLAS and libtorch recorded")
# compensate leaves every logit q.k unchanged: by 2 (exact in BF16) it reproduces the control bitwise;
# by 2.5 within the BF16 rounding of the stored gains
comp = {c["op"]["value"]: c for c in doc["conditions"] if c["op"]["op"] == "compensate"}
expect(comp[2.0]["result"]["sequences"]["nll_sum"] == got_ctl, "compensate 2 reproduces the control bitwise")
expect(comp[2.0]["vs_control"]["below_noise_floor"] and not comp[2.5]["vs_control"]["below_noise_floor"]
       and doc["noise_floor"]["nats_per_token"] == 1e-6, "the fp32 noise floor flags compensate 2 (0 nats), not 2.5")
d25 = abs(comp[2.5]["vs_control"]["delta_nll_per_token"]["estimate"])


def gain_rounding_bound(n=P.MCA_SAMPLES):
    """What one bf16 rounding of every stored gain can do: the control's NLL per token with each gain
    moved by a relative error uniform in [-u, u] (u = 2^-8), P.MCA_K times the RMS spread over n seeds."""
    g = torch.Generator().manual_seed(7)
    ntok = sum(doc["control"]["open"]["result"]["sequences"]["tokens"])
    spread = []
    for _ in range(n):
        moved = collections.OrderedDict(
            (k, v * (1 + (torch.rand(v.shape, generator=g) * 2 - 1) * P.BF16_U) if ("q_norm" in k or "k_norm" in k) else v)
            for k, v in fsd.items())
        spread.append((sum(Reference(moved, cfg).nll(t, d)[0] for t, d in rows) - sum(ctl)) / ntok)
    return P.MCA_K * math.sqrt(sum(x * x for x in spread) / len(spread))


b25 = gain_rounding_bound()
expect(0 < d25 <= b25, "compensate 2.5 is within BF16 rounding of the control (|dNLL| %.3g nats/token, bound %.3g)" % (d25, b25))
kinds = {c["op"]["op"] for c in doc["conditions"]}
expect({"rescale_pattern", "noise", "composite", "transplant", "bypass"} <= kinds and any("coordinates" in c["op"] for c in doc["conditions"]),
       "the new ops, coordinate subsets and composites ran")

# the activation cache: conditions touching only the last layer start there, bitwise equal
cached = dict(manifest, conditions=[{"op": "constant", "values": [2.0, 0.5], "targets": ["qk", "q"], "layers": [1]}],
              output={"json": "cached.json"})
json.dump(cached, open(mpath, "w"))
subprocess.run([omn, "-q", "intervene", "--manifest", mpath, "--force"], check=True, stdout=subprocess.DEVNULL)
full = json.load(open(os.path.join(work, "cached.json")))
subprocess.run([omn, "-q", "intervene", "--manifest", mpath, "--force", "--cache-activations"], check=True, stdout=subprocess.DEVNULL)
fast = json.load(open(os.path.join(work, "cached.json")))
expect(fast["cache"]["enabled"] and fast["cache"]["layer"] == 1, "cache used at layer 1")
for a, b in zip(full["conditions"], fast["conditions"]):
    expect(b["start_layer"] == 1, b["id"] + ": started at the cached layer")
    expect(a["result"]["sequences"] == b["result"]["sequences"], b["id"] + ": cached result bitwise equal to the full pass")

# --kl: each condition's next-token distributions against the control's, per sequence, against the
# reference's log-softmax; the closing control (and compensate by 2) against the control exactly 0
klm = dict(manifest, conditions=[{"op": "constant", "values": [2.0], "targets": ["q"], "layers": "all"},
                                 {"op": "compensate", "values": [2.0], "layers": "all"},
                                 {"op": "noise", "values": [0.2], "seeds": [4], "layers": "all"},
                                 {"op": "constant", "values": [1e30], "targets": ["qk"], "layers": "all"}],
           output={"json": "kl.json"})
json.dump(klm, open(mpath, "w"))
subprocess.run([omn, "-q", "intervene", "--manifest", mpath, "--force", "--kl"], check=True, stdout=subprocess.DEVNULL)
kd = json.load(open(os.path.join(work, "kl.json")))
ref_ctl = Reference(fsd, cfg)


def logprobs(model, t, d):
    lp = torch.log_softmax(model.forward(t, d)[:-1].float(), -1)
    return lp, d[1:] == d[:-1]


expect(kd["kl"] is True, "--kl recorded")
close_div = kd["control"]["close"]["divergence"]
expect(all(v == 0 for v in close_div["kl_sum"]) and close_div["top1_agree"] == kd["control"]["open"]["result"]["sequences"]["tokens"],
       "the closing control against the opening one: KL exactly 0, every top-1 agreeing")
for c in kd["conditions"][:3]:
    cond = Reference(collections.OrderedDict((k, v.float()) for k, v in apply(sd, dict(c["op"]), L).items()), cfg)
    kl_ref, agree_ref, dp_ref = [], [], []
    for t, d in rows:
        lp0, keep = logprobs(ref_ctl, t, d)
        lp1, _ = logprobs(cond, t, d)
        tgt = t[1:][:, None]
        kl_ref.append((lp0.exp() * (lp0 - lp1)).sum(-1)[keep].double().sum().item())
        agree_ref.append(int((lp0.argmax(-1) == lp1.argmax(-1))[keep].sum()))
        dp_ref.append((lp1.gather(-1, tgt)[:, 0].exp() - lp0.gather(-1, tgt)[:, 0].exp())[keep].double().sum().item())
    dv = c["divergence"]
    kl_err = max(abs(a - b) for a, b in zip(dv["kl_sum"], kl_ref))
    expect(kl_err <= 1e-4 * max(1e-3, max(kl_ref)), "%s: KL per sequence vs the reference (largest difference %.3g)" % (c["id"], kl_err))
    expect(sum(abs(a - b) for a, b in zip(dv["top1_agree"], agree_ref)) <= 1, c["id"] + ": top-1 agreement vs the reference")
    expect(max(abs(a - b) for a, b in zip(dv["dp_correct_sum"], dp_ref)) <= 1e-5, c["id"] + ": change in p(correct) vs the reference")
    summ = c["vs_control"]["divergence"]
    ntok = sum(c["result"]["sequences"]["tokens"])
    expect(abs(summ["kl_per_token"] - sum(dv["kl_sum"]) / ntok) <= 1e-15 and summ["top1_agreement"] == sum(dv["top1_agree"]) / ntok,
           c["id"] + ": the summary recomputes from the raw sums")
    q = dv["kl_quantiles"]
    expect(q["p50"] <= q["p90"] <= q["p99"] <= q["max"], c["id"] + ": KL quantiles ordered")
# a condition whose logits are not finite: nulls and a count, never garbage quantiles or a crash
bad = kd["conditions"][3]
expect(None in bad["divergence"]["kl_sum"] and bad["divergence"]["non_finite_tokens"] > 0 and
       bad["vs_control"]["divergence"]["kl_per_token"] is None, "non-finite KL: null sums, counted tokens, no mean")
comp = kd["conditions"][1]
expect(all(v == 0 for v in comp["divergence"]["kl_sum"]), "compensate 2 against the control: KL exactly 0")
expect(kd["conditions"][0]["vs_control"]["divergence"]["kl_per_token"] > 1e-4, "constant 2 on Q moves the distributions")
# the NLL is the same bits with and without --kl
plain = {c["label"]: c["result"]["sequences"]["nll_sum"] for c in doc["conditions"]}
expect(kd["control"]["open"]["result"]["sequences"]["nll_sum"] == got_ctl, "--kl leaves the control's NLL bitwise unchanged")
expect(kd["conditions"][0]["result"]["sequences"]["nll_sum"] == plain["constant 2 q all"], "--kl leaves a condition's NLL bitwise unchanged")

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
