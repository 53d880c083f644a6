"""docs/results.md: an ablation's pre-registered equivalence test (its analysis's /equivalence), read
once every seed it names is in; its 90 % interval re-derived from the seeds' values."""
import sys

from page_core import Page, verdict, study_rel, pair_flags, lr_key, size, upper_first


MEASURES = {"removal_minus_training_without": "removal − training without",
            "off_minus_on": "training without (QK-off − QK-on)"}


def equivalence_read(x, e):
    """(analysis, its /equivalence) where the ablation's equivalence test was read: every seed it names in,
    with a value of the primary measure for each; None where none is stated or a seed or value is missing"""
    a = x.analysis[e]
    eq = x.p.load(a).get("equivalence")
    if not eq or eq["missing_seeds"]:
        return None
    values = eq["tests"][eq["plan"]["measure"]].get("values", [])
    return (a, eq) if len(values) >= 2 and None not in values else None


def equivalence_tested_at(x, e, lr):
    """whether e's equivalence test was read with both arms at LR lr"""
    if not equivalence_read(x, e):
        return False
    best = x.p.load(x.analysis[e])["best_lr"]
    return lr_key(best["qk_on"]) == lr == lr_key(best["qk_off"])


def sizes_owning(names, what):
    """'one, the small model's' / '2, the tiny and small models'' (what: a noun for the count)"""
    if len(names) == 1:
        return "one %s, the %s model's" % (what, names[0])
    return "%d %ss, the %s models'" % (len(names), what, " and ".join(names))


def equivalence_pairs(x, e, a, eq):
    """(label, QK-on run, QK-off run) of each seed of the test: each arm at its best LR, in the grid's
    studies or the test's own"""
    p = x.p
    an = p.load(a)
    where = {}
    for s in x.studies(e) + [study_rel(st) for st in eq["studies"]]:
        for r in p.load(s)["runs"]:
            where[(r["qk_norm"], lr_key(r["lr"]), r["seed"])] = (s, r)
    on, off = lr_key(an["best_lr"]["qk_on"]), lr_key(an["best_lr"]["qk_off"])
    return [("seed %s" % p.num(Page.src(a, "equivalence", "seeds", j), "d"), where[(True, on, sd)], where[(False, off, sd)])
            for j, sd in enumerate(eq["seeds"]) if (True, on, sd) in where and (False, off, sd) in where]


def summary_equivalence(x, sizes):
    """question 1's equivalence test, once read: each measure's 90 % interval re-derived from the seeds'
    values, its verdict by the stated margin (and it must be the analysis's)"""
    p = x.p
    out = []
    for e, an, rows in sizes:
        read = equivalence_read(x, e)
        if not read:
            continue
        a, eq = read
        plan = eq["plan"]
        margin = plan["margin"]
        m_text = p.num(Page.src(a, "equivalence", "plan", "margin"), "g")
        parts = []
        for name in [plan["measure"]] + plan.get("secondary", []):
            if name not in eq["tests"]:
                continue
            values = eq["tests"][name]["values"]
            lacking = [j for j, v in enumerate(values) if v is None]
            if lacking or len(values) < 2:  # a seed without its value (its sweep), or too few seeds: no test
                parts.append("%s is not tested: %s" % (MEASURES.get(name, "`%s`" % name), (
                    "seed %s lacks its value" % ", ".join(p.num(Page.src(a, "equivalence", "seeds", j), "d") for j in lacking)
                    if lacking else "fewer than two values")))
                continue
            text, vals = p.tiv(Page.src(a, "equivalence", "tests", name, "values"), spec="+.4f", level=90)
            inside = -margin < vals[1] and vals[2] < margin
            if inside != eq["tests"][name]["verdict"].startswith("equivalent"):
                sys.exit("results_page: %s /equivalence/tests/%s says %r, but its values' 90 %% interval lies %s the margin"
                         % (a, name, eq["tests"][name]["verdict"], "inside" if inside else "outside"))
            said = ("**equivalent within ±%s**" % m_text if inside else
                    "**equivalence not shown**: the interval reaches past ±%s, so the runs cannot say the difference lies within the "
                    "margin" % m_text)
            parts.append("%s is %s (90 %% interval): %s" % (MEASURES.get(name, "`%s`" % name), text, said))
        flag = pair_flags(x, equivalence_pairs(x, e, a, eq))
        out.append("**Equivalence test of the %s model, pre-registered** (stated %s; margin ±%s nats/token; two one-sided t-tests "
                   "at α = %s over seeds %s, paired by seed, each arm at its best LR): %s.%s" % (
                       size(e), p.name(Page.src(a, "equivalence", "plan", "stated")), m_text,
                       p.num(Page.src(a, "equivalence", "plan", "alpha"), "g"),
                       ", ".join(p.num(Page.src(a, "equivalence", "seeds", j), "d") for j in range(len(eq["seeds"]))),
                       "; ".join(parts), " Pairs across %s." % flag if flag else ""))
    return "\n\n".join(out)


def equivalence_limitation(x, sizes):
    """the limitations' line on equivalence: which test was read, why none was, or when one will be"""
    read = [e for e, _, _ in sizes if equivalence_read(x, e)]
    if read:
        return ("- %s at the best LRs (the Summary's first question): elsewhere a difference that is not measurable says "
                "nothing about how small it is." % upper_first(sizes_owning([size(e) for e in read], "equivalence test")))
    running = {u[0] for u in x.unfinished()}
    planned = [(e, an) for e, an, _ in sizes if "equivalence" in an]
    moot = [e for e, an in planned if e not in running and
            verdict(x.p.iv(x.analysis[e], "best_vs_best", "removal_minus_training_without")[1]) != "no measurable difference"]
    if planned and len(moot) == len(planned):
        return ("- No equivalence test was read: the %s ablation's pre-registered test is run only if its bracketed grid "
                "leaves no measurable difference at each arm's best LR, and the grid measured one (the Summary's first question). Where a "
                "difference is not measurable, this page does not say how small it is." % " and ".join(size(e) for e in moot))
    return ("- No equivalence test has been read yet: where a difference is not measurable, this page does not say how small it "
            "is. The small ablation's test is stated before its seeds are trained (`configs/experiments.json`, `equivalence`; "
            "docs/experiments/ablation-small.md) and is read once every seed is in.")
