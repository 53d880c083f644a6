"""Experiment 2, the matched ablation (tools/experiments/analyse.py ablation): QK-norm on vs off over an
LR grid with seeds, and what removing the learned gains after training costs beside it."""
import json
import os
import sys

from analysis_common import COLOURS, Study, condition_effects, fast_learning, fmt, interval, plt, spread, verdict, whisk


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


def ablation(job):
    s = Grid([Study(p) for p in job.study_paths])
    lrs = sorted({r["lr"] for r in s.runs})
    seeds = sorted({r["seed"] for r in s.runs})
    best = {qk: s.best_lr(qk) for qk in (True, False)}
    rows = []
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
    analysis = {"experiment": job.experiment, "studies": job.study_paths, "lrs": lrs, "seeds": seeds,
                "best_lr": {"qk_on": best[True], "qk_off": best[False]}, "by_lr": rows,
                "best_vs_best": {"on": interval(on_best), "off": interval(off_best), "off_minus_on": best_diff,
                                 "gains_to_1": interval(remove_best), "removal_minus_training_without": removal_vs_training},
                "sweep_at_best_on": conds, "fast_learning": {"qk_on": crit[True], "qk_off": crit[False]},
                "compute": job.compute_note(s.studies)}

    # the figure: left, both costs against the peak LR; right, the sweep at the on arm's best LR
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [1, 1.25]})
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
    analysis["figure"] = job.save(fig)

    md = ["## %s: QK-norm on vs off, and removing the learned gains after training\n" % job.experiment,
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
        job.cpu_text(comp),
        comp["training_seconds"] / 3600, len(s.runs), "/".join(map(str, threads)), comp["sweep_seconds"] / 3600), "",
        "![%s](../figures/experiments/%s.svg)" % (job.experiment, job.experiment), ""]
    job.write(analysis, "\n".join(md))
