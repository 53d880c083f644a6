#!/usr/bin/python3
"""Issue 52's regime analysis (tools/experiments/analyse.py regime) on a generated store, no training:

  check_regime_analysis.py WORKDIR

Six studies (training contexts 16/32/64 x the gains' LR x1/x10, seeds 0-2) are written as the runner
publishes them: study.json and its cells, each run's train.json and log.jsonl, after/panel.json and the
eval, sweep and track documents, every gain vector of every checkpoint drawn here. The analysis's numbers
are then recomputed with independent code from what was drawn (the gain vectors themselves, not track's
statistics; the sweep's per-sequence sums; the LR schedule vectorised): the early / late ratio and the
early layers' growth, the largest gain and negative coordinates, the distance from 1.0 (furthest and
RMS), the gains' LR integral and the ratio tests, the context differences paired by seed, the dependence
per layer group, the Student-t intervals. Then: a log whose LR is not the schedule's is refused; so is an
arm with two runs of one seed; an incomplete store is refused without OMN_ANALYSIS_PARTIAL and, with it, analysed from the published cells
into OMN_ANALYSIS_PARTIAL_OUT, marked partial, writing nothing into the store or the repository; a
partial output folder inside the repository is refused.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from harness import Harness  # noqa: E402

work = os.path.abspath(sys.argv[1])
h = Harness("/nonexistent/omn-audit", work)  # no omn-audit here: the harness only checks and counts
check = h.check
root = os.path.abspath(os.path.join(here, "..", ".."))
analyse = os.path.join(root, "tools", "experiments", "analyse.py")
store, out = os.path.join(work, "results"), os.path.join(work, "out")
EXP = "toy-regime"
CONTEXTS, SCALES, SEEDS = [16, 32, 64], [1, 10], [0, 1, 2]
STEPS, WARMUP, MIN_RATIO, LR, TOKENS_PER_STEP, PANEL_TOKENS = 40, 5, 0.1, 0.005, 128, 256
CKPTS, N_LAYERS, HEAD_DIM = [0, 10, 20, 30, 40], 4, 8
LABELS = ["constant 1 qk all", "constant 1 q all", "constant 1 k all", "constant 1 qk 0-1", "constant 1 qk 2-3", "vector_mean qk all"]
T975 = {1: 12.706, 2: 4.303}


def schedule(total):
    """the LR factor at steps 1..total, vectorised (warm-up, then cosine to MIN_RATIO)"""
    t = np.arange(1, total + 1, dtype=float)
    cos = MIN_RATIO + (1 - MIN_RATIO) * 0.5 * (1 + np.cos(np.pi * (t - WARMUP - 1) / (total - WARMUP - 1)))
    return np.where(t <= WARMUP, t / WARMUP, cos)


def vec_stats(v):
    return {"mean": float(v.mean()), "std": float(v.std()), "min": float(v.min()), "max": float(v.max())}


# --- the store, as the runner publishes it ----------------------------------------------------------
rng = np.random.default_rng(52)
drawn = {}  # (ctx, scale, seed) → {"gains": {step: array [layer, role, coord]}, "nll", "sweep": {label: (ctl, cond) sums, tokens}}
studies = []
mult = schedule(STEPS)
for scale in SCALES:
    for ctx in CONTEXTS:
        name = "regime-c%d-g%d" % (ctx, scale)
        sdir = os.path.join(store, name)
        os.makedirs(os.path.join(sdir, "after"))
        rows = PANEL_TOKENS // ctx
        json.dump({"path": "panel.bin", "seq_len": ctx, "rows": rows, "skipped_rows": 2}, open(os.path.join(sdir, "after", "panel.json"), "w"))
        runs = []
        for seed in SEEDS:
            rid = "qk-on_lr-5.000e-03_seed-%d" % seed
            rdir = os.path.join(sdir, "runs", rid)
            os.makedirs(rdir)
            host = {"cpu": "Test CPU %s" % ("B" if (ctx, scale, seed) == (64, 10, 2) else "A")}
            rec = {"name": "tiny " + rid, "steps": STEPS, "log": "log.jsonl", "provenance": {"host": host},
                   "schedule": {"warmup_steps": WARMUP, "decay": "cosine", "min_lr_ratio": MIN_RATIO},
                   "config": {"values": {"seq_len": ctx, "batch_size": TOKENS_PER_STEP // ctx, "steps": STEPS,
                                         "optimizer": {"lr": LR, "qk_gain_lr_scale": scale, "kind": "muon+adamw"}}}}
            json.dump(rec, open(os.path.join(rdir, "train.json"), "w"))
            with open(os.path.join(rdir, "log.jsonl"), "w") as f:
                f.write(json.dumps({"step": 0, "tokens_seen": 0, "eval": {"heldout_loss": 8.3}}) + "\n")  # as the trainer's first line
                for s in range(5, STEPS + 1, 5):
                    f.write(json.dumps({"step": s, "lr": LR * float(mult[s - 1])}) + "\n")
            # gains: each coordinate drifts from 1.0 with the LR integral, more in early layers at long contexts
            budget = np.concatenate([[0.0], np.cumsum(LR * scale * mult)])
            d_rng = np.random.default_rng(1000 * ctx + seed)  # the same initial direction at both gain LRs (paired by seed)
            direction = d_rng.normal(1.0, 0.6, size=(N_LAYERS, 2, HEAD_DIM))
            direction[:2] *= 1 + 0.3 * CONTEXTS.index(ctx) + 0.05 * d_rng.normal(size=(2, 2, HEAD_DIM))
            reach = 0.8 ** math.log10(scale) + 0.05 * rng.random()  # the x10 arm uses less of its budget
            gains = {st: 1.0 + reach * budget[st] * direction for st in CKPTS}
            if scale > 1:  # a negative coordinate in the last layer (nearer 1.0 than the furthest: the distances stay the drift's)
                gains[CKPTS[-1]][3, 1, 0] = -0.01 - 0.01 * seed
            ckpts = []
            for st in CKPTS:
                g = gains[st]
                layers = [{"layer": li, "q": vec_stats(g[li, 0]), "k": vec_stats(g[li, 1])} for li in range(N_LAYERS)]
                allv = g.ravel()
                ckpts.append({"step": st, "layers": layers, "statistics": dict(vec_stats(allv), count=int(allv.size),
                                                                                 count_negative=int((allv < 0).sum()))})
            json.dump({"schema": "omn-audit/track@1", "checkpoints": ckpts}, open(os.path.join(sdir, "after", rid + ".track.json"), "w"))
            tokens = [ctx] * rows
            nll = rng.normal(3.0 + 0.1 * seed, 0.2, size=rows) * ctx
            json.dump({"selection": {"num_seqs": rows}, "result": {"nll_sum": float(nll.sum()), "tokens": int(sum(tokens))}},
                      open(os.path.join(sdir, "after", rid + ".eval.json"), "w"))
            conds, sweep_sums = [], {}
            for i, label in enumerate(LABELS):
                cnll = nll + rng.normal(0.02 * (i + 1) * (1 + CONTEXTS.index(ctx)), 0.01, size=rows) * ctx
                est = float((cnll.sum() - nll.sum()) / sum(tokens))
                sweep_sums[label] = est
                conds.append({"label": label, "op": label.split()[0], "seconds": 2.0,
                              "result": {"sequences": {"nll_sum": cnll.tolist(), "tokens": tokens}},
                              "vs_control": {"delta_nll_per_token": {"estimate": est, "low": est - 0.01, "high": est + 0.01},
                                             "divergence": {"kl_per_token": 0.01, "top1_agreement": 0.9}}})
            json.dump({"selection": {"num_seqs": rows}, "conditions": conds,
                       "control": {"open": {"seconds": 1.0, "result": {"sequences": {"nll_sum": nll.tolist(), "tokens": tokens}}},
                                   "close": {"seconds": 1.0}}}, open(os.path.join(sdir, "after", rid + ".sweep.json"), "w"))
            drawn[(ctx, scale, seed)] = {"gains": gains, "budget": budget}
            runs.append({"id": rid, "dir": "runs/" + rid, "seed": seed, "status": "finished", "qk_norm": True, "seconds": 60.0 + seed,
                         "lr": LR})
        for k, r in enumerate(runs):
            json.dump({"runs": [r], "grid": {"cells": len(runs)}, "provenance": {"host": {"cpu": "Test CPU A"}}},
                      open(os.path.join(sdir, "cell-%03d.json" % k), "w"))
        json.dump({"runs": runs, "grid": {"cells": len(runs)}, "provenance": {"host": {"cpu": "Test CPU A"}}}, open(os.path.join(sdir, "study.json"), "w"))
        studies.append(os.path.join(sdir, "study.json"))
with open(os.path.join(store, "compute.jsonl"), "w") as f:
    f.write(json.dumps({"experiment": EXP, "step": "train regime-c16-g1 cell 0/3", "seconds": 5.0}) + "\n")
env = dict(os.environ, OMN_EXPERIMENTS_STORE=store, OMN_EXPERIMENTS_OUT=out)
env.pop("OMN_ANALYSIS_PARTIAL", None)


def analysis(extra=None, paths=None):
    return subprocess.run([sys.executable, analyse, "regime", EXP, *(paths or studies)], env=dict(env, **(extra or {})),
                          capture_output=True, text=True)


p = analysis()
if p.returncode != 0:
    print(p.stdout, p.stderr)
check(p.returncode == 0, "analyse.py regime on the generated store exits 0")
an = json.load(open(os.path.join(store, EXP, "analysis.json")))


# --- the numbers, recomputed from what was drawn ------------------------------------------------------
def ci(v):
    v = np.array(v, dtype=float)
    m = v.mean()
    half = T975[len(v) - 1] * v.std(ddof=1) / math.sqrt(len(v))
    return m, m - half, m + half


def same(iv, v, what, tol=1e-10):
    m, lo, hi = ci(v)
    ok = all(abs(a - b) <= tol * max(1.0, abs(b)) for a, b in ((iv["mean"], m), (iv["low"], lo), (iv["high"], hi)))
    check(ok, "%s: %.6g [%.6g, %.6g] recomputed (analysis %.6g [%.6g, %.6g])" % (what, m, lo, hi, iv["mean"], iv["low"], iv["high"]))


def early(g):
    return g[:2].mean()  # equal counts: the mean of layers 0-1's Q and K means is the mean of their coordinates


def late(g):
    return g[-2:].mean()


def arm(ctx, scale):
    return an["arms"]["context %d, gains' LR ×%g" % (ctx, scale)]


end, mid = CKPTS[-1], CKPTS[2]
check(an["contexts"] == CONTEXTS and an["gain_lr_scales"] == SCALES and an["seeds"] == SEEDS,
      "the arms: contexts %s x gain LR scales %s, seeds %s" % (an["contexts"], an["gain_lr_scales"], an["seeds"]))
check(an["tokens_per_step"] == [TOKENS_PER_STEP] and an["panel_tokens"] == [PANEL_TOKENS],
      "equal tokens a step (%s) and panel tokens (%s) at every context" % (an["tokens_per_step"], an["panel_tokens"]))
for ctx, scale in ((16, 1), (64, 10)):
    d = [drawn[(ctx, scale, sd)] for sd in SEEDS]
    f = arm(ctx, scale)["final"]
    tag = "context %d, x%d" % (ctx, scale)
    same(f["early_over_late"], [early(x["gains"][end]) / late(x["gains"][end]) for x in d], tag + ": early / late")
    same(f["early_growth"], [early(x["gains"][end]) - early(x["gains"][0]) for x in d], tag + ": early layers' growth")
    same(f["max"], [x["gains"][end].max() for x in d], tag + ": largest gain")
    same(f["negative"], [(x["gains"][end] < 0).sum() for x in d], tag + ": negative coordinates")
    same(f["distance_furthest"], [np.abs(x["gains"][end] - 1).max() for x in d], tag + ": furthest coordinate from 1.0")
    same(f["distance_rms"], [np.sqrt(((x["gains"][end] - 1) ** 2).mean()) for x in d], tag + ": RMS distance from 1.0 (from the vectors)")
    same(f["gain_lr_budget"], [LR * scale * schedule(STEPS).sum()] * 3, tag + ": the gains' LR integral")
    same(f["budget_use_last_interval"], [(np.abs(x["gains"][end] - 1).max() - np.abs(x["gains"][CKPTS[-2]] - 1).max())
                                         / (x["budget"][end] - x["budget"][CKPTS[-2]]) for x in d], tag + ": last-interval use")
    fur = lambda g: np.abs(g - 1).max()  # noqa: E731
    same(f["budget_use_last_minus_run"], [(fur(x["gains"][end]) - fur(x["gains"][CKPTS[-2]])) / (x["budget"][end] - x["budget"][CKPTS[-2]])
                                          - fur(x["gains"][end]) / x["budget"][end] for x in d], tag + ": last-interval use − the run's")
    traj = next(p for p in arm(ctx, scale)["trajectory"] if p["step"] == mid)
    same(traj["layers"][1]["qk"], [x["gains"][mid][1].mean() for x in d], tag + ": layer 1's gain mean at step %d" % mid)
    same(traj["layers"][3]["k"], [x["gains"][mid][3, 1].mean() for x in d], tag + ": layer 3's K gain mean at step %d" % mid)
    for label, key in (("constant 1 qk 0-1", "dependence_early"), ("constant 1 qk 2-3", "dependence_late"), ("constant 1 qk all", "dependence_all")):
        v = []
        for sd in SEEDS:
            sw = json.load(open(os.path.join(store, "regime-c%d-g%d" % (ctx, scale), "after", "qk-on_lr-5.000e-03_seed-%d.sweep.json" % sd)))
            c = next(c for c in sw["conditions"] if c["label"] == label)
            ctl = sw["control"]["open"]["result"]["sequences"]
            v.append((sum(c["result"]["sequences"]["nll_sum"]) - sum(ctl["nll_sum"])) / sum(ctl["tokens"]))
        same(f[key], v, tag + ": %s from the sweep's per-sequence sums" % label, 1e-9)
    v = [json.load(open(os.path.join(store, "regime-c%d-g%d" % (ctx, scale), "after", "qk-on_lr-5.000e-03_seed-%d.eval.json" % sd)))["result"]
         for sd in SEEDS]
    same(f["panel_loss"], [r["nll_sum"] / r["tokens"] for r in v], tag + ": held-out NLL")
budget1 = LR * schedule(STEPS).sum()
check(abs(arm(32, 1)["final"]["gain_lr_budget"]["mean"] - budget1) < 1e-12 and
      abs(arm(32, 10)["final"]["gain_lr_budget"]["mean"] - 10 * budget1) < 1e-11,
      "the gains' LR integral is peak LR x scale x the schedule summed (%.6f at x1)" % budget1)
# (a) the context: each context − the shortest, paired by seed
for scale in SCALES:
    row = an["context_test"]["by_gain_lr"]["x%g" % scale]["64"]
    e = lambda ctx, sd: early(drawn[(ctx, scale, sd)]["gains"][end]) / late(drawn[(ctx, scale, sd)]["gains"][end])  # noqa: E731
    same(row["early_over_late"], [e(64, sd) - e(16, sd) for sd in SEEDS], "x%d: early / late, context 64 − 16, paired by seed" % scale)
    g = lambda ctx, sd: early(drawn[(ctx, scale, sd)]["gains"][end]) - 1  # noqa: E731
    same(row["early_growth"], [g(64, sd) - g(16, sd) for sd in SEEDS], "x%d: early growth, context 64 − 16, paired by seed" % scale)
check(an["context_test"]["by_gain_lr"]["x1"]["64"]["verdicts"]["early_over_late"] == "early / late ratio higher",
      "the early-layer drift drawn larger at long contexts reads 'higher' (%s)" % an["context_test"]["by_gain_lr"]["x1"]["64"]["verdicts"])
# (b) the budget: x10 over x1 per seed
for ctx in CONTEXTS:
    row = an["budget_test"]["by_context"][str(ctx)]["x10"]
    fur = lambda sc, sd: np.abs(drawn[(ctx, sc, sd)]["gains"][end] - 1).max()  # noqa: E731
    same(row["furthest_ratio"], [fur(10, sd) / fur(1, sd) for sd in SEEDS], "context %d: furthest distance x10 / x1, per seed" % ctx)
    check(abs(row["budget_ratio"]["mean"] - 10) < 1e-9, "context %d: the budget's ratio is the LRs' (%.12g)" % (ctx, row["budget_ratio"]["mean"]))
    check("between ×1 and ×10): partly gradient-limited" in row["verdict_furthest"], "context %d: gains drawn to use less of a x10 "
          "budget read partly gradient-limited (%s)" % (ctx, row["verdict_furthest"]))
check(abs(an["omn1_reference"]["early_mean"] - (25.032 + 24.737 + 26.249 + 26.087) / 4) < 1e-12 and an["omn1_reference"]["max"] == 68.5,
      "OMN-1's reference: the early mean and maximum from configs/omn-1-reference-profile.json")
check(an["compute"]["runs_by_cpu"] == {"Test CPU A": 17, "Test CPU B": 1} and an["cpu"] == "17 runs on Test CPU A, 1 on Test CPU B",
      "the compute record counts each run's CPU (%s)" % an["cpu"])
# the tables print the JSON's numbers
md = open(os.path.join(out, "docs", "experiments", EXP + ".md")).read()
row = an["context_test"]["by_gain_lr"]["x1"]["64"]["early_over_late"]
want = "%+.3f [%+.3f, %+.3f]" % (row["mean"], row["low"], row["high"])
check("| ×1 | 64 − 16 | " + want in md, "the context table prints the JSON's difference (%s)" % want)
f = arm(16, 10)["final"]["budget_use"]
check("| context 16, gains' LR ×10 | " in md and "%.3f [%.3f, %.3f]" % (f["mean"], f["low"], f["high"]) in md, "the budget table prints the JSON's use")
check("PARTIAL" not in md and "partial" not in an, "a complete store's analysis is not marked partial")
svg = open(os.path.join(out, "docs", "figures", "experiments", EXP + ".svg")).read()
check("17 runs on Test CPU A, 1 on Test CPU B" in svg, "the figure names the CPUs the runs trained on")
numbers_md = set(re.findall(r"[-+]?\d+\.\d{3,}", md))
check(len(numbers_md) > 100, "the tables print %d numbers" % len(numbers_md))

# a log whose LR is not the schedule's is refused: the integral would be of another schedule
log = os.path.join(store, "regime-c32-g10", "runs", "qk-on_lr-5.000e-03_seed-1", "log.jsonl")
saved = open(log).read()
lines = saved.splitlines()
bad = json.loads(lines[4])
bad["lr"] *= 1.01
open(log, "w").write("\n".join(lines[:4] + [json.dumps(bad)] + lines[5:]) + "\n")
p = analysis()
open(log, "w").write(saved)
check(p.returncode != 0 and "logged LR" in p.stderr, "a run whose logged LR is not the schedule's is refused (%s)" % p.stderr.strip()[-100:])

# a study passed twice: an arm with two runs of one seed is refused (pairing by seed would pick one)
p = analysis(paths=studies + studies[:1])
check(p.returncode != 0 and "seed 0 in more than one run" in p.stderr, "an arm with a seed twice is refused (%s)" % p.stderr.strip()[-90:])

# an incomplete store: regime-c64-g10 has two of its three cells and no study.json yet
shutil.rmtree(os.path.join(store, EXP))
shutil.rmtree(out)
inc = os.path.join(store, "regime-c64-g10")
os.remove(os.path.join(inc, "study.json"))
os.remove(os.path.join(inc, "cell-002.json"))
p = analysis()
check(p.returncode != 0 and "is not complete" in p.stderr and "OMN_ANALYSIS_PARTIAL" in p.stderr,
      "without OMN_ANALYSIS_PARTIAL a study without study.json is refused, naming the variable (%s)" % p.stderr.strip()[-80:])
partial_dir = tempfile.TemporaryDirectory()  # outside the repository, where the build's fixtures are
partial_out = os.path.join(partial_dir.name, "partial")
p = analysis({"OMN_ANALYSIS_PARTIAL": "1", "OMN_ANALYSIS_PARTIAL_OUT": partial_out})
if p.returncode != 0:
    print(p.stdout, p.stderr)
pa = json.load(open(os.path.join(partial_out, "results", EXP, "analysis.json"))) if p.returncode == 0 else {}
check(p.returncode == 0 and pa.get("partial", {}).get("regime-c64-g10") == {"published": 2, "expected": 3, "from": "cells"} and
      pa["partial"]["regime-c16-g1"]["from"] == "study.json",
      "OMN_ANALYSIS_PARTIAL: the incomplete study read from its published cells, recorded in analysis.json (%s)" % pa.get("partial", {}).get("regime-c64-g10"))
check(p.returncode == 0 and pa["arms"]["context 64, gains' LR ×10"]["final"]["early_over_late"]["values"][2] is None and
      pa["arms"]["context 64, gains' LR ×10"]["final"]["early_over_late"]["n"] == 2, "the partial arm has the published seeds only")
pmd = open(os.path.join(partial_out, "docs", "experiments", EXP + ".md")).read() if p.returncode == 0 else ""
psvg = open(os.path.join(partial_out, "docs", "figures", "experiments", EXP + ".svg")).read() if p.returncode == 0 else ""
check("**PARTIAL: 17 of 18 cells" in pmd and "PARTIAL: 17 of 18 cells" in psvg, "the partial tables and figure say so")
check(not os.path.exists(os.path.join(store, EXP)) and not os.path.exists(out) and not os.path.exists(os.path.join(root, "results", EXP)),
      "a partial analysis writes nothing into the store, the docs folder or the repository")
p = analysis({"OMN_ANALYSIS_PARTIAL": "1", "OMN_ANALYSIS_PARTIAL_OUT": os.path.join(root, "results")})
check(p.returncode != 0 and "inside the repository" in p.stderr, "a partial output folder inside the repository is refused")
h.finish()
