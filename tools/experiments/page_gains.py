"""docs/results.md: routing and depth (questions 2 and 3, analysis_gains.py) and QK-norm on against off
over a wide LR grid (analysis_qk_lr.py)."""
import os

from page_core import Page, verdict, pair_flags, model_text, lr_key, omn1_reference


ROUTING_REF = "OMN (Muon + AdamW)"

# analysis_gains.arm_name: which study (and optimizer) each routing/depth arm of an analysis is (the
# routing controls a pair used are in the analysis's arms[NAME].pairing, where it records them)
ARM_STUDY = {"OMN (Muon + AdamW)": ("routing-optimizer", "muon+adamw"), "AdamW everywhere": ("routing-optimizer", "adamw"),
             "gains' LR ×0.1": ("routing-gain-lr-0.1", None), "gains' LR ×10": ("routing-gain-lr-10", None),
             "weight decay 0.1 on gains": ("routing-gain-wd", None), "12 layers": ("depth-12", None),
             "5,000 steps": ("length-5000", None)}


def routing_arms(x, e):
    a = x.analysis[e]
    an = x.p.load(a)
    return a, an, [n for n in an["arms"] if n != ROUTING_REF]


def arm_runs(x, e, name):
    """seed → (study, run) of a routing/depth arm"""
    st, opt = ARM_STUDY[name]
    out = {}
    for s, i, r in x.runs(e):
        if os.path.basename(os.path.dirname(s)) == st and (opt is None or r.get("optimizer") == opt):
            out[r["seed"]] = (s, r)
    return out


def routing_pairs(x, e, name):
    """[(label, arm's (study, run), control's (study, run))] of a routing arm, seed by seed: the pairing the
    analysis records (each arm run with an OMN control of its build and kernel where the store has one:
    analysis_gains.match_controls), or, for an analysis written before it recorded one, the original
    OMN arm of the seed"""
    a = x.analysis[e]
    an = x.p.load(a)
    if "pairing" in an["arms"][name]:
        by = {(os.path.basename(os.path.dirname(s)), r["id"]): (s, r) for s, i, r in x.runs(e)}
        return [("seed " + x.p.num(Page.src(a, "arms", name, "pairing", j, "seed"), "d"),
                 by[(q["arm_study"], q["arm_run"])], by[(q["control_study"], q["control_run"])])
                for j, q in enumerate(an["arms"][name]["pairing"])]
    ref, mine = arm_runs(x, e, ROUTING_REF), arm_runs(x, e, name)
    return [("seed " + x.p.num(Page.src(a, "seeds", j), "d"), mine[sd], ref[sd]) for j, sd in enumerate(an["seeds"]) if sd in mine and sd in ref]


def routing_flags(x, e, name, short=False):
    return pair_flags(x, routing_pairs(x, e, name), short)


def compared_with(x, e, name):
    """which OMN control an arm was compared with: each control study, its build and kernel, and the seeds"""
    p = x.p
    groups = {}
    for label, arm, (s, r) in routing_pairs(x, e, name):
        pr = x.prov(s, r)
        key = (os.path.basename(os.path.dirname(s)), pr["build"][0], pr["kernel"][0])
        g = groups.setdefault(key, {"pr": pr, "seeds": []})
        g["seeds"].append(p.num(Page.src(s, "runs", p.load(s)["runs"].index(r), "seed"), "d"))
    return "; ".join("`%s` (%s, %s; seed%s %s)" % (st, p.name(g["pr"]["build"][1]), p.name(g["pr"]["kernel"][1]),
                                                   "s" if len(g["seeds"]) > 1 else "", ", ".join(g["seeds"]))
                     for (st, _, _), g in groups.items())


def summary_routing(x, e):
    p = x.p
    a, an, arms = routing_arms(x, e)
    parts, routing_answer = [], None
    for n in arms:
        gmean = p.iv(a, "arms", n, "vs_omn_gain_mean")
        gmax = p.iv(a, "arms", n, "vs_omn_gain_max")
        dep = p.iv(a, "arms", n, "vs_omn_dependence")
        vm, vg, vd = verdict(gmean[1]), verdict(gmax[1]), verdict(dep[1])
        if n == "AdamW everywhere":
            routing_answer = (vg, vd, vm)
        flag = routing_flags(x, e, n, short=True)
        parts.append("- %s: mean gain %s (%s), largest gain %s (%s), dependence %s (%s)%s." % (
            p.name({"op": "key", "of": Page.src(a, "arms"), "key": n}), gmean[0], vm, gmax[0], vg, dep[0], vd,
            "; paired across %s (Results)" % flag if flag else ""))
    if routing_answer is None:
        head = "The routing arm (AdamW everywhere) is not in the store."
    elif routing_answer[:2] == ("no measurable difference", "no measurable difference"):
        head = ("Not measurably here: AdamW on every parameter instead of OMN's Muon on the projections changes neither the "
                "largest gain nor the model's dependence on the gains measurably%s." % (
                    "" if routing_answer[2] == "no measurable difference" else " (the mean gain is %s)" % routing_answer[2]))
    else:
        head = "Yes, measurably: the projections' optimizer moves the largest gain or the dependence."
    moved = [n for n in arms if n.startswith("gains' LR") and (verdict(p.iv(a, "arms", n, "vs_omn_gain_max")[1]) != "no measurable difference"
                                                                 or verdict(p.iv(a, "arms", n, "vs_omn_dependence")[1]) != "no measurable difference")]
    if moved:
        head += " The gains' own AdamW LR does."
    return "\n\n".join(["**2. Does the optimizer routing drive the gains?** %s Each arm − OMN's routing (Muon + AdamW), "
                      "paired by seed, on the tiny model at one LR:" % head, "\n".join(parts)])


def results_qk_lr(x):
    """qk-lr-tiny (analysis_qk_lr.py): QK-norm on vs off over a wide LR grid, by the ablation's definitions,
    and what it says beside the ablation of the same model"""
    p = x.p
    lines = []
    for e in x.kind("qk-lr"):
        a = x.analysis[e]
        an = p.load(a)
        s, i0, r0 = next((s, i, r) for s, i, r in x.runs(e) if r["status"] == "finished")
        t = x.train_rel(s, r0)
        one = len(an["seeds"]) == 1
        lines += ["", "### QK-norm on vs off over a wide LR grid (`%s`)" % e, "",
                  "%s; optimizer `%s`, %s steps of %s × %s tokens; seed%s %s. Held-out NLL on the panel; each arm's best LR is its "
                  "study's choice on the training-time rows; a run that did not finish diverged (the ablation's definitions; "
                  "`docs/experiments/%s.md`)." % (
                      model_text(x, e)[0], p.name(Page.src(t, "config", "values", "optimizer", "kind")), p.num(Page.src(t, "steps"), ",d"),
                      p.num(Page.src(t, "config", "values", "batch_size"), "d"), p.num(Page.src(t, "config", "values", "seq_len"), "d"),
                      "" if one else "s", ", ".join(p.num(Page.src(a, "seeds", k), "d") for k in range(len(an["seeds"]))), e), "",
                  "| peak LR | QK-norm on | QK-norm off | off − on | read | diverged on / off |", "|---:|---:|---:|---:|---|---:|"]
        here = {}
        for k, r in enumerate(an["by_lr"]):
            cell = lambda key, spec=".3f": p.iv(a, "by_lr", k, key, spec=spec)[0] if r[key]["low"] is not None else (  # noqa: E731
                p.num(Page.src(a, "by_lr", k, key, "mean"), spec) if r[key]["mean"] is not None else "—")
            d = r["off_minus_on"]
            v = verdict((d["mean"], d["low"], d["high"]), "QK-off worse", "QK-off better")
            if v == "one seed: no claim":  # the sign, said as what it is: a single value's
                v += " (%s)" % ("QK-on lower" if d["mean"] > 0 else "QK-off lower" if d["mean"] < 0 else "equal")
                here.setdefault("sign: QK-on better" if d["mean"] > 0 else "sign: QK-off better" if d["mean"] < 0 else "equal", []).append(k)
            else:
                here.setdefault(v, []).append(k)
            best = [nm for key, nm in (("qk_on", "on"), ("qk_off", "off")) if lr_key(an["best_lr"][key]) == lr_key(r["lr"])]
            lines.append("| %s%s | %s | %s | %s | %s | %s / %s |" % (
                p.num(Page.src(a, "by_lr", k, "lr"), ".3g"), "".join(" (best %s)" % b for b in best), cell("on"), cell("off"),
                cell("off_minus_on", "+.3f"), v, p.num(Page.src(a, "by_lr", k, "diverged_on"), "d"), p.num(Page.src(a, "by_lr", k, "diverged_off"), "d")))
        bb = an["best_vs_best"]["off_minus_on"]
        bt = p.iv(a, "best_vs_best", "off_minus_on")[0] if bb["low"] is not None else p.num(Page.src(a, "best_vs_best", "off_minus_on", "mean"), "+.3f")
        edge = [nm for key, nm in (("qk_on", "QK-on"), ("qk_off", "QK-off")) if an["best_lr"][key] in (an["lrs"][0], an["lrs"][-1])]
        lines += ["", "Best LR: QK-on %s, QK-off %s%s. Each arm at its own best LR, off − on is %s (%s). Diverged runs: QK-on %s, QK-off %s." % (
            p.num(Page.src(a, "best_lr", "qk_on"), ".3g"), p.num(Page.src(a, "best_lr", "qk_off"), ".3g"),
            " (%s at the edge of the grid: not bracketed)" % " and ".join(edge) if edge else "", bt,
            verdict((bb["mean"], bb["low"], bb["high"]), "QK-off worse", "QK-off better"),
            p.num(Page.src(a, "diverged", "qk_on"), "d"), p.num(Page.src(a, "diverged", "qk_off"), "d"))]
        crit = [c["past_fast_learning"] for key in ("qk_on", "qk_off") for c in an["fast_learning"][key]]
        if not all(crit):
            lines[-1] += (" Some best-LR runs are still in the fast-learning phase by the ablation's criterion: the comparison is of "
                          "models still learning fast.")
        lines += reconcile_qk_lr(x, e, t, here)
    return lines


def reconcile_qk_lr(x, e, t, here):
    """beside the ablation of the same model (experiment 2): what each shows by the rules, and how the runs differ"""
    p = x.p
    a = x.analysis[e]
    an = p.load(a)
    mine = p.load(t)["model"]["config"]
    same = []
    for e2 in x.kind("ablation"):
        s2, _, r2 = x.runs(e2)[0]
        c2 = p.load(x.train_rel(s2, r2))["model"]["config"]
        if (c2["n_layers"], c2["d_model"]) == (mine["n_layers"], mine["d_model"]):
            same.append((e2, x.train_rel(s2, r2)))
    if not same:
        return []
    e2, t2 = same[0]
    a2 = x.analysis[e2]
    an2 = p.load(a2)
    lrs = lambda ks, aa: ", ".join(p.num(Page.src(aa, "by_lr", k, "lr"), ".3g") for k in ks)  # noqa: E731
    there = {}
    for k, r in enumerate(an2["by_lr"]):
        d = r["off_minus_on"]
        there.setdefault(verdict((d["mean"], d["low"], d["high"]), "QK-off worse", "QK-off better"), []).append(k)
    there_text = "; ".join("%s at LR %s" % (v, lrs(ks, a2)) for v, ks in there.items())
    every = list(there) == ["QK-off worse"]
    one = len(an["seeds"]) == 1
    if one:
        signs = [("QK-on lower (better)", here.get("sign: QK-on better")), ("QK-off lower (better)", here.get("sign: QK-off better")),
                 ("no value (a run diverged)", here.get("no value"))]
        here_text = ("one seed a point, so by the rules no difference here is a claim either way; the single values have %s" % "; ".join(
            "%s at LR %s" % (w, lrs(ks, a)) for w, ks in signs if ks))
    else:
        here_text = "; ".join("%s at LR %s" % (v, lrs(ks, a)) for v, ks in here.items())
    v1, v2 = p.load(t)["config"]["values"], p.load(t2)["config"]["values"]
    diffs = []
    if v1["optimizer"]["kind"] != v2["optimizer"]["kind"]:
        diffs.append("optimizer (`%s` here, `%s` there)" % (p.name(Page.src(t, "config", "values", "optimizer", "kind")),
                                                             p.name(Page.src(t2, "config", "values", "optimizer", "kind"))))
    if p.load(t)["steps"] != p.load(t2)["steps"]:
        diffs.append("training length (%s steps here, %s there)" % (p.num(Page.src(t, "steps"), ",d"), p.num(Page.src(t2, "steps"), ",d")))
    if len(an["seeds"]) != len(an2["seeds"]):
        diffs.append("seeds (%s here, %s there)" % (p.num({"op": "len", "of": Page.src(a, "seeds")}, "d"), p.num({"op": "len", "of": Page.src(a2, "seeds")}, "d")))
    conflict = bool(here.get("QK-off better")) and bool(there.get("QK-off worse"))
    text = ("**Beside `%s`** (the same model): there, off − on is %s%s. Here, %s. " % (
        e2, there_text, "" if every else ", which is not \"QK-norm helps at every LR\" by the rules", here_text))
    if one:
        text += ("%snothing here contradicts `%s`%s." % (
            "A QK-on disadvantage (its single values at LR %s) is therefore not a finding of the store, and " % lrs(here["sign: QK-off better"], a)
            if here.get("sign: QK-off better") else "By the rules ", e2, "; the runs also differ in %s" % ", ".join(diffs) if diffs else ""))
    elif conflict:
        text += "The two disagree where QK-off is better here and worse there%s." % ("; the runs differ in %s" % ", ".join(diffs) if diffs else "")
    else:
        text += "The two do not disagree by the rules%s." % ("; the runs differ in %s" % ", ".join(diffs) if diffs else "")
    return ["", text]


def results_routing(x, e):
    p = x.p
    a, an, arms = routing_arms(x, e)
    lines = ["", "### Routing: which factor moves the gains (`%s`)" % e, ""]
    lines.append("Tiny model, QK-norm on, one LR; each arm − OMN's routing (Muon + AdamW), paired by seed with the OMN control "
                 "run of the same build and OpenBLAS kernel where the store has one (`routing-optimizer`, trained with the arms, "
                 "or a rerun of it); %s h of training." %
                 p.num({"op": "div", "a": Page.src(a, "compute", "training_seconds"), "b": {"const": 3600}}, ".2f"))
    lines += ["", "| arm − OMN's | held-out NLL | mean gain | largest gain | dependence (removal) | compared with | pairs across |",
              "|---|---:|---:|---:|---:|---|---|"]
    for n in arms:
        cells = []
        for k in ("panel_loss", "gain_mean", "gain_max", "dependence"):
            t, vals = p.iv(a, "arms", n, "vs_omn_" + k)
            v = verdict(vals)
            cells.append(t + (" (n.m.d.)" if v == "no measurable difference" else ""))
        flag = routing_flags(x, e, n)
        lines.append("| %s | %s | %s | %s |" % (p.name({"op": "key", "of": Page.src(a, "arms"), "key": n}), " | ".join(cells),
                                               compared_with(x, e, n), flag or "—"))
    lines += ["", "n.m.d.: no measurable difference (the interval holds zero). The OMN arm's absolute values are in "
              "`docs/experiments/%s.md`." % e]
    reruns = p.load(a).get("control_reruns") or {}
    if reruns:
        lines += ["", "The OMN control itself, rerun on another build or kernel (rerun − the original `routing-optimizer` arm, "
                  "paired by seed): what the build or the kernel alone moves.", "",
                  "| rerun | on | held-out NLL | mean gain | largest gain | dependence (removal) |", "|---|---|---:|---:|---:|---:|"]
        studies = {os.path.basename(os.path.dirname(s)): s for s in x.studies(e)}
        for n in reruns:
            s = studies[n]
            runs = p.load(s)["runs"]
            cells = []
            for k in ("panel_loss", "gain_mean", "gain_max", "dependence"):
                t, vals = p.iv(a, "control_reruns", n, "vs_original_" + k)
                cells.append(t + (" (n.m.d.)" if verdict(vals) == "no measurable difference" else ""))
            pr = x.prov(s, runs[0]) if runs else None
            on = "build %s, kernel %s" % (p.name(pr["build"][1]), p.name(pr["kernel"][1])) if pr else "—"
            lines.append("| %s | %s | %s |" % (p.name({"op": "key", "of": Page.src(a, "control_reruns"), "key": n}), on, " | ".join(cells)))
    return lines


def results_depth(x):
    p = x.p
    ref = omn1_reference(p)
    lines = []
    for e in x.kind("depth"):
        a = x.analysis[e]
        an = p.load(a)
        lines += ["", "### Early-layer regime: depth and length (`%s`)" % e, "",
                  "QK-norm on, OMN's routing, tiny width; gains of the final checkpoint; early = the first two layers, late = the "
                  "last two; %s h of training." % p.num({"op": "div", "a": Page.src(a, "compute", "training_seconds"), "b": {"const": 3600}}, ".2f"),
                  "", "| model | early-layer gain mean | late-layer gain mean | early / late | largest gain | negative coordinates (per seed) | dependence |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for n in an["arms"]:
            cells = [p.iv(a, "arms", n, k, spec=".3f")[0] for k in ("early_mean", "late_mean", "early_over_late", "max")]
            neg = ", ".join(p.num(Page.src(a, "arms", n, "negative", j), "d") for j in range(len(an["arms"][n]["negative"])))
            dep = p.iv(a, "arms", n, "dependence")[0]
            lines.append("| %s | %s | %s | %s |" % (p.name({"op": "key", "of": Page.src(a, "arms"), "key": n}), " | ".join(cells), neg, dep))
        lines.append("| OMN-1 (published profile) | %s | %s (last layer) | %s | %s | %s | — |" % (
            p.num(ref["early"], ".3f"), p.num(ref["late"], ".3f"), p.num(ref["ratio"], ".3f"), p.num(ref["max"], ".1f"), p.num(ref["negative"], "d")))
    return lines
