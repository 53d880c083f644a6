"""docs/results.md: the regime experiment (question 3, analysis_regime.py): the training context and the
gains' LR budget."""
from page_core import Page, verdict, cells_ex, omn1_reference


def summary_regime(x):
    p = x.p
    lines = []
    depth = x.kind("depth")
    ref = omn1_reference(p)
    for e in depth:
        a = x.analysis[e]
        arms = p.load(a)["arms"]
        parts, maxima, below = [], [], True
        for n in arms:
            t, vals = p.iv(a, "arms", n, "early_over_late", spec=".3f")
            below = below and vals[2] is not None and vals[2] < 1
            parts.append("%s with %s" % (t, p.name({"op": "key", "of": Page.src(a, "arms"), "key": n})))
            maxima.append(p.num(Page.src(a, "arms", n, "max", "mean"), ".2f"))
        lines.append("Not in the completed `%s` experiment: the early layers' gain mean over the late layers' is %s, against "
                     "OMN-1's %s (its first two layers' mean over its last layer's)%s. The largest gains are %s (means over "
                     "seeds), against OMN-1's %s." % (
                         e, " and ".join(parts), p.num(ref["ratio"], ".1f"),
                         ": here the early-layer gains end smaller than the late ones, the opposite of OMN-1's" if below else "",
                         " and ".join(maxima), p.num(ref["max"], ".1f")))
    reg = [(e, c) for e, c in x.conf.items() if c["analysis"] == "regime"]
    for e, c in reg:
        if e in x.analysis:
            lines.append(regime_answer(x, e, ref))
        else:
            mine = [u for u in x.unfinished() if u[0] == e]
            exp = {"op": "sum", "of": [u[5] for u in mine] + [cells_ex(p, st) for st in c["studies"] if p.exists("results/%s/study.json" % st)]}
            # (how many cells are published is the store's to say, not the page's: the page changes only
            # when an analysis does, so a lane publishing a cell leaves it current)
            lines.append("`%s` (the training context and the gains' LR budget, the two candidate mechanisms) is in progress "
                         "(%s cells in all; what is published is in `results/`); its answer appears here when its analysis "
                         "does." % (e, p.num(exp, "d")))
    return "**3. Does an early-layer regime like OMN-1's appear?** " + " ".join(lines)


def regime_arms(x, e):
    """(name, i of its context in contexts, j of its scale in gain_lr_scales) of each arm, in the analysis's order"""
    an = x.p.load(x.analysis[e])
    return [(n, an["contexts"].index(t["context"]), an["gain_lr_scales"].index(t["gain_lr_scale"])) for n, t in an["arms"].items()]


def regime_label(x, e, n):
    """'context 512, gains' LR ×10' of an arm, its numbers printed from the analysis"""
    a = x.analysis[e]
    return "context %s, gains' LR ×%s" % (x.p.num(Page.src(a, "arms", n, "context"), ",d"), x.p.num(Page.src(a, "arms", n, "gain_lr_scale"), "g"))


def regime_scale_pairs(x, e):
    """[(context index, base arm, larger-scale arm, scale index)]: at each context, each larger gain LR with the base's arm"""
    an = x.p.load(x.analysis[e])
    by = {(i, j): n for n, i, j in regime_arms(x, e)}
    return [(i, by[(i, 0)], by[(i, j)], j) for i in range(len(an["contexts"])) for j in range(1, len(an["gain_lr_scales"]))
            if (i, 0) in by and (i, j) in by]


def regime_findings(x, e):
    """what the regime analysis shows, by the rules: the arms whose early / late ratio lies above 1, the context rows
    (scale index, context index) whose early growth or ratio is higher or lower than at the shortest context, the
    contexts where the larger gain LR's early growth is higher or lower (paired by seed), the budget verdicts"""
    p = x.p
    a = x.analysis[e]
    an = p.load(a)
    f = {"regime": [], "ctx_up": [], "ctx_down": [], "lr_up": [], "lr_down": [], "budget": []}
    for n, i, j in regime_arms(x, e):
        lo = an["arms"][n]["final"]["early_over_late"]["low"]
        if lo is not None and lo > 1:
            f["regime"].append(n)
    for j, sc in enumerate(an["gain_lr_scales"]):
        for i, ctx in enumerate(an["contexts"]):
            row = an["context_test"]["by_gain_lr"].get("x%g" % sc, {}).get(str(ctx))
            if row is None:
                continue
            vs = [verdict((row[k]["mean"], row[k]["low"], row[k]["high"])) for k in ("early_over_late", "early_growth")]
            if "higher" in vs:
                f["ctx_up"].append((j, i))
            if "lower" in vs:
                f["ctx_down"].append((j, i))
    for i, n0, n1, j in regime_scale_pairs(x, e):
        d = p.ev({"op": "t", "stat": "low", "a": Page.src(a, "arms", n1, "final", "early_growth", "values"),
                  "b": Page.src(a, "arms", n0, "final", "early_growth", "values")})
        h = p.ev({"op": "t", "stat": "high", "a": Page.src(a, "arms", n1, "final", "early_growth", "values"),
                  "b": Page.src(a, "arms", n0, "final", "early_growth", "values")})
        if d is not None and d > 0:
            f["lr_up"].append(i)
        if h is not None and h < 0:
            f["lr_down"].append(i)
        v = an["budget_test"]["by_context"][str(an["contexts"][i])]["x%g" % an["gain_lr_scales"][j]]["verdict_furthest"]
        f["budget"].append((i, j, v))
    return f


def regime_answer(x, e, ref):
    """question 3 by rule, from the regime analysis: what makes the early-layer gains grow here, or that nothing
    tested does and what it would take"""
    p = x.p
    a = x.analysis[e]
    an = p.load(a)
    f = regime_findings(x, e)
    ctx = lambda i: p.num(Page.src(a, "contexts", i), ",d")  # noqa: E731
    scale = lambda j: "×" + p.num(Page.src(a, "gain_lr_scales", j), "g")  # noqa: E731
    longest = len(an["contexts"]) - 1
    grows = []
    if f["ctx_up"]:
        grows.append("a longer training context (%s, against context %s)" % (
            "; ".join("gains' LR %s, context %s" % (scale(j), ctx(i)) for j, i in f["ctx_up"]), ctx(0)))
    if f["lr_up"]:
        grows.append("a larger gains' LR (at context %s; the early layers' growth, paired by seed)" % ", ".join(ctx(i) for i in f["lr_up"]))
    ratios = "; ".join("%s: %s" % (regime_label(x, e, n), p.iv(a, "arms", n, "final", "early_over_late", spec=".3f")[0])
                       for n, _, _ in regime_arms(x, e))
    kinds = {v.split(" (")[0].split(":")[0] for _, _, v in f["budget"]}
    if f["budget"]:
        budget = "; ".join("context %s, %s over %s: %s" % (ctx(i), scale(j), scale(0), p.name(Page.src(
            a, "budget_test", "by_context", str(an["contexts"][i]), "x%g" % an["gain_lr_scales"][j], "verdict_furthest"))) for i, j, _ in f["budget"])
    else:
        budget = "no larger gains' LR was tested"
    out = ["In `%s` (the tiny model at training contexts %s tokens and the gains' AdamW LR %s, seeds %s):" % (
        e, ", ".join(ctx(i) for i in range(len(an["contexts"]))), " and ".join(scale(j) for j in range(len(an["gain_lr_scales"]))),
        ", ".join(p.num(Page.src(a, "seeds", k), "d") for k in range(len(an["seeds"]))))]
    if grows:
        out.append("the early-layer gains grow with %s." % " and with ".join(grows))
    else:
        out.append("**nothing tested makes the early-layer gains grow**: no longer context and no larger gains' LR raises the early "
                   "layers' growth or their ratio to the late layers' measurably%s." % (
                       " (a longer context lowers one or both at %s)" % "; ".join("gains' LR %s, context %s" % (scale(j), ctx(i)) for j, i in f["ctx_down"])
                       if f["ctx_down"] else ""))
    if f["regime"]:
        out.append("The early-layer gains end measurably larger than the late-layer ones (an early / late ratio whose interval lies "
                   "above one) at %s, against OMN-1's ratio of %s." % (", ".join(regime_label(x, e, n) for n in f["regime"]), p.num(ref["ratio"], ".1f")))
    else:
        out.append("In no arm do the early-layer gains end measurably larger than the late-layer ones (early / late: %s), against "
                   "OMN-1's %s." % (ratios, p.num(ref["ratio"], ".1f")))
    out.append("How far the gains travel against their LR budget: %s." % budget)
    if not grows and not f["regime"]:
        need = []
        if kinds and all(k.startswith("in proportion") for k in kinds):
            need.append("the gains travel in proportion to their LR budget, so a larger budget (a higher gains' LR or more steps) "
                        "carries them further, though here not the early layers' ahead of the late ones")
        else:
            need.append("not a larger LR budget alone (the gains do not travel in proportion to it)")
        need.append("not a longer training context up to %s tokens" % ctx(longest))
        out.append("What it would take, by these results: %s; what the store does not test is OMN-1's own scale (its depth, "
                   "width, data and length of training)." % "; ".join(need))
    return " ".join(out)


def results_regime(x):
    p = x.p
    lines = []
    for e in x.kind("regime"):
        a = x.analysis[e]
        an = p.load(a)
        lines += ["", "### Early-layer regime: the training context and the gains' LR budget (`%s`)" % e, "",
                  "QK-norm on, OMN's routing, the tiny model at equal tokens a step; gains of the final checkpoint (`track`); early = the "
                  "first two layers, late = the last two; growth = the gain mean at the end minus at the start; dependence = ΔNLL when "
                  "the gains named are set to their initial value after training, against the model's own control on a panel at its "
                  "training length; intervals over seeds; %s h of training. Every checkpoint's per-layer means, and the budget "
                  "tables: `docs/experiments/%s.md`." % (
                      p.num({"op": "div", "a": Page.src(a, "compute", "training_seconds"), "b": {"const": 3600}}, ".2f"), e), "",
                  "| context | gains' LR | early / late | early growth | largest gain | negative coordinates | dependence: every gain "
                  "| early layers' gains | late layers' gains |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n, i, j in regime_arms(x, e):
            cells = [p.iv(a, "arms", n, "final", k, spec=sp)[0] for k, sp in (
                ("early_over_late", ".3f"), ("early_growth", "+.3f"), ("max", ".3f"), ("negative", ".1f"),
                ("dependence_all", "+.3f"), ("dependence_early", "+.3f"), ("dependence_late", "+.3f"))]
            lines.append("| %s | ×%s | %s |" % (p.num(Page.src(a, "arms", n, "context"), ",d"), p.num(Page.src(a, "arms", n, "gain_lr_scale"), "g"),
                                               " | ".join(cells)))
        ctx = lambda i: p.num(Page.src(a, "contexts", i), ",d")  # noqa: E731
        lines += ["", "The context, at each gains' LR (each context − context %s, paired by seed):" % ctx(0), ""]
        for j, sc in enumerate(an["gain_lr_scales"]):
            for i, c in enumerate(an["contexts"]):
                row = an["context_test"]["by_gain_lr"].get("x%g" % sc, {}).get(str(c))
                if row is None:
                    continue
                base = ["context_test", "by_gain_lr", "x%g" % sc, str(c)]
                r1, v1 = p.iv(a, *base, "early_over_late")
                r2, v2 = p.iv(a, *base, "early_growth")
                lines.append("- gains' LR ×%s, context %s: early / late %s (%s), early growth %s (%s)." % (
                    p.num(Page.src(a, "gain_lr_scales", j), "g"), ctx(i), r1, verdict(v1), r2, verdict(v2)))
        pairs = regime_scale_pairs(x, e)
        if pairs:
            lines += ["", "The gains' LR, at each context (the larger LR's arm − the base's, paired by seed; and how far the furthest "
                      "gain travelled against the budget):", ""]
            for i, n0, n1, j in pairs:
                d, vals = p.tiv(Page.src(a, "arms", n1, "final", "early_growth", "values"), Page.src(a, "arms", n0, "final", "early_growth", "values"))
                lines.append("- context %s, gains' LR ×%s − ×%s: early growth %s (%s); %s." % (
                    ctx(i), p.num(Page.src(a, "gain_lr_scales", j), "g"), p.num(Page.src(a, "gain_lr_scales", 0), "g"), d, verdict(vals),
                    p.name(Page.src(a, "budget_test", "by_context", str(an["contexts"][i]), "x%g" % an["gain_lr_scales"][j], "verdict_furthest"))))
    return lines
