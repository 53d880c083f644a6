"""docs/results.md's ablation sections (question 1: removal against training without at every LR, both
sizes; the sweep at the best LR), the claim rules, Methods and the limitations."""
import os

from page_core import REMOVAL, Page, verdict, study_rel, pair_flags, model_text, lr_key, size
from page_equivalence import equivalence_read, equivalence_tested_at, sizes_owning, summary_equivalence, equivalence_limitation


# --- the claim rules (Methods states them; every verdict on the page comes from here) ---
RULES = [
    "A difference whose 95 % interval lies above zero is reported as higher (for a cost: *costs more*), below zero as lower.",
    "A difference whose interval holds zero is reported as **no measurable difference**: the runs cannot tell it "
    "from zero, which is not evidence that it is zero.",
    "**Equivalent** (or *the same*) would need an equivalence margin stated before looking and an equivalence test "
    "(TOST) against it; the store holds none, so this page never claims equivalence.",
    "A paired difference between runs that trained on different builds, CPUs or OpenBLAS kernels (each run's "
    "`train.json` provenance) is flagged as such beside it.",
    "A comparison whose result changes with the learning rate is shown at every LR of the grid, not at one pick.",
    "With one seed a point there is no interval: the difference is printed, and its sign is **no claim** either way.",
]


def rules(x, sizes):
    """RULES, rule 3 as the store stands: no equivalence test read, or which"""
    read = [e for e, _, _ in sizes if equivalence_read(x, e)]
    out = list(RULES)
    if read:
        out[2] = ("**Equivalent** (or *the same*) is claimed only from an equivalence test (TOST) against a margin stated "
                  "before looking: equivalent where its 90 %% interval lies inside the margin. The store holds %s (the "
                  "Summary's first question); everywhere else this page claims no equivalence." % sizes_owning([size(e) for e in read], "test"))
    return out


def ablation_data(x, e):
    """an ablation's per-LR removal, training without and their difference, with expressions"""
    a = x.analysis[e]
    an = x.p.load(a)
    rows = []
    for i, r in enumerate(an["by_lr"]):
        rows.append({"i": i, "lr": r["lr"], "lr_ex": Page.src(a, "by_lr", i, "lr"),
                     "removal": Page.src(a, "by_lr", i, "gains_to_1", "values"),
                     "without": Page.src(a, "by_lr", i, "off_minus_on", "values")})
    return an, rows


def lr_list(p, exs):
    return ", ".join(p.num(ex, ".3g") for ex in exs)


def summary_removal(x, sizes):
    """question 1: per size, the LRs where removal costs more / less / no measurable difference"""
    p = x.p
    out, nmd_lrs = [], []
    for e, an, rows in sizes:
        groups = {}
        for r in rows:
            ivtext, vals = p.tiv(r["removal"], r["without"])
            r["vals"], r["text"] = vals, ivtext
            groups.setdefault(verdict(vals, "removal costs more", "removal costs less"), []).append(r)
        parts = []
        for v in ("removal costs more", "removal costs less", "no measurable difference", "one seed: no claim"):
            if v in groups:
                g = groups[v]
                top = max(g, key=lambda r: abs(r["vals"][0])) if v != "no measurable difference" else None
                parts.append("%s at LR %s%s" % (v, lr_list(p, [r["lr_ex"] for r in g]),
                                                " (largest %s at %s)" % (top["text"], p.num(top["lr_ex"], ".3g")) if top and len(g) > 1 else
                                                " (%s)" % top["text"] if top else ""))
        nmd_lrs.append({lr_key(r["lr"]) for r in groups.get("no measurable difference", [])})
        depends = len(groups) > 1
        out.append("- %s model (%s): %s%s." % (size(e), model_text(x, e)[0], "; ".join(parts),
                                                  "" if depends else ", at every LR of its grid"))
    varies = any(len({verdict(r["vals"]) for r in rows}) > 1 for _, _, rows in sizes)
    head = ("**1. What does removing the learned gains cost, against training without QK-norm?** %s "
            "Removal − training without, paired by seed, each model at the same LR in both arms:" %
            ("It depends on the learning rate%s." % (" at both sizes" if all(len({verdict(r["vals"]) for r in rows}) > 1 for _, _, rows in sizes) else "")
             if varies else "The same verdict at every LR."))
    common = set.intersection(*nmd_lrs) if nmd_lrs else set()
    tail = []
    if common and len(sizes) > 1:
        lr = min(common)
        exs = [next(r["lr_ex"] for r in rows if lr_key(r["lr"]) == lr) for _, _, rows in sizes]
        tested = [size(e) for e, _, _ in sizes if equivalence_tested_at(x, e, lr)]
        tail.append("At LR %s neither size shows a measurable difference (%s)." % (
            p.num(exs[0], ".3g"),
            "which is not by itself equivalence: the %s model's equivalence test below is at this LR" % " and ".join(tested) if tested else
            "which is not equivalence" if any(equivalence_read(x, e) for e, _, _ in sizes) else
            "which is not equivalence: no margin, no equivalence test"))
    picks = []
    for e, an, rows in sizes:
        a = x.analysis[e]
        t, vals = p.iv(a, "best_vs_best", "removal_minus_training_without")
        picks.append("%s for the %s model (QK-on at %s, QK-off at %s: %s)" % (
            t, size(e), p.num(Page.src(a, "best_lr", "qk_on"), ".3g"), p.num(Page.src(a, "best_lr", "qk_off"), ".3g"),
            verdict(vals, "removal costs more", "removal costs less")))
    apart = len({(lr_key(an["best_lr"]["qk_on"]), lr_key(an["best_lr"]["qk_off"])) for _, an, _ in sizes}) > 1
    tail.append("With each arm at its own best LR instead (one pick per arm) the difference is %s; %sa pick within noise "
                "can turn the verdict, so the table and figure below give every LR." % (
                    " and ".join(picks), "those picks put the sizes at different LRs, and " if apart else ""))
    running = {u[0] for u in x.unfinished()}
    for e, an, rows in sizes:
        if an["best_lr"]["qk_on"] in (an["lrs"][0], an["lrs"][-1]) or an["best_lr"]["qk_off"] in (an["lrs"][0], an["lrs"][-1]):
            tail.append("The %s model's best LR lies at the edge of its grid, so its optimum is not bracketed%s." % (
                size(e), "; the study that brackets it is in progress" if e in running else ""))
    eq = summary_equivalence(x, sizes)
    return "\n\n".join([head, "\n".join(out), " ".join(tail)] + ([eq] if eq else []))


def methods(x, sizes):
    p = x.p
    lines = ["## Methods", ""]
    e0 = sizes[0][0]
    panel = "results/%s/after/panel.json" % os.path.basename(os.path.dirname(x.studies(e0)[0]))
    models = "; ".join("%s: %s, %s" % (size(e), *model_text(x, e)) for e, _, _ in sizes)
    lines += [
        "**Models and data.** omn-audit's own models, trained on the State of the Union corpus with QK-norm on or off "
        "(%s); peak AdamW LR on a log grid with Muon scaled with it, cosine decay." % models, "",
        "**Panel.** Every model is scored on the held-out addresses' rows that no run evaluated during training: the first "
        "%s rows of %s tokens after the %s rows the runs evaluated (`after/panel.json`), so no row that chose an LR is "
        "scored." % (p.num(Page.src(panel, "rows"), "d"), p.num(Page.src(panel, "seq_len"), "d"), p.num(Page.src(panel, "skipped_rows"), "d")), "",
        "**LR choice.** Each arm's best LR is its study's choice on the training-time rows (the lowest mean final held-out "
        "loss among LRs where every run finished and learned); the panel never chooses. Where one pick within noise would "
        "decide a comparison, the comparison is shown at every LR instead.", "",
        "**Statistics.** Intervals are 95 %% Student-t over the seeds, paired by seed where two arms are compared (one seed "
        "gives both arms the same initial weights and batch order). *Removal* is the held-out NLL change when every learned "
        "Q and K gain of a QK-on model is set to %s after training (sweep condition `%s`); *training without* is the QK-off "
        "model's NLL minus the QK-on model's at the same LR and seed; *removal − training without* is their difference, "
        "seed by seed. NLL in nats/token." % (p.num(Page.src(x.analysis[e0], "sweep_at_best_on", REMOVAL, "per_model", 0, "op", "value"), ".1f"),
                                             REMOVAL), "",
        "**Claims, by rule** (every verdict on this page is applied by the generator):", ""]
    lines += ["%s. %s" % (i + 1, r) for i, r in enumerate(rules(x, sizes))]
    return lines


def cut_note(x, e):
    """'' or, where the runner accounted steps cut off by a session's end, its training steps' time with
    every segment counted (the runs' own timing may hold a resumed run's last segment only)"""
    a = x.analysis[e]
    comp = x.p.load(a)["compute"]
    if not comp.get("interrupted_training_seconds"):
        return ""
    train = {"op": "sum", "of": [Page.src(a, "compute", "runner_seconds_by_step", k) for k in comp["runner_seconds_by_step"]
                                 if k.startswith("train ")]}
    return " (the runner's training steps, every segment of a resumed run counted: %s h, %s h of it cut off by a session's end)" % (
        x.p.num({"op": "div", "a": train, "b": {"const": 3600}}, ".2f"),
        x.p.num({"op": "div", "a": Page.src(a, "compute", "interrupted_training_seconds"), "b": {"const": 3600}}, ".2f"))


def results_removal(x, sizes):
    p = x.p
    lines = ["## Results", "", "### Removal against training without, both sizes, every LR", ""]
    for e, an, rows in sizes:
        a = x.analysis[e]
        # the grid's studies and an equivalence test's own (the analysis's compute counts both)
        studies = x.studies(e) + [study_rel(st) for st in an.get("equivalence", {}).get("studies", [])]
        runs = {"op": "sum", "of": [{"op": "len", "of": Page.src(s, "runs")} for s in studies]}
        lines.append("- `%s`: %s; %s runs, %s h of training and %s h of post-training sweeps%s; studies %s." % (
            e, model_text(x, e)[1], p.num(runs, "d"),
            p.num({"op": "div", "a": Page.src(a, "compute", "training_seconds"), "b": {"const": 3600}}, ".2f"),
            p.num({"op": "div", "a": Page.src(a, "compute", "sweep_seconds"), "b": {"const": 3600}}, ".2f"),
            cut_note(x, e), ", ".join("`%s`" % os.path.basename(os.path.dirname(s)) for s in studies)))
    lines.append("")
    lrs = sorted({lr_key(r["lr"]) for _, _, rows in sizes for r in rows})
    head = "| peak LR |" + "".join(" %s: removal | %s: training without | %s: removal − training without |" % ((size(e),) * 3) for e, _, _ in sizes)
    lines += [head, "|---:|" + "---:|---:|---|" * len(sizes)]
    for lr in lrs:
        cells, lr_ex = [], None
        for e, an, rows in sizes:
            r = next((r for r in rows if lr_key(r["lr"]) == lr), None)
            if r is None:
                cells += ["—", "—", "—"]
                continue
            lr_ex = lr_ex or r["lr_ex"]
            a = x.analysis[e]
            best = [k for k in ("qk_on", "qk_off") if lr_key(an["best_lr"][k]) == lr]
            rem = p.iv(a, "by_lr", r["i"], "gains_to_1")
            wo = p.iv(a, "by_lr", r["i"], "off_minus_on")
            d = p.tiv(r["removal"], r["without"])
            cells += [rem[0], "%s (%s)" % (wo[0], verdict(wo[1], "QK-off worse", "QK-off better")),
                      "%s: %s%s" % (d[0], verdict(d[1], "removal costs more", "removal costs less"),
                                    " (best LR of %s)" % " and ".join({"qk_on": "QK-on", "qk_off": "QK-off"}[k] for k in best) if best else "")]
        lines.append("| %s | %s |" % (p.num(lr_ex, ".3g"), " | ".join(cells)))
    lines += ["", "![removal − training without at every LR, both sizes](figures/experiments/removal-vs-training-without.svg)", ""]
    # flags: pairs on different builds / CPUs / kernels, the sizes' builds, best LR at a grid's edge, divergence
    notes = []
    for e, an, rows in sizes:
        a = x.analysis[e]
        where = {}
        for s, i, r in x.runs(e):
            where[(r["qk_norm"], r["lr"], r["seed"])] = (s, r)
        seeds = an["seeds"]
        pairs = [("LR %s seed %s" % (p.num(Page.src(a, "by_lr", k, "lr"), ".3g"), p.num(Page.src(a, "seeds", j), "d")),
                  where[(True, row["lr"], sd)], where[(False, row["lr"], sd)])
                 for k, row in enumerate(an["by_lr"]) for j, sd in enumerate(seeds)
                 if (True, row["lr"], sd) in where and (False, row["lr"], sd) in where]
        flag = pair_flags(x, pairs)
        div = {"op": "sum", "of": [Page.src(a, "by_lr", k, d) for k in range(len(an["by_lr"])) for d in ("diverged_on", "diverged_off")]}
        notes.append("`%s`: %s; %s runs diverged. Each arm at its own best LR (one pick: QK-on %s, QK-off %s), removal − "
                     "training without is %s (%s).%s" % (
                         e, "every QK-on/QK-off pair trained on one build, CPU and kernel" if not flag else "pairs across " + flag,
                         p.num(div, "d"), p.num(Page.src(a, "best_lr", "qk_on"), ".3g"), p.num(Page.src(a, "best_lr", "qk_off"), ".3g"),
                         p.iv(a, "best_vs_best", "removal_minus_training_without")[0],
                         verdict(p.iv(a, "best_vs_best", "removal_minus_training_without")[1], "removal costs more", "removal costs less"),
                         edge_note(x, e, an) + fast_note(an)))
    provs = []
    for e, an, rows in sizes:
        s, i, r = x.runs(e)[0]
        pr = x.prov(s, r)
        builds = {x.prov(s2, r2)["build"][0] for s2, _, r2 in x.runs(e)}
        kernels = {x.prov(s2, r2)["kernel"][0] for s2, _, r2 in x.runs(e)}
        provs.append((e, pr, len(builds) == 1 and len(kernels) == 1))
    if len(sizes) > 1 and len({(pr["build"][0], pr["kernel"][0]) for _, pr, _ in provs}) > 1:
        notes.append("The sizes are compared side by side, not paired, and across builds and kernels: %s." % ", ".join(
            "`%s` on build %s, kernel %s%s" % (e, p.name(pr["build"][1]), p.name(pr["kernel"][1]), "" if one else " (and others)")
            for e, pr, one in provs))
    lines += ["- " + n for n in notes]
    return lines


def fast_note(an):
    """the analysis's fast-learning criterion at each arm's best LR (docs/experiments/EXPERIMENT.md states it)"""
    crit = [c["past_fast_learning"] for k in ("qk_on", "qk_off") for c in an["fast_learning"][k]]
    return (" Every best-LR run is past the fast-learning phase by the analysis's criterion." if all(crit) else
            " Some best-LR runs are still in the fast-learning phase by the analysis's criterion (`docs/experiments/`).")


def edge_note(x, e, an):
    p = x.p
    a = x.analysis[e]
    out = []
    for k, name in (("qk_on", "QK-on"), ("qk_off", "QK-off")):
        if an["best_lr"][k] in (an["lrs"][0], an["lrs"][-1]):
            out.append(name)
    if not out:
        return ""
    return " The best LR of %s is at the edge of the grid (%s): the grid does not bracket it." % (
        " and ".join(out), p.num(Page.src(a, "best_lr", "qk_on" if out[0] == "QK-on" else "qk_off"), ".3g"))


def results_sweep(x, sizes):
    """what the dependence is on: the sweep at each size's QK-on best LR, side by side"""
    p = x.p
    lines = ["", "### What the models depend on: the sweep at the QK-on arm's best LR", ""]
    labels = [k for k in sizes[0][1]["sweep_at_best_on"] if all(k in an["sweep_at_best_on"] for _, an, _ in sizes)
              and (" qk " in k or k.startswith("constant 1 "))]  # every Q and K gain, and Q or K alone at 1.0
    lines.append("ΔNLL of each QK-on model against itself unmodified, mean over seeds [95 %% interval]; every Q and K gain "
                 "of every layer unless the condition names one of them (the other conditions: `docs/experiments/`); the sizes at their own "
                 "best LR (%s), not at matched LRs." % ", ".join("%s %s" % (size(e), p.num(Page.src(x.analysis[e], "best_lr", "qk_on"), ".3g"))
                                                           for e, _, _ in sizes))
    lines += ["", "| condition |" + "".join(" %s |" % size(e) for e, _, _ in sizes), "|---|" + "---:|" * len(sizes)]
    for lab in labels:
        cells = []
        for e, an, _ in sizes:
            t, vals = p.iv(x.analysis[e], "sweep_at_best_on", lab, "delta_nll")
            v = verdict(vals)
            cells.append(t + (" (no measurable difference)" if v == "no measurable difference" else ""))
        lines.append("| %s | %s |" % (p.name({"op": "key", "of": Page.src(x.analysis[sizes[0][0]], "sweep_at_best_on"), "key": lab}), " | ".join(cells)))
    return lines


def limitations(x, sizes):
    p = x.p
    lines = ["", "## Limitations", ""]
    seeds = {len(an["seeds"]) for _, an, _ in sizes}
    lines += [
        "- Two sizes, one corpus, one training length per ablation: no trend with size is claimed. OMN-1 (its published "
        "profile aside) is not tested here: no OMN-1 weights.",
        "- %s seeds a point: the intervals are wide, and a difference too small for them reads as no measurable difference." %
        p.num({"op": "len", "of": Page.src(x.analysis[sizes[0][0]], "seeds")}, "d") if len(seeds) == 1 else
        "- Few seeds a point: the intervals are wide.",
        equivalence_limitation(x, sizes),
        "- A run resumed on a build that predates segments (the published cells' build among them) records the build, CPU "
        "and kernel of its last segment only, so a pair flagged as alike above may have trained part of the way on another "
        "kernel; a later run's `train.json` records every segment, and the flags read them all.",
        "- The routing arms are compared at one LR (the tiny ablation's best QK-on LR); the depth and length runs at the "
        "same LR and width.",
    ]
    return lines
