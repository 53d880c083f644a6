#!/usr/bin/python3
"""The analysis of one of issue 29's experiments, from the raw documents alone:

  analyse.py ablation|routing|depth EXPERIMENT STUDY_JSON...

Reads each study document (the merged cells in the store, results/STUDY/study.json), its runs'
train.json (through the study) and what after_training.py wrote (STUDY_DIR/after/: eval, sweep, track
documents), and writes
  results/EXPERIMENT/analysis.json       every number below, with the inputs' paths
  docs/experiments/EXPERIMENT.md         the tables (generated: do not edit)
  docs/figures/experiments/EXPERIMENT.svg   the figure
Intervals over seeds are Student-t on the per-seed values (paired by seed where the comparison is:
the same seed gives two arms the same initial weights and batch order); intervals of one model are the
paired bootstrap of omn-audit intervene (over the panel's rows). A difference whose interval contains
0 is reported as no measurable difference.
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
out_root = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_OUT", root))  # where docs/ is written
store_root = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_STORE", os.path.join(root, "results")))  # analysis.json, compute.jsonl
kind, experiment, study_paths = sys.argv[1], sys.argv[2], sys.argv[3:]
# two-sided 95 % Student-t quantiles, df 1..30
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
plt.rcParams.update({"font.size": 9, "svg.hashsalt": "omn-audit", "svg.fonttype": "none"})
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]  # Okabe-Ito


def interval(values):
    """mean and the 95 % Student-t interval of the mean (None without two values)."""
    v = [x for x in values if x is not None]
    n = len(v)
    if n == 0:
        return {"n": 0, "mean": None, "low": None, "high": None, "values": values}
    m = sum(v) / n
    if n < 2:
        return {"n": n, "mean": m, "low": None, "high": None, "values": values}
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    h = (T975[n - 2] if n - 1 <= 30 else 1.96) * sd / math.sqrt(n)
    return {"n": n, "mean": m, "low": m - h, "high": m + h, "sd": sd, "values": values}


def fmt(iv, digits=4, sign=False):
    if iv["mean"] is None:
        return "—"
    f = "%+.*f" if sign else "%.*f"
    s = f % (digits, iv["mean"])
    if iv["low"] is not None:
        s += " [%s, %s]" % (f % (digits, iv["low"]), f % (digits, iv["high"]))
    return s


def spread(values, digits=4):
    """mean and [min, max] over seeds, for bounded quantities (KL >= 0, agreement in [0, 1])."""
    v = [x for x in values if x is not None]
    return "—" if not v else "%.*f [%.*f, %.*f]" % (digits, sum(v) / len(v), digits, min(v), digits, max(v))


def verdict(iv, what):
    if iv["mean"] is None:
        return "no value"
    if iv["low"] is None:
        return "one value: no interval"
    if iv["low"] > 0 or iv["high"] < 0:
        return "%s %s" % (what, "higher" if iv["low"] > 0 else "lower")
    return "%s: no measurable difference (the interval contains 0)" % what


class Study:
    def __init__(self, path):
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path))
        self.doc = json.load(open(path))
        self.after = os.path.join(self.dir, "after")
        self.runs = self.doc["runs"]

    def train(self, r):
        return json.load(open(os.path.join(self.dir, r["dir"], "train.json")))

    def panel_rows(self):
        return json.load(open(os.path.join(self.after, "panel.json")))["rows"]

    def panel_loss(self, r):
        p = os.path.join(self.after, r["id"] + ".eval.json")
        if r["status"] != "finished" or not os.path.exists(p):
            return None
        doc = json.load(open(p))
        if doc["selection"]["num_seqs"] != self.panel_rows():
            sys.exit("analysis: %s scored %d rows, the panel has %d" % (p, doc["selection"]["num_seqs"], self.panel_rows()))
        res = doc["result"]
        return res["nll_sum"] / res["tokens"]

    def sweep(self, r):
        p = os.path.join(self.after, r["id"] + ".sweep.json")
        if not (r["qk_norm"] and r["status"] == "finished" and os.path.exists(p)):
            return None
        doc = json.load(open(p))
        if doc["selection"]["num_seqs"] != self.panel_rows():
            sys.exit("analysis: %s scored %d rows, the panel has %d" % (p, doc["selection"]["num_seqs"], self.panel_rows()))
        return doc

    def track(self, r):
        p = os.path.join(self.after, r["id"] + ".track.json")
        return json.load(open(p)) if os.path.exists(p) else None


def condition_effects(sweep):
    """label → ΔNLL/token (estimate, paired bootstrap low/high), KL per token, top-1 agreement."""
    out = {}
    for c in sweep["conditions"]:
        vs = c["vs_control"]
        d = vs.get("divergence") or {}
        out[c["label"]] = {"delta_nll": vs["delta_nll_per_token"]["estimate"], "low": vs["delta_nll_per_token"]["low"],
                           "high": vs["delta_nll_per_token"]["high"], "kl_per_token": d.get("kl_per_token"),
                           "top1_agreement": d.get("top1_agreement"), "op": c["op"]}
    return out


def fast_learning(rec):
    """The criterion of docs/results.md: the held-out loss fell by less than 5 % of its total drop from
    L0 over the last quarter of training."""
    ev = [(e["step"], e["heldout_loss"]) for e in rec["evals"] if e["heldout_loss"] is not None]
    steps = rec["steps"]
    l0, lend = ev[0][1], ev[-1][1]
    at = 0.75 * steps  # the loss there, linear between the evaluations on either side
    (s0, a), (s1, b) = next((ev[i], ev[i + 1]) for i in range(len(ev) - 1) if ev[i][0] <= at <= ev[i + 1][0])
    q = a if s1 == s0 else a + (b - a) * (at - s0) / (s1 - s0)
    total, last = l0 - lend, q - lend
    return {"l0": l0, "at_three_quarters": q, "final": lend, "last_quarter_drop": last, "total_drop": total,
            "share": last / total if total > 0 else None, "past_fast_learning": total > 0 and last < 0.05 * total}


def save(fig, name):
    d = os.path.join(out_root, "docs", "figures", "experiments")
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, name + ".svg")
    fig.savefig(p, metadata={"Date": None})
    plt.close(fig)
    return os.path.relpath(p, out_root)


def write(analysis, markdown):
    out = os.path.join(store_root, experiment)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "analysis.json"), "w") as f:
        json.dump(analysis, f, indent=1)
        f.write("\n")
    d = os.path.join(out_root, "docs", "experiments")
    os.makedirs(d, exist_ok=True)
    head = ("<!-- generated by `tools/run-experiments.sh %s` (tools/experiments/analyse.py %s): do not edit -->\n\n"
            % (experiment, kind))
    with open(os.path.join(d, experiment + ".md"), "w") as f:
        f.write(head + markdown)
    print("analysis: results/%s/analysis.json, docs/experiments/%s.md" % (experiment, experiment))


def compute_note(studies):
    """the runs' own training time, the sweeps' time, and every step the runner accounted (all invocations)."""
    secs = sum(r.get("seconds") or 0 for s in studies for r in s.runs)
    acct = os.path.join(store_root, "compute.jsonl")
    steps = {}
    if os.path.exists(acct):
        for line in open(acct):
            a = json.loads(line)
            if a["experiment"] == experiment:
                kind = a["step"].split(" cell ")[0]  # "train STUDY cell k/N" → "train STUDY"
                steps[kind] = steps.get(kind, 0.0) + a["seconds"]
    sweep = 0.0
    for s in studies:
        for r in s.runs:
            sw = s.sweep(r)
            if sw:
                sweep += sw["control"]["open"]["seconds"] + sw["control"]["close"]["seconds"] + sum(c["seconds"] for c in sw["conditions"])
    cpu = studies[0].doc["provenance"].get("host", {})
    return {"training_seconds": secs, "sweep_seconds": sweep, "host": cpu, "runner_seconds_by_step": steps}


# --- experiment 2: the matched ablation ----------------------------------------------------------
def pointer(doc, ptr):
    for part in ptr.strip("/").split("/"):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


class Grid:
    """The studies of one ablation read as one grid (a study added to widen the LR grid, say): each
    (QK-norm, LR, seed) in exactly one study, every study scored on the same panel."""

    def __init__(self, studies):
        self.studies = studies
        self.where = {}
        for st in studies:
            for r in st.runs:
                key = (r["qk_norm"], r["lr"], r["seed"])
                if key in self.where:
                    sys.exit("analysis: %s and %s both train QK-norm %s, LR %g, seed %d: a grid's cell must be in one study"
                             % (self.where[key][0].path, st.path, r["qk_norm"], r["lr"], r["seed"]))
                self.where[key] = (st, r)
        def panel(st):  # by its digests and rows; where the held-out file lay on disk may differ between sessions
            d = json.load(open(os.path.join(st.after, "panel.json")))
            d.get("derived_from", {}).pop("path", None)
            return d
        for st in studies[1:]:
            if panel(st) != panel(studies[0]):
                sys.exit("analysis: %s was scored on another panel than %s (after/panel.json): its runs cannot join the grid"
                         % (st.path, studies[0].path))
        for st in studies[1:]:  # one model code and base config, or the grid mixes two experiments
            for ptr in ("/base_config/sha256", "/provenance/model_code_fingerprint"):
                a, b = pointer(studies[0].doc, ptr), pointer(st.doc, ptr)
                if a != b:
                    sys.exit("analysis: %s differs from %s at %s (%r, %r): its runs cannot join the grid" % (st.path, studies[0].path, ptr, b, a))
        arms = sorted({k[0] for k in self.where})
        lrs = sorted({k[1] for k in self.where})
        seeds = sorted({k[2] for k in self.where})
        missing = [k for k in ((q, lr, sd) for q in arms for lr in lrs for sd in seeds) if k not in self.where]
        if missing:  # every arm at every LR for every seed: the best-LR means and the pairs need the full product
            sys.exit("analysis: the grid of %s lacks QK-norm %s at LR %g for seed %d (and %d more): each study must train "
                     "every arm and seed of the others" % (", ".join(st.path for st in studies), "on" if missing[0][0] else "off",
                                                            missing[0][1], missing[0][2], len(missing) - 1))
        self.panel_rows = studies[0].panel_rows
        self.after = studies[0].after
        self.runs = [r for st in studies for r in st.runs]

    def run(self, key):
        return self.where[key][1]

    def panel_loss(self, key):
        st, r = self.where[key]
        return st.panel_loss(r)

    def sweep(self, key):
        st, r = self.where[key]
        return st.sweep(r)

    def train(self, key):
        st, r = self.where[key]
        return st.train(r)

    def best_lr(self, qk):
        """The arm's best LR over the whole grid: each study chose its own on the training-time rows
        (among its LRs where every run is stable — finished, its final held-out loss below its
        initial — the lowest mean final held-out loss); the choice with the lowest such loss."""
        arms = [a for st in self.studies for a in st.doc["arms"] if a["qk_norm"] == qk and a["best_lr"] is not None]
        if not arms:
            sys.exit("analysis: QK-norm %s has no LR where every run finished" % ("on" if qk else "off"))
        return min(arms, key=lambda a: a["best_loss"])["best_lr"]


def ablation():
    s = Grid([Study(p) for p in study_paths])
    lrs = sorted({r["lr"] for r in s.runs})
    seeds = sorted({r["seed"] for r in s.runs})
    best = {qk: s.best_lr(qk) for qk in (True, False)}
    rows, fig_rows = [], []
    for lr in lrs:
        on = [s.panel_loss((True, lr, sd)) for sd in seeds]
        off = [s.panel_loss((False, lr, sd)) for sd in seeds]
        diff = [b - a if a is not None and b is not None else None for a, b in zip(on, off)]
        remove = []
        for sd in seeds:
            sw = s.sweep((True, lr, sd))
            remove.append(condition_effects(sw)["constant 1 qk all"]["delta_nll"] if sw else None)
        rows.append({"lr": lr, "on": interval(on), "off": interval(off), "off_minus_on": interval(diff),
                     "gains_to_1": interval(remove),
                     "diverged_on": sum(s.run((True, lr, sd))["status"] != "finished" for sd in seeds),
                     "diverged_off": sum(s.run((False, lr, sd))["status"] != "finished" for sd in seeds)})
    # at each arm's best LR (chosen by the study on the training-time evaluation rows, not the panel)
    on_best = [s.panel_loss((True, best[True], sd)) for sd in seeds]
    off_best = [s.panel_loss((False, best[False], sd)) for sd in seeds]
    best_diff = interval([b - a for a, b in zip(on_best, off_best)])
    # experiment 9 side by side, paired by seed: what removing the learned gains after training costs
    # (the on arm's best LR, constant 1.0 on Q and K) minus what training without QK-norm costs
    # (each arm at its best LR); None where a seed lacks either
    remove_best = []
    for sd in seeds:
        sw = s.sweep((True, best[True], sd))
        remove_best.append(condition_effects(sw)["constant 1 qk all"]["delta_nll"] if sw else None)
    removal_vs_training = interval([r - (b - a) if None not in (r, a, b) else None
                                    for r, a, b in zip(remove_best, on_best, off_best)])
    per_cond = {}
    for sd in seeds:
        sw = s.sweep((True, best[True], sd))
        for label, e in (condition_effects(sw).items() if sw else []):
            per_cond.setdefault(label, []).append(e)
    conds = {label: {"delta_nll": interval([e["delta_nll"] for e in es]),
                     "kl_per_token": [e["kl_per_token"] for e in es],
                     "top1_agreement": [e["top1_agreement"] for e in es],
                     "per_model": es} for label, es in per_cond.items()}
    crit = {qk: [fast_learning(s.train((qk, best[qk], sd))) for sd in seeds] for qk in (True, False)}
    analysis = {"experiment": experiment, "studies": study_paths, "lrs": lrs, "seeds": seeds,
                "best_lr": {"qk_on": best[True], "qk_off": best[False]}, "by_lr": rows,
                "best_vs_best": {"on": interval(on_best), "off": interval(off_best), "off_minus_on": best_diff,
                                 "gains_to_1": interval(remove_best), "removal_minus_training_without": removal_vs_training},
                "sweep_at_best_on": conds, "fast_learning": {"qk_on": crit[True], "qk_off": crit[False]},
                "compute": compute_note(s.studies)}

    # the figure: left, both costs against the peak LR; right, the sweep at the on arm's best LR
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [1, 1.25]})
    def whisk(axis, xs, ivs, colour, label, marker, offset=1.0):
        xs2 = [x * offset for x, iv in zip(xs, ivs) if iv["mean"] is not None]
        m = [iv["mean"] for iv in ivs if iv["mean"] is not None]
        lo = [iv["mean"] - iv["low"] if iv["low"] is not None else 0 for iv in ivs if iv["mean"] is not None]
        hi = [iv["high"] - iv["mean"] if iv["high"] is not None else 0 for iv in ivs if iv["mean"] is not None]
        axis.errorbar(xs2, m, yerr=[lo, hi], color=colour, marker=marker, capsize=3, label=label, lw=1.5, ms=5)
    whisk(ax, lrs, [r["off_minus_on"] for r in rows], COLOURS[1], "trained without QK-norm\n(off − on, same LR, paired by seed)", "o", 0.97)
    whisk(ax, lrs, [r["gains_to_1"] for r in rows], COLOURS[0], "learned gains → 1.0 after training\n(Q and K, every layer)", "s", 1.03)
    ax.axhline(0, color="#888", lw=0.8)
    ax.axvline(best[True], color=COLOURS[0], lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xticks(lrs)
    ax.set_xticklabels(["%.3g" % x for x in lrs])
    ax.minorticks_off()
    ax.set_xlabel("peak AdamW learning rate (Muon scaled with it)")
    ax.set_ylabel("Δ held-out NLL (nats/token)")
    ax.set_title("The two costs, mean over %d seeds, 95%% t-interval" % len(seeds), fontsize=9)
    ax.legend(fontsize=8, frameon=False, loc="best")
    consts = [0.5, 0.75, 1.0, 1.5, 2.0]
    for i, (target, name) in enumerate((("qk", "Q and K"), ("q", "Q only"), ("k", "K only"))):
        ivs = [conds.get("constant %g %s all" % (c, target), {"delta_nll": interval([])})["delta_nll"] for c in consts]
        whisk(bx, consts, ivs, COLOURS[i], "constant on " + name, "os^"[i], 1 + 0.015 * (i - 1))
    bx.axhspan(best_diff["low"] if best_diff["low"] is not None else best_diff["mean"],
               best_diff["high"] if best_diff["high"] is not None else best_diff["mean"], color=COLOURS[1], alpha=0.18, lw=0)
    bx.axhline(best_diff["mean"], color=COLOURS[1], lw=1.2, ls="--",
               label="trained without QK-norm (each arm at its best LR)")
    for j, (label, name) in enumerate((("vector_mean qk all", "each vector → its mean"), ("global_mean qk all", "one global mean"),
                                       ("permute seed 1 qk all", "shuffled within vectors"), ("swap_qk qk all", "Q ↔ K swapped"))):
        if label in conds:
            iv = conds[label]["delta_nll"]
            x = 2.6 + 0.35 * j
            bx.errorbar([x], [iv["mean"]], yerr=[[iv["mean"] - (iv["low"] or iv["mean"])], [(iv["high"] or iv["mean"]) - iv["mean"]]],
                        color=COLOURS[6], marker="D", capsize=3, ms=4)
            bx.annotate(name, (x, iv["mean"]), textcoords="offset points", xytext=(0, 8), rotation=90, fontsize=7, ha="center", va="bottom")
    bx.axhline(0, color="#888", lw=0.8)
    bx.set_xscale("log")
    bx.set_xticks(consts + [2.6, 2.95, 3.3, 3.65])
    bx.set_xticklabels(["0.5", "0.75", "1", "1.5", "2", "", "", "", ""])
    bx.minorticks_off()
    bx.set_xlabel("constant every Q/K gain is set to (controls at the right)")
    bx.set_title("After training, at the QK-on arm's best LR (%.3g)" % best[True], fontsize=9)
    bx.legend(fontsize=8, frameon=False, loc="upper left")
    fig.tight_layout()
    analysis["figure"] = save(fig, experiment)

    md = ["## %s: QK-norm on vs off, and removing the learned gains after training\n" % experiment,
          "Panel: the first %d rows of %d tokens of the held-out addresses after the rows the runs evaluated during "
          "training (`after/panel.json`); NLL in nats/token; intervals: 95 %% Student-t over seeds %s.\n"
          % (s.panel_rows(), json.load(open(os.path.join(s.after, "panel.json")))["seq_len"], seeds)
          + ("Studies, read as one grid: %s.\n" % ", ".join("`%s` (LR %s)" % (os.path.basename(st.dir), ", ".join(
              "%.3g" % x for x in sorted({r["lr"] for r in st.runs}))) for st in s.studies) if len(s.studies) > 1 else ""),
          "| peak LR | QK-norm on | QK-norm off | off − on (paired by seed) | gains → 1.0 after training (Δ, on) | diverged on / off |",
          "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append("| %.3g%s | %s | %s | %s | %s | %d / %d |" % (r["lr"], " (best on)" if r["lr"] == best[True] else "",
                  fmt(r["on"]), fmt(r["off"]), fmt(r["off_minus_on"], sign=True), fmt(r["gains_to_1"], sign=True),
                  r["diverged_on"], r["diverged_off"]))
    md += ["", "Each arm at its own best LR (chosen by the study on the training-time rows: on %.3g, off %.3g): "
           "on %s, off %s, off − on %s (%s)." % (best[True], best[False], fmt(interval(on_best)), fmt(interval(off_best)),
                                                fmt(best_diff, sign=True), verdict(best_diff, "off")), "",
           "The two costs side by side, paired by seed: setting every learned gain of the QK-on models (LR %.3g) to 1.0 "
           "costs %s nats/token; training without QK-norm costs %s; removal minus training without: %s (%s)."
           % (best[True], fmt(interval(remove_best), sign=True), fmt(best_diff, sign=True), fmt(removal_vs_training, sign=True),
              verdict(removal_vs_training, "removal")), "",
           "Sweep of the QK-on models at LR %.3g: ΔNLL of each model against its own control, mean over seeds [95 %% t-interval]; "
           "KL(control ‖ condition) per token and top-1 agreement, mean [min, max] over seeds:" % best[True], "",
           "| condition | ΔNLL (nats/token) | KL (nats/token) | top-1 agreement |", "|---|---:|---:|---:|"]
    for label, c in conds.items():
        md.append("| %s | %s | %s | %s |" % (label, fmt(c["delta_nll"], sign=True), spread(c["kl_per_token"], 5), spread(c["top1_agreement"])))
    md += ["", "Past the fast-learning phase (the held-out loss fell by less than 5 % of its drop from L0 over the last "
           "quarter of training, the loss at 3/4 interpolated between evaluations; with a cosine decay to 10 % the last "
           "quarter runs at a small LR, which makes the criterion easier to meet):", ""]
    for qk in (True, False):
        short = [sd for sd, c in zip(seeds, crit[qk]) if not c["past_fast_learning"]]
        md.append("- QK-norm %s at LR %.3g: last-quarter share of the drop %s — %s" % (
            "on" if qk else "off", best[qk], ", ".join("—" if c["share"] is None else "%.1f %%" % (100 * c["share"]) for c in crit[qk]),
            "past it for every seed" if not short else "**too short** for seed(s) %s: the comparison above is of models still learning fast" % short))
    for qk in (True, False):
        if best[qk] in (lrs[0], lrs[-1]):
            md.append("- **QK-norm %s: the best LR (%.3g) is at the edge of the grid**: the grid does not bracket the arm's best; "
                      "widen it before reading the best-vs-best comparison." % ("on" if qk else "off", best[qk]))
    comp = analysis["compute"]
    threads = sorted({st.train(r)["threads"] for st in s.studies for r in st.runs if r["status"] == "finished"})
    md += ["", "Compute (%s): %.2f h of training (%d runs, %s thread(s) each, the runs' own timing), %.2f h of post-training sweeps." % (
        comp["host"].get("cpu", comp["host"]) if isinstance(comp["host"], dict) else comp["host"],
        comp["training_seconds"] / 3600, len(s.runs), "/".join(map(str, threads)), comp["sweep_seconds"] / 3600), "",
        "![%s](../figures/experiments/%s.svg)" % (experiment, experiment), ""]
    write(analysis, "\n".join(md))


# --- experiment 3: routing -----------------------------------------------------------------------
def arm_name(study, r):
    base = os.path.basename(study.dir)
    if base == "routing-optimizer":
        return "OMN (Muon + AdamW)" if r["optimizer"] == "muon+adamw" else "AdamW everywhere"
    return {"routing-gain-lr-0.1": "gains' LR ×0.1", "routing-gain-lr-10": "gains' LR ×10",
            "routing-gain-wd": "weight decay 0.1 on gains", "depth-12": "12 layers", "length-5000": "5,000 steps"}.get(base, base)


def gain_summary(track_doc):
    """per checkpoint: step, and per layer the Q and K gains' mean, std, max; and the whole model's."""
    out = []
    for c in track_doc["checkpoints"]:
        out.append({"step": c["step"], "layers": c["layers"], "mean": c["statistics"]["mean"], "max": c["statistics"]["max"],
                    "std": c["statistics"]["std"], "negative": c["statistics"]["count_negative"]})
    return out


def collect_arms(studies):
    arms = {}
    for s in studies:
        for r in s.runs:
            a = arms.setdefault(arm_name(s, r), {"runs": []})
            sw = s.sweep(r)
            tr = s.track(r)
            a["runs"].append({"id": r["id"], "seed": r["seed"], "status": r["status"], "panel_loss": s.panel_loss(r),
                              "effects": condition_effects(sw) if sw else {}, "track": gain_summary(tr) if tr else []})
    return arms


def routing():
    studies = [Study(p) for p in study_paths]
    arms = collect_arms(studies)
    ref = "OMN (Muon + AdamW)"
    seeds = sorted({x["seed"] for a in arms.values() for x in a["runs"]})
    def per_seed(a, f):
        d = {x["seed"]: f(x) for x in a["runs"] if x["status"] == "finished"}
        return [d.get(sd) for sd in seeds]
    final_mean = lambda x: x["track"][-1]["mean"] if x["track"] else None
    final_max = lambda x: x["track"][-1]["max"] if x["track"] else None
    dep = lambda x: x["effects"].get("constant 1 qk all", {}).get("delta_nll")
    table = {}
    for name, a in arms.items():
        t = {"panel_loss": interval(per_seed(a, lambda x: x["panel_loss"])), "gain_mean": interval(per_seed(a, final_mean)),
             "gain_max": interval(per_seed(a, final_max)), "dependence": interval(per_seed(a, dep))}
        if name != ref:
            for k, f in (("panel_loss", lambda x: x["panel_loss"]), ("gain_mean", final_mean), ("gain_max", final_max), ("dependence", dep)):
                mine, base = per_seed(a, f), per_seed(arms[ref], f)
                t["vs_omn_" + k] = interval([m - b if m is not None and b is not None else None for m, b in zip(mine, base)])
        table[name] = t
    analysis = {"experiment": experiment, "studies": study_paths, "seeds": seeds, "arms": table,
                "trajectories": {n: [x["track"] for x in a["runs"]] for n, a in arms.items()},
                "compute": compute_note(studies)}
    names = list(arms)
    n_layers = len(next(x for a in arms.values() for x in a["runs"] if x["track"])["track"][0]["layers"])
    fig, axes = plt.subplots(2, n_layers, figsize=(2.6 * n_layers, 5.2), sharex=True, sharey="row")
    for i, name in enumerate(names):
        for li in range(n_layers):
            for row, stat in enumerate(("mean", "max")):
                ax = axes[row][li]
                for j, x in enumerate(arms[name]["runs"]):
                    if not x["track"]:
                        continue
                    steps = [c["step"] for c in x["track"]]
                    vals = [(c["layers"][li]["q"][stat] + c["layers"][li]["k"][stat]) / 2 if stat == "mean"
                            else max(c["layers"][li]["q"][stat], c["layers"][li]["k"][stat]) for c in x["track"]]
                    ax.plot(steps, vals, color=COLOURS[i], lw=1.2, alpha=0.85, label=name if (li == 0 and row == 0 and j == 0) else None)
                ax.set_title("layer %d: %s" % (li, "Q/K gain mean" if stat == "mean" else "largest Q/K gain"), fontsize=8)
                if row == 1:
                    ax.set_xlabel("step")
    fig.legend(loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    analysis["figure"] = save(fig, experiment)
    md = ["## %s: which factor moves the gains, which moves the dependence\n" % experiment,
          "Every arm: the tiny model, QK-norm on, 1,000 steps, seeds %s. Gains at the end: the mean and the largest of all Q/K "
          "gains (`track` of final.pt); dependence: ΔNLL when every Q/K gain is set to 1.0 after training, on the held-out "
          "panel. Differences from OMN's routing are paired by seed (95 %% t-interval).\n" % seeds,
          "| arm | held-out NLL | gain mean | largest gain | dependence (gains → 1.0) |", "|---|---:|---:|---:|---:|"]
    for name, t in table.items():
        md.append("| %s | %s | %s | %s | %s |" % (name, fmt(t["panel_loss"]), fmt(t["gain_mean"], 3), fmt(t["gain_max"], 3), fmt(t["dependence"], sign=True)))
    md += ["", "| arm − OMN | held-out NLL | gain mean | largest gain | dependence |", "|---|---:|---:|---:|---:|"]
    for name, t in table.items():
        if name == ref:
            continue
        md.append("| %s | %s | %s | %s | %s |" % (name, *(fmt(t["vs_omn_" + k], 4 if k in ("panel_loss", "dependence") else 3, True)
                                                       for k in ("panel_loss", "gain_mean", "gain_max", "dependence"))))
    md += ["", "Read (from the intervals above):", ""]
    for name, t in table.items():
        if name == ref:
            continue
        md.append("- **%s**: %s; %s; %s." % (name, verdict(t["vs_omn_gain_mean"], "mean gain"),
                                               verdict(t["vs_omn_gain_max"], "largest gain"),
                                               verdict(t["vs_omn_dependence"], "dependence on the gains")))
    comp = analysis["compute"]
    md += ["", "Compute: %.2f h of training, %.2f h of sweeps." % (comp["training_seconds"] / 3600, comp["sweep_seconds"] / 3600), "",
           "![%s](../figures/experiments/%s.svg)" % (experiment, experiment), ""]
    write(analysis, "\n".join(md))


# --- experiment 4: depth and length --------------------------------------------------------------
def depth():
    studies = [Study(p) for p in study_paths]
    arms = collect_arms(studies)
    seeds = sorted({x["seed"] for a in arms.values() for x in a["runs"]})
    table, fig = {}, plt.figure(figsize=(10, 4))
    axes = fig.subplots(1, len(arms))
    if len(arms) == 1:
        axes = [axes]
    for i, (name, a) in enumerate(arms.items()):
        done = [x for x in a["runs"] if x["status"] == "finished" and x["track"]]
        finals = [x["track"][-1] for x in done]
        n_layers = len(finals[0]["layers"])
        early = lambda c: sum((c["layers"][li]["q"]["mean"] + c["layers"][li]["k"]["mean"]) / 2 for li in (0, 1)) / 2
        late = lambda c: sum((c["layers"][li]["q"]["mean"] + c["layers"][li]["k"]["mean"]) / 2 for li in (n_layers - 2, n_layers - 1)) / 2
        table[name] = {"layers": n_layers, "early_mean": interval([early(c) for c in finals]), "late_mean": interval([late(c) for c in finals]),
                       "early_over_late": interval([early(c) / late(c) for c in finals]), "max": interval([c["max"] for c in finals]),
                       "negative": [c["negative"] for c in finals], "panel_loss": interval([x["panel_loss"] for x in done]),
                       "dependence": interval([x["effects"].get("constant 1 qk all", {}).get("delta_nll") for x in done]),
                       "not_finished": [x["id"] for x in a["runs"] if x["status"] != "finished"]}
        ax = axes[i]
        for j, x in enumerate(done):
            c = x["track"][-1]
            ax.plot(range(n_layers), [l["q"]["mean"] for l in c["layers"]], color=COLOURS[0], marker="o", ms=3, lw=1, alpha=0.8,
                    label="Q gain mean" if j == 0 else None)
            ax.plot(range(n_layers), [l["k"]["mean"] for l in c["layers"]], color=COLOURS[1], marker="s", ms=3, lw=1, alpha=0.8,
                    label="K gain mean" if j == 0 else None)
            ax.plot(range(n_layers), [max(l["q"]["max"], l["k"]["max"]) for l in c["layers"]], color=COLOURS[6], ls=":", lw=1,
                    label="largest Q/K gain" if j == 0 else None)
        ax.set_title("%s\nper-layer gains at the end, %d seeds" % (name, len(done)), fontsize=9)
        ax.set_xlabel("layer")
        ax.set_xticks(range(n_layers))
        ax.legend(fontsize=8, frameon=False)
    axes[0].set_ylabel("gain")
    fig.tight_layout()
    analysis = {"experiment": experiment, "studies": study_paths, "seeds": seeds, "arms": table, "compute": compute_note(studies),
                "figure": save(fig, experiment)}
    md = ["## %s: does an early-layer regime appear with depth or length?\n" % experiment,
          "OMN-1 (the audit): Q/K gain means near 25 in layers 0-1 and near 2 by layer 27 (early/late ≈ 12), maxima 68.5, five "
          "negative coordinates. Here, QK-norm on, OMN's routing, seeds %s; gains of final.pt (`track`); early = layers 0-1, "
          "late = the last two; dependence = ΔNLL with every Q/K gain → 1.0 on the held-out panel.\n" % seeds,
          "| model | early-layer gain mean | late-layer gain mean | early / late | largest gain | negative gains | held-out NLL | dependence |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, t in table.items():
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (name, fmt(t["early_mean"], 3), fmt(t["late_mean"], 3), fmt(t["early_over_late"], 3),
                  fmt(t["max"], 3), ", ".join(map(str, t["negative"])), fmt(t["panel_loss"]), fmt(t["dependence"], sign=True)))
    comp = analysis["compute"]
    md += ["", "Compute: %.2f h of training, %.2f h of sweeps." % (comp["training_seconds"] / 3600, comp["sweep_seconds"] / 3600), "",
           "![%s](../figures/experiments/%s.svg)" % (experiment, experiment), ""]
    write(analysis, "\n".join(md))


{"ablation": ablation, "routing": routing, "depth": depth}[kind]()
