"""qk-lr-tiny (tools/experiments/analyse.py qk-lr): QK-norm on vs off over a wide AdamW LR grid (the
study configs/studies/qk-lr-tiny.json: the tiny model, 200 steps, one seed), read by the ablation
analysis's definitions (analysis_ablation.py), none of its own:

  - the loss of a model: its held-out NLL on the panel (after/RUN.eval.json), rows no run evaluated
    during training; a run that did not finish has none;
  - diverged: a run whose status is not "finished";
  - each arm's best LR: its study's choice on the training-time rows (among the LRs where every run is
    stable, the lowest mean final held-out loss: analysis_ablation.Grid.best_lr); the panel never chooses;
  - off - on: the QK-off model's panel NLL minus the QK-on model's at the same LR and seed, paired by
    seed, with a 95 % Student-t interval where there are two seeds or more (one seed: a value, no claim);
  - the fast-learning criterion at each arm's best LR (analysis_common.fast_learning).
The old table's initial-loss (L0) divergence rule and "LR sensitivity" (a grid-dependent summary) are not
used. What the runs trained with (optimizer, steps, tokens a step) is recorded for the results page,
which sets this grid beside the ablation's."""
import json
import os

from analysis_ablation import Grid
from analysis_common import COLOURS, Study, fast_learning, fmt, interval, paired, plt


def off_verdict(iv):
    """off − on by the rules of docs/results.md: above zero QK-off worse, below zero QK-off better, an
    interval holding zero no measurable difference; one seed no claim"""
    if iv["mean"] is None:
        return "no value"
    if iv["low"] is None:
        return "one seed: no claim"
    return "QK-off worse" if iv["low"] > 0 else "QK-off better" if iv["high"] < 0 else "no measurable difference"


def setting(rec):
    """what a run trained with, from its train.json"""
    v = rec["config"]["values"]
    return {"optimizer": v["optimizer"]["kind"], "steps": rec["steps"], "batch_size": v["batch_size"], "seq_len": v["seq_len"]}


def qk_lr(job):
    s = Grid([Study(p) for p in job.study_paths])
    lrs = sorted({r["lr"] for r in s.runs})
    seeds = sorted({r["seed"] for r in s.runs})
    best = {qk: s.best_lr(qk) for qk in (True, False)}
    rows = []
    for lr in lrs:
        a = s.arms_at(lr, seeds)
        d = interval(a["off_minus_on"])
        rows.append({"lr": lr, "on": interval(a["on"]), "off": interval(a["off"]), "off_minus_on": d, "verdict": off_verdict(d),
                     "diverged_on": a["diverged_on"], "diverged_off": a["diverged_off"],
                     "best": [k for k, qk in (("qk_on", True), ("qk_off", False)) if lr == best[qk]]})
    on_best = [s.panel_loss((True, best[True], sd)) for sd in seeds]
    off_best = [s.panel_loss((False, best[False], sd)) for sd in seeds]
    crit = {qk: [fast_learning(s.train((qk, best[qk], sd))) for sd in seeds] for qk in (True, False)}
    settings = sorted({json.dumps(setting(s.train(k)), sort_keys=True) for k in s.where if s.run(k)["status"] == "finished"})
    analysis = {"experiment": job.experiment, "studies": job.study_paths, "lrs": lrs, "seeds": seeds,
                "settings": [json.loads(x) for x in settings],
                "best_lr": {"qk_on": best[True], "qk_off": best[False]}, "by_lr": rows,
                "best_vs_best": {"on": interval(on_best), "off": interval(off_best), "off_minus_on": interval(paired(off_best, on_best))},
                "fast_learning": {"qk_on": crit[True], "qk_off": crit[False]},
                "diverged": {"qk_on": sum(r["diverged_on"] for r in rows), "qk_off": sum(r["diverged_off"] for r in rows)},
                "compute": job.compute_note(s.studies)}
    job.mark_partial(s.studies)

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for qk, name, c, mk, off in ((True, "QK-norm on", COLOURS[0], "o", 0.98), (False, "QK-norm off", COLOURS[1], "s", 1.02)):
        pts = [(r["lr"] * off, r["on" if qk else "off"]["mean"]) for r in rows if r["on" if qk else "off"]["mean"] is not None]
        if pts:
            ax.plot(*zip(*pts), color=c, marker=mk, lw=1.4, ms=5, label=name)
        div = [r["lr"] * off for r in rows if r["diverged_on" if qk else "diverged_off"]]
        if div:
            ax.plot(div, [ax.get_ylim()[1]] * len(div), ls="none", marker="x", color=c, ms=7, label="%s: diverged" % name)
        ax.axvline(best[qk], color=c, lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xticks(lrs)
    ax.set_xticklabels(["%.2g" % x for x in lrs], rotation=45, fontsize=7)
    ax.minorticks_off()
    ax.set_xlabel("peak AdamW learning rate (dotted: each arm's best LR, chosen on the training-time rows)")
    ax.set_ylabel("held-out NLL on the panel\n(nats/token)")
    ax.set_title("%s: QK-norm on vs off over the LR grid, seed%s %s" % (
        job.experiment, "s" if len(seeds) > 1 else "", ", ".join(map(str, seeds))), fontsize=9)
    ax.legend(fontsize=7, frameon=False, loc="best")
    fig.tight_layout()
    analysis["figure"] = job.save(fig, analysis["compute"])

    one = len(seeds) == 1
    md = ["## %s: QK-norm on vs off over a wide LR grid\n" % job.experiment,
          "Settings (each run's train.json): %s. Panel: the first %d rows of %d tokens of the held-out addresses after the rows "
          "the runs evaluated during training (`after/panel.json`); NLL in nats/token; seeds %s%s. Definitions as the ablation "
          "analysis's: diverged = the run did not finish; best LR = the study's choice on the training-time rows.\n"
          % ("; ".join("optimizer %s, %d steps of %d × %d tokens" % (x["optimizer"], x["steps"], x["batch_size"], x["seq_len"])
                       for x in analysis["settings"]),
             s.panel_rows(), json.load(open(os.path.join(s.after, "panel.json")))["seq_len"], seeds,
             " (one seed: values, no intervals, no claims)" if one else "; intervals: 95 % Student-t over seeds, paired by seed"),
          "| peak LR | QK-norm on | QK-norm off | off − on | read | diverged on / off |", "|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        md.append("| %.3g%s | %s | %s | %s | %s | %d / %d |" % (
            r["lr"], "".join(" (best %s)" % {"qk_on": "on", "qk_off": "off"}[k] for k in r["best"]),
            fmt(r["on"]), fmt(r["off"]), fmt(r["off_minus_on"], sign=True), r["verdict"], r["diverged_on"], r["diverged_off"]))
    bb = analysis["best_vs_best"]
    md += ["", "Each arm at its own best LR (on %.3g, off %.3g): on %s, off %s, off − on %s (%s)." % (
        best[True], best[False], fmt(bb["on"]), fmt(bb["off"]), fmt(bb["off_minus_on"], sign=True),
        off_verdict(bb["off_minus_on"])), "",
        "Past the fast-learning phase at the best LR (the ablation's criterion: the held-out loss fell by less than 5 % of its "
        "drop from L0 over the last quarter of training):", ""]
    for qk in (True, False):
        md.append("- QK-norm %s at LR %.3g: last-quarter share of the drop %s — %s" % (
            "on" if qk else "off", best[qk], ", ".join("—" if c["share"] is None else "%.1f %%" % (100 * c["share"]) for c in crit[qk]),
            "past it" if all(c["past_fast_learning"] for c in crit[qk]) else "**still learning fast**: the comparison is of models "
            "still learning fast"))
    for qk in (True, False):
        if best[qk] in (lrs[0], lrs[-1]):
            md.append("- **QK-norm %s: the best LR (%.3g) is at the edge of the grid**: the grid does not bracket it." % ("on" if qk else "off", best[qk]))
    comp = analysis["compute"]
    md += ["", "Compute (%s): %.2f h of training (%d runs, the runs' own timing).%s" % (job.cpu_text(comp), comp["training_seconds"] / 3600,
                                                                                         len(s.runs), job.cut_text(comp)),
           "", "![%s](../figures/experiments/%s.svg)" % (job.experiment, job.experiment), ""]
    job.write(analysis, "\n".join(md))
