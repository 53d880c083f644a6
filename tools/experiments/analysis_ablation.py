"""Experiment 2, the matched ablation (tools/experiments/analyse.py ablation): QK-norm on vs off over an
LR grid with seeds, and what removing the learned gains after training costs beside it."""
import json
import os
import sys

from analysis_common import (COLOURS, Study, condition_effects, experiment_config, fast_learning, fmt, interval, paired, plt, spread,
                             tost, verdict, whisk)


def pointer(doc, ptr):
    for part in ptr.strip("/").split("/"):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


class Grid:
    """The studies of one ablation read as one grid (a study added to widen the LR grid, say): each
    (QK-norm, LR, seed) in exactly one study, every study scored on the same panel."""

    def __init__(self, studies, extra=()):
        """extra: studies of more seeds at some of the grid's points (an equivalence test's), scored on
        the same panel; they join the lookups, not the grid's tables or its best LRs."""
        self.studies, self.extra = studies, list(extra)
        self.where = {}
        for st in studies + self.extra:
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
        for st in (studies + self.extra)[1:]:
            if panel(st) != panel(studies[0]):
                sys.exit("analysis: %s was scored on another panel than %s (after/panel.json): its runs cannot join the grid"
                         % (st.path, studies[0].path))
        for st in (studies + self.extra)[1:]:  # one model code and base config, or the grid mixes two experiments
            for ptr in ("/base_config/sha256", "/provenance/model_code_fingerprint"):
                a, b = pointer(studies[0].doc, ptr), pointer(st.doc, ptr)
                if a != b:
                    sys.exit("analysis: %s differs from %s at %s (%r, %r): its runs cannot join the grid" % (st.path, studies[0].path, ptr, b, a))
        main = {(r["qk_norm"], r["lr"], r["seed"]) for st in studies for r in st.runs}
        arms = sorted({k[0] for k in main})
        lrs = sorted({k[1] for k in main})
        seeds = sorted({k[2] for k in main})
        missing = [k for k in ((q, lr, sd) for q in arms for lr in lrs for sd in seeds) if k not in main]
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

    def arms_at(self, lr, seeds):
        """Both arms at one LR, seed by seed: panel NLL of each, off − on paired by seed, and how many
        runs of each arm did not finish (diverged)."""
        on = [self.panel_loss((True, lr, sd)) for sd in seeds]
        off = [self.panel_loss((False, lr, sd)) for sd in seeds]
        return {"lr": lr, "on": on, "off": off, "off_minus_on": paired(off, on),
                "diverged_on": sum(self.run((True, lr, sd))["status"] != "finished" for sd in seeds),
                "diverged_off": sum(self.run((False, lr, sd))["status"] != "finished" for sd in seeds)}

    def removal(self, lr, seeds):
        """What setting every learned gain of the QK-on models to 1.0 (Q and K, every layer) costs on
        the panel, seed by seed (None where a seed has no sweep)."""
        out = []
        for sd in seeds:
            sw = self.sweep((True, lr, sd))
            out.append(condition_effects(sw)["constant 1 qk all"]["delta_nll"] if sw else None)
        return out

    def best_lr(self, qk):
        """The arm's best LR over the whole grid: each study chose its own on the training-time rows
        (among its LRs where every run is stable — finished, its final held-out loss below its
        initial — the lowest mean final held-out loss); the choice with the lowest such loss."""
        arms = [a for st in self.studies for a in st.doc["arms"] if a["qk_norm"] == qk and a["best_lr"] is not None]
        if not arms:
            sys.exit("analysis: QK-norm %s has no LR where every run finished" % ("on" if qk else "off"))
        return min(arms, key=lambda a: a["best_loss"])["best_lr"]


def by_lr(s, lr, seeds):
    """One LR of the grid: both arms, off − on, what removing the learned gains costs, and removal minus
    training without (each paired by seed)."""
    a = s.arms_at(lr, seeds)
    remove = s.removal(lr, seeds)
    return {"lr": lr, "on": interval(a["on"]), "off": interval(a["off"]), "off_minus_on": interval(a["off_minus_on"]),
            "gains_to_1": interval(remove), "removal_minus_training_without": interval(paired(remove, a["off_minus_on"])),
            "diverged_on": a["diverged_on"], "diverged_off": a["diverged_off"]}


def same_lr(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def matched_lrs(rows, other, paths):
    """The experiment `other` (an ablation of another model size, its study documents `paths`) at the LRs
    both grids trained, row beside row."""
    st = [Study(p) for p in paths]
    g = Grid(st)
    seeds = sorted({r["seed"] for r in g.runs})
    theirs = [by_lr(g, lr, seeds) for lr in sorted({r["lr"] for r in g.runs})]
    return {"experiment": other, "studies": [x.path for x in st], "seeds": seeds,
            "rows": [{"lr": r["lr"], "here": r, "there": t} for r in rows for t in theirs if same_lr(r["lr"], t["lr"])]}


def equivalence(s, plan, best, seeds):
    """The pre-registered equivalence test (configs/experiments.json /experiments/NAME/equivalence): TOST
    of removal minus training without, each arm at its best LR, over the grid's seeds and the extra ones."""
    every = seeds + [sd for sd in plan["seeds"] if sd not in seeds]
    have = [sd for sd in every if (True, best[True], sd) in s.where and (False, best[False], sd) in s.where]
    on = [s.panel_loss((True, best[True], sd)) for sd in have]
    off = [s.panel_loss((False, best[False], sd)) for sd in have]
    values = {"removal_minus_training_without": paired(s.removal(best[True], have), paired(off, on)),
              "off_minus_on": paired(off, on)}
    missing = [sd for sd in every if sd not in have]
    tests = {m: tost(values[m], plan["margin"], plan["alpha"]) for m in [plan["measure"]] + plan.get("secondary", [])}
    for t in tests.values():
        if missing and t["verdict"] != "too few values":
            t["verdict"] = "not read: seed(s) %s not trained yet" % ", ".join(map(str, missing))
    return {"plan": plan, "studies": [st.path for st in s.extra], "seeds": have, "missing_seeds": missing, "tests": tests}


def matched_markdown(m, here):
    md = ["", "Beside `%s` at the LRs both grids trained (seeds %s there; each cell mean over seeds [95 %% t-interval], "
          "paired by seed within each experiment):" % (m["experiment"], m["seeds"]), "",
          "| peak LR | off − on: %s | off − on: %s | gains → 1.0: %s | gains → 1.0: %s | removal − training without: %s "
          "| removal − training without: %s |" % ((m["experiment"], here) * 3), "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in m["rows"]:
        md.append("| %.3g | %s |" % (r["lr"], " | ".join(fmt(r[side][k], sign=True) for k in ("off_minus_on", "gains_to_1",
                                                                                              "removal_minus_training_without")
                                                        for side in ("there", "here"))))
    if not m["rows"]:
        md.append("| (no LR in common) | | | | | | |")
    return md


def equivalence_markdown(e, best):
    p = e["plan"]
    md = ["", "**Equivalence test, pre-registered** (`configs/experiments.json`, `equivalence`; stated %s): two one-sided t-tests at α = %g, margin ±%g nats/token, on %s, each arm at its best LR (the "
          "studies' choice on the training-time rows; here on %.3g, off %.3g), paired by seed over seeds %s (the grid's and "
          "the extra ones, studies %s). Equivalent where the %d %% interval lies inside the margin."
          % (p["stated"], p["alpha"], p["margin"], " and ".join("`%s`" % m for m in [p["measure"]] + p.get("secondary", [])),
             best[True], best[False], e["seeds"] + e["missing_seeds"], ", ".join("`%s`" % x for x in p["studies"]),
             round(100 * (1 - 2 * p["alpha"]))), ""]
    for m, t in e["tests"].items():
        role = "primary" if m == p["measure"] else "secondary"
        if t["verdict"] == "too few values":
            md.append("- `%s` (%s): %d seed(s) so far: not tested." % (m, role, t["n"]))
        else:
            md.append("- `%s` (%s): mean %+.4f, %d %% interval [%+.4f, %+.4f] over %d seeds: **%s**." % (
                m, role, t["mean"], round(100 * (1 - 2 * p["alpha"])), t["low"], t["high"], t["n"], t["verdict"]))
    if e["missing_seeds"]:
        md.append("- The test is read only when every seed is in (seeds %s are not)." % e["missing_seeds"])
    return md


def ablation(job):
    plan = experiment_config(job.experiment).get("equivalence")  # pre-registered; the runner checks its shape
    if job.extra_paths and not plan:
        sys.exit("analysis: --equivalence studies given, but configs/experiments.json states no equivalence test for %s" % job.experiment)
    s = Grid([Study(p) for p in job.study_paths], [Study(p) for p in job.extra_paths])
    lrs = sorted({r["lr"] for r in s.runs})
    seeds = sorted({r["seed"] for r in s.runs})
    best = {qk: s.best_lr(qk) for qk in (True, False)}
    rows = [by_lr(s, lr, seeds) for lr in lrs]
    # at each arm's best LR (chosen by the study on the training-time evaluation rows, not the panel)
    on_best = [s.panel_loss((True, best[True], sd)) for sd in seeds]
    off_best = [s.panel_loss((False, best[False], sd)) for sd in seeds]
    best_diff = interval(paired(off_best, on_best))
    # experiment 9 side by side, paired by seed: what removing the learned gains after training costs
    # (the on arm's best LR, constant 1.0 on Q and K) minus what training without QK-norm costs
    # (each arm at its best LR); None where a seed lacks either
    remove_best = s.removal(best[True], seeds)
    removal_vs_training = interval(paired(remove_best, paired(off_best, on_best)))
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
                "compute": job.compute_note(s.studies + s.extra)}
    if job.compare:
        analysis["matched_lrs"] = matched_lrs(rows, *job.compare)
    if plan:
        analysis["equivalence"] = equivalence(s, plan, best, seeds)

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
    analysis["figure"] = job.save(fig, analysis["compute"])

    md = ["## %s: QK-norm on vs off, and removing the learned gains after training\n" % job.experiment,
          "Panel: the first %d rows of %d tokens of the held-out addresses after the rows the runs evaluated during "
          "training (`after/panel.json`); NLL in nats/token; intervals: 95 %% Student-t over seeds %s.\n"
          % (s.panel_rows(), json.load(open(os.path.join(s.after, "panel.json")))["seq_len"], seeds)
          + ("Studies, read as one grid: %s.\n" % ", ".join("`%s` (LR %s)" % (os.path.basename(st.dir), ", ".join(
              "%.3g" % x for x in sorted({r["lr"] for r in st.runs}))) for st in s.studies) if len(s.studies) > 1 else ""),
          "| peak LR | QK-norm on | QK-norm off | off − on (paired by seed) | gains → 1.0 after training (Δ, on) "
          "| removal − training without (paired) | diverged on / off |",
          "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append("| %.3g%s | %s | %s | %s | %s | %s | %d / %d |" % (
            r["lr"], "".join(" (best %s)" % a for a, qk in (("on", True), ("off", False)) if r["lr"] == best[qk]),
            fmt(r["on"]), fmt(r["off"]), fmt(r["off_minus_on"], sign=True), fmt(r["gains_to_1"], sign=True),
            fmt(r["removal_minus_training_without"], sign=True), r["diverged_on"], r["diverged_off"]))
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
    if "matched_lrs" in analysis:
        md += matched_markdown(analysis["matched_lrs"], job.experiment)
    if plan:
        md += equivalence_markdown(analysis["equivalence"], best)
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
    threads = sorted({st.train(r)["threads"] for st in s.studies + s.extra for r in st.runs if r["status"] == "finished"})
    md += ["", "Compute (%s): %.2f h of training (%d runs, %s thread(s) each, the runs' own timing), %.2f h of post-training sweeps.%s" % (
        job.cpu_text(comp),
        comp["training_seconds"] / 3600, sum(len(st.runs) for st in s.studies + s.extra), "/".join(map(str, threads)), comp["sweep_seconds"] / 3600,
        job.cut_text(comp)), "",
        "![%s](../figures/experiments/%s.svg)" % (job.experiment, job.experiment), ""]
    job.write(analysis, "\n".join(md))
