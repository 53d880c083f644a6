#!/usr/bin/python3
"""docs/results.md, a short paper generated from the store:

  /usr/bin/python3 tools/experiments/results_page.py [--check]

Reads results/*/analysis.json (what tools/experiments/analyse.py wrote), the study and train.json
documents they name (each run's build, CPU and OpenBLAS kernel), configs/experiments.json and the study
manifests (which cells an unfinished experiment expects), results/STUDY/cell-*.json (how many are
published) and configs/omn-1-reference-profile.json (OMN-1's published gains), and writes
  docs/results.md                                                   the page
  docs/figures/experiments/removal-vs-training-without.svg          its figure
--check writes nothing and exits 1 where docs/results.md is not what the store gives.

Its sections follow the analyses present: the ablations (question 1), routing (question 2: each arm
against the OMN control of its own build and kernel where the analysis found one, and which control that
was), depth and regime (question 3: the regime experiment's table, and the answer by rule, once its
complete analysis is in the store; a partial one is never read), qk-lr (QK-norm on vs off over a wide LR
grid, beside the ablation of the same model); the studies not yet complete are listed as in progress.

No number on the page is typed here: each goes through Page.num, which prints a value the store gives
(or one computed from such values by the few operations of Page.ev: a difference, a mean, a ratio, a
Student-t interval, a count) and records where it came from; tests/parity/check_results_page.py
re-derives every recorded number from the files on its own and fails on any number in the page that no
record covers. The claims follow the rules written once in Methods (RULES below): an interval that holds
0 is "no measurable difference", never "the same"; equivalence is claimed only where an ablation's
pre-registered equivalence test (TOST, its analysis's /equivalence) has every seed in, and the page
re-derives its 90 % interval from the seeds' values; a paired difference between runs on different builds,
CPUs or OpenBLAS kernels is flagged."""
import glob
import json
import math
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PAGE = "docs/results.md"
FIGURE = "docs/figures/experiments/removal-vs-training-without.svg"
# two-sided 95 % Student-t quantiles, df 1..30: the analyses' (analysis_common.T975)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
REMOVAL = "constant 1 qk all"  # the sweep's condition: every Q and K gain set to 1.0
ROUTING_REF = "OMN (Muon + AdamW)"
# analysis_gains.arm_name: which study (and optimizer) each routing/depth arm of an analysis is (the
# routing controls a pair used are in the analysis's arms[NAME].pairing, where it records them)
ARM_STUDY = {"OMN (Muon + AdamW)": ("routing-optimizer", "muon+adamw"), "AdamW everywhere": ("routing-optimizer", "adamw"),
             "gains' LR ×0.1": ("routing-gain-lr-0.1", None), "gains' LR ×10": ("routing-gain-lr-10", None),
             "weight decay 0.1 on gains": ("routing-gain-wd", None), "12 layers": ("depth-12", None),
             "5,000 steps": ("length-5000", None)}
# one-sided 95 % quantiles, df 1..30: the 90 % interval of two one-sided tests at alpha 0.05 (analysis_common.T95)
T95 = [6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753,
       1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697]
MARK = "\x00%d\x01"


def t_interval(values, level=95):
    """mean, low, high of the 95 % Student-t interval, or the 90 % one (level 90: an equivalence test's
    at alpha 0.05); None where fewer than two values."""
    v = [x for x in values if x is not None]
    n = len(v)
    if n == 0:
        return None, None, None
    m = sum(v) / n
    if n < 2:
        return m, None, None
    q = (T975[n - 2] if n - 1 <= 30 else 1.96) if level == 95 else (T95[n - 2] if n - 1 <= 30 else 1.645)
    h = q * math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1)) / math.sqrt(n)
    return m, m - h, m + h


def display(text):
    """a number as printed: U+2212 for the minus sign"""
    return text.replace("-", "−")


class Page:
    """The documents read (by path relative to the repository), the page's text, and a record of every
    number and name printed from them (expression, format, text)."""

    def __init__(self, root=ROOT):
        self.root, self.cache, self.records = root, {}, []

    # --- reading the store ---
    def load(self, rel):
        if rel not in self.cache:
            p = os.path.join(self.root, rel)
            self.cache[rel] = json.load(open(p)) if rel.endswith(".json") else open(p).read()
        return self.cache[rel]

    def exists(self, rel):
        return os.path.exists(os.path.join(self.root, rel))

    @staticmethod
    def src(rel, *ptr):
        return {"src": [rel, list(ptr)]}

    def get(self, rel, *ptr):
        return self.ev(self.src(rel, *ptr))

    def ev(self, e):
        """the value of an expression: a document's value at a pointer, or an operation on expressions"""
        if "src" in e:
            v = self.load(e["src"][0])
            for k in e["src"][1]:
                v = v[k]
            return v
        if "const" in e:
            return e["const"]
        op = e["op"]
        if op in ("sub", "div", "mul"):
            a, b = self.ev(e["a"]), self.ev(e["b"])
            return a - b if op == "sub" else a / b if op == "div" else a * b
        if op == "mean":
            v = [self.ev(x) for x in e["of"]]
            return sum(v) / len(v)
        if op == "len":
            return len(self.ev(e["of"]))
        if op == "sum":
            return sum(self.ev(x) for x in e["of"])
        if op == "prod":
            return math.prod(self.ev(x) for x in e["of"])
        if op == "t":  # a Student-t interval of a list, or of the differences of two lists element by element
            a = self.ev(e["a"])
            if "b" in e:
                a = [x - y if x is not None and y is not None else None for x, y in zip(a, self.ev(e["b"]))]
            return dict(zip(("mean", "low", "high"), t_interval(a, e.get("level", 95))))[e["stat"]]
        if op == "count":
            return len(glob.glob(os.path.join(self.root, e["glob"])))
        if op == "word":  # a string's i-th whitespace-separated word, or its first n characters
            s = str(self.ev(e["of"])).strip()
            return s.split()[e["i"]] if "i" in e else s[:e["n"]]
        if op == "key":  # a key of an object, printed as a name
            obj = self.ev(e["of"])
            if e["key"] not in obj:
                raise KeyError(e["key"])
            return e["key"]
        raise ValueError("unknown operation %r" % op)

    # --- printing ---
    def num(self, e, spec=".3f"):
        """the value of e, formatted (spec: Python's format spec, or "s" for a string as it is); recorded"""
        v = self.ev(e)
        text = v if spec == "s" else display(format(v, spec))
        self.records.append({"expr": e, "spec": spec, "text": text})
        return MARK % (len(self.records) - 1)

    def name(self, e):
        return self.num(e, "s")

    def interval(self, ex_mean, ex_low, ex_high, spec="+.3f"):
        """'mean [low, high]' and its values"""
        vals = (self.ev(ex_mean), self.ev(ex_low), self.ev(ex_high))
        if vals[0] is None:
            return "—", vals
        if vals[1] is None:
            return self.num(ex_mean, spec) + " (one seed: no interval)", vals
        return "%s [%s, %s]" % (self.num(ex_mean, spec), self.num(ex_low, spec), self.num(ex_high, spec)), vals

    def iv(self, rel, *ptr, spec="+.3f"):
        """an interval object of an analysis (mean, low, high) at ptr"""
        return self.interval(*(self.src(rel, *ptr, k) for k in ("mean", "low", "high")), spec=spec)

    def tiv(self, a, b=None, spec="+.3f", level=95):
        """the Student-t interval of a list (or of a − b, element by element, paired by seed); level 90: an
        equivalence test's"""
        ex = lambda stat: dict({"op": "t", "stat": stat, "a": a}, **({"b": b} if b else {}),  # noqa: E731
                               **({"level": level} if level != 95 else {}))
        return self.interval(ex("mean"), ex("low"), ex("high"), spec=spec)

    def render(self, text):
        """the page without its marks, and where each recorded text lies in it: [(start, end, record)]"""
        out, spans, pos, i = [], [], 0, 0
        while True:
            j = text.find("\x00", i)
            if j < 0:
                out.append(text[i:])
                break
            k = text.index("\x01", j)
            out.append(text[i:j])
            pos += j - i
            rec = self.records[int(text[j + 1:k])]
            spans.append((pos, pos + len(rec["text"]), rec))
            out.append(rec["text"])
            pos += len(rec["text"])
            i = k + 1
        return "".join(out), spans


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


def verdict(vals, more="higher", less="lower"):
    m, lo, hi = vals
    if m is None:
        return "no value"
    if lo is None:
        return "one seed: no claim"
    if lo > 0:
        return more
    if hi < 0:
        return less
    return "no measurable difference"


def study_rel(path):
    """results/STUDY/study.json of a study path an analysis recorded (relative, or the writer's absolute)"""
    return os.path.join("results", os.path.basename(os.path.dirname(path)), "study.json")


def cells_ex(p, st):
    """the number of cells a study's manifest expects, as an expression: the product of its grid's list
    axes and its LR grid's points ({from, to, points})"""
    man = "configs/studies/%s.json" % st
    grid = p.load(man)["grid"]
    return {"op": "prod", "of": [{"op": "len", "of": Page.src(man, "grid", k)} for k in grid if isinstance(grid[k], list)] +
            [Page.src(man, "grid", k, "points") for k in grid if isinstance(grid[k], dict) and "points" in grid[k]]}


class Experiments:
    """configs/experiments.json, the analyses present, and each run's provenance."""

    def __init__(self, page):
        self.p = page
        self.conf = page.load("configs/experiments.json")["experiments"]
        # (an analysis marked partial, OMN_ANALYSIS_PARTIAL's, is no result: never in the store, and never read if it were)
        self.analysis = {e: "results/%s/analysis.json" % e for e in self.conf if page.exists("results/%s/analysis.json" % e)
                         and "partial" not in page.load("results/%s/analysis.json" % e)}

    def kind(self, kind):
        return [e for e in self.conf if self.conf[e]["analysis"] == kind and e in self.analysis]

    def studies(self, e):
        return [study_rel(s) for s in self.p.load(self.analysis[e])["studies"]]

    def runs(self, e):
        """(study.json path, index, run) of every run of the analysis's studies"""
        return [(s, i, r) for s in self.studies(e) for i, r in enumerate(self.p.load(s)["runs"])]

    def train_rel(self, s, r):
        return os.path.normpath(os.path.join(os.path.dirname(s), r["dir"], "train.json"))

    def prov(self, s, r):
        """what a run trained on: (build, CPU, OpenBLAS kernel), as values and as expressions to print them"""
        t = self.train_rel(s, r)
        ex = {"build": {"op": "word", "n": 7, "of": Page.src(t, "provenance", "git_revision")},
              "CPU": Page.src(t, "provenance", "host", "cpu"),
              "kernel": {"op": "word", "i": -2, "of": Page.src(t, "provenance", "libraries", "openblas")}}
        return {k: (self.p.ev(x), x) for k, x in ex.items()}

    def segment_provs(self, s, r):
        """prov() of each segment a resumed run's train.json records (/segments: each process that trained
        it), the segments that recorded all three; none for a record written before segments were"""
        t = self.train_rel(s, r)
        out = []
        for i, seg in enumerate(self.p.load(t).get("segments") or []):
            if any(seg.get(k) is None for k in ("git_revision", "cpu", "openblas")):
                continue
            ex = {"build": {"op": "word", "n": 7, "of": Page.src(t, "segments", i, "git_revision")},
                  "CPU": Page.src(t, "segments", i, "cpu"),
                  "kernel": {"op": "word", "i": -2, "of": Page.src(t, "segments", i, "openblas")}}
            out.append({k: (self.p.ev(x), x) for k, x in ex.items()})
        return out

    def unfinished(self):
        """(experiment, study, published cells, expected cells, expressions) of every configured study
        without its study document, in the order of configs/experiments.json"""
        out = []
        for e, c in self.conf.items():
            for st in c["studies"]:
                if self.p.exists("results/%s/study.json" % st):
                    continue
                exp_ex = cells_ex(self.p, st)
                pub_ex = {"op": "count", "glob": "results/%s/cell-*.json" % st}
                out.append((e, st, self.p.ev(pub_ex), self.p.ev(exp_ex), pub_ex, exp_ex))
        return out


def pair_flags(x, pairs, short=False):
    """pairs: [(label, run a, run b)] with each run's (study, run); the fields that differ, as text (short:
    their names only), or ''"""
    diffs = {}
    for label, (sa, ra), (sb, rb) in pairs:
        pa, pb = x.prov(sa, ra), x.prov(sb, rb)
        every = [pa, pb] + x.segment_provs(sa, ra) + x.segment_provs(sb, rb)  # a resumed run: each segment's too
        for k in ("build", "CPU", "kernel"):
            other = next((q[k] for q in every if q[k][0] != pa[k][0]), None)
            if other is not None:
                d = diffs.setdefault(k, {"labels": [], "a": pa[k], "b": other})
                d["labels"].append(label)
    if short:
        names = [k for k in ("build", "CPU", "kernel") if k in diffs]
        return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    parts = []
    for k in ("build", "CPU", "kernel"):
        if k in diffs:
            d = diffs[k]
            parts.append("%s %s vs %s (%s)" % (k, x.p.name(d["a"][1]), x.p.name(d["b"][1]),
                                               "every pair" if len(d["labels"]) == len(pairs) else ", ".join(d["labels"])))
    return "; ".join(parts)


# --- the sections ---

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


def model_text(x, e):
    """'8 layers, d 384, 15.74M parameters' of an experiment's first run, and its steps × batch × length"""
    s, i, r = x.runs(e)[0]
    t = x.train_rel(s, r)
    p = x.p
    return ("%s layers, d %s, %sM parameters" % (p.num(Page.src(t, "model", "config", "n_layers"), "d"),
                                                 p.num(Page.src(t, "model", "config", "d_model"), "d"),
                                                 p.num({"op": "div", "a": Page.src(s, "runs", i, "parameters"), "b": {"const": 1e6}}, ".2f")),
            "%s steps of %s × %s tokens" % (p.num(Page.src(t, "steps"), ",d"), p.num(Page.src(t, "config", "values", "batch_size"), "d"),
                                            p.num(Page.src(t, "config", "values", "seq_len"), "d")))


def lr_key(lr):
    """an LR as a grid point: the studies write 0.001 as 0.0010000000000000002 or 0.001"""
    return float("%.6g" % lr)


def size(e):
    return e.split("-", 1)[1] if "-" in e else e


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


# --- the pre-registered equivalence test (an ablation analysis's /equivalence) ---
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


def upper_first(text):
    return text[:1].upper() + text[1:]


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


def omn1_reference(p):
    """OMN-1's early (layers 0-1) and last-layer gain means and their ratio, from the reference profile"""
    ref = "configs/omn-1-reference-profile.json"
    figs = p.load(ref)["figures"]
    at = lambda ptr: Page.src(ref, "figures", next(i for i, f in enumerate(figs) if f["pointer"] == ptr), "value")  # noqa: E731
    early = {"op": "mean", "of": [at("/layers/%d/%s/mean" % (li, qk)) for li in (0, 1) for qk in ("q", "k")]}
    late = {"op": "mean", "of": [at("/layers/27/%s/mean" % qk) for qk in ("q", "k")]}
    return {"early": early, "late": late, "ratio": {"op": "div", "a": early, "b": late}, "max": at("/statistics/max"),
            "negative": at("/statistics/count_negative")}


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
            pub = {"op": "sum", "of": [u[4] for u in mine]}
            exp = {"op": "sum", "of": [u[5] for u in mine] + [cells_ex(p, st) for st in c["studies"] if p.exists("results/%s/study.json" % st)]}
            done = {"op": "sum", "of": [{"op": "count", "glob": "results/%s/cell-*.json" % st} for st in c["studies"]
                                        if p.exists("results/%s/study.json" % st)]}
            # (how many cells are published is the store's to say, not the page's: the page changes only
            # when an analysis does, so a lane publishing a cell leaves it current)
            lines.append("`%s` (the training context and the gains' LR budget, the two candidate mechanisms) is in progress "
                         "(%s cells in all; what is published is in `results/`); its answer appears here when its analysis "
                         "does." % (e, p.num(exp, "d")))
    return "**3. Does an early-layer regime like OMN-1's appear?** " + " ".join(lines)


# --- the regime experiment (analysis_regime.py): the training context and the gains' LR budget ---

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


def results_unfinished(x):
    p = x.p
    un = x.unfinished()
    if not un:
        return []
    lines = ["", "### In progress", "", "Studies configured in `configs/experiments.json` whose cells are not all published "
             "(their cells appear in `results/STUDY/` as they finish; their numbers join this page when their experiment's "
             "analysis is written):", ""]
    for e, st, pub, exp, pub_ex, exp_ex in un:
        lines.append("- `%s` (%s): %s cells" % (st, e, p.num(exp_ex, "d")))
    return lines


def demo_section(x):
    lines = ["", "### The demo model (`tools/demo.sh`)", ""]
    record = os.path.join(x.p.root, "demo", "tiny-sotu", "results", "sweep.json")
    if os.path.exists(record):
        lines.append("The demo's sweep is recorded beside the demo model, not in this store: `demo/tiny-sotu/results/sweep.json` "
                     "(the constant-replacement sweep and its controls on held-out addresses the demo model never saw, each "
                     "paired against the unmodified model). The README's demo numbers are generated from it "
                     "(`tools/docs_numbers.py`); `bash tools/demo.sh` reruns it and says how far the rerun lies from the record.")
    else:
        lines.append("No sweep of the demo model is recorded. `bash tools/demo.sh` runs it: the constant-replacement sweep and "
                     "its controls on held-out addresses the demo model never saw, each paired against the unmodified model, "
                     "with its figures and review report (`build/demo/`).")
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


def build(root=ROOT):
    """(page text, spans [(start, end, record)], page object, figure data)"""
    p = Page(root)
    x = Experiments(p)
    sizes = []
    for e in x.kind("ablation"):
        an, rows = ablation_data(x, e)
        sizes.append((e, an, rows))
    body = ["<!-- generated by tools/experiments/results_page.py from the store (results/): do not edit; "
            "`/usr/bin/python3 tools/experiments/results_page.py` rewrites it, tests/parity/check_results_page.py checks it -->", "",
            "# Measured results", "",
            "What omn-audit's training experiments measured, generated from the store (`results/`): every number on this page is "
            "printed by `tools/experiments/results_page.py` from `results/*/analysis.json` and the documents they name, and "
            "`tests/parity/check_results_page.py` fails on any number the store does not give. Each experiment's full tables "
            "are in `docs/experiments/`; how to run the experiments: [the runbook](experiments/RUNBOOK.md).", "",
            "## Summary", ""]
    if sizes:
        body += [summary_removal(x, sizes), ""]
    for e in x.kind("routing"):
        body += [summary_routing(x, e), ""]
    body += [summary_regime(x), ""]
    body += methods(x, sizes) if sizes else []
    body += [""]
    if sizes:
        body += results_removal(x, sizes) + results_sweep(x, sizes)
    for e in x.kind("routing"):
        body += results_routing(x, e)
    body += results_depth(x) + results_regime(x) + results_qk_lr(x) + results_unfinished(x) + demo_section(x)
    if sizes:
        body += limitations(x, sizes)
    text, spans = p.render("\n".join(body).rstrip("\n") + "\n")
    fig = [(size(e), [(r["lr"], r["vals"]) for r in rows]) for e, _, rows in sizes]
    return text, spans, p, fig


def figure(fig, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 9, "svg.hashsalt": "omn-audit", "svg.fonttype": "none"})
    colours = ["#0072B2", "#D55E00", "#009E73"]
    f, ax = plt.subplots(figsize=(6, 3.6))
    for i, (name, pts) in enumerate(fig):
        pts = [(lr, v) for lr, v in pts if v[0] is not None]
        xs = [lr * (1 + 0.03 * (i - (len(fig) - 1) / 2)) for lr, _ in pts]
        m = [v[0] for _, v in pts]
        lo = [v[0] - v[1] if v[1] is not None else 0 for _, v in pts]
        hi = [v[2] - v[0] if v[2] is not None else 0 for _, v in pts]
        ax.errorbar(xs, m, yerr=[lo, hi], color=colours[i % 3], marker="os^"[i % 3], capsize=3, lw=1.5, ms=5, label="%s model" % name)
    ax.axhline(0, color="#888", lw=0.8)
    ax.set_xscale("log")
    lrs = sorted({lr for _, pts in fig for lr, _ in pts})
    ax.set_xticks(lrs)
    ax.set_xticklabels(["%.3g" % v for v in lrs])
    ax.minorticks_off()
    ax.set_xlabel("peak AdamW learning rate (both arms at the same LR)")
    ax.set_ylabel("removal − training without\n(Δ held-out NLL, nats/token)")
    ax.set_title("Removing the learned gains minus training without QK-norm,\nmean over seeds, 95 % t-interval, paired by seed", fontsize=9)
    ax.legend(frameon=False, fontsize=8)
    f.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    f.savefig(path, metadata={"Date": None})
    plt.close(f)


def main(argv):
    check = "--check" in argv[1:]
    text, _, _, fig = build()
    page = os.path.join(ROOT, PAGE)
    if check:
        same = os.path.exists(page) and open(page).read() == text
        print("%s: %s" % (PAGE, "as the store gives it" if same else "differs from what the store gives: rerun tools/experiments/results_page.py"))
        return 0 if same else 1
    with open(page, "w") as f:
        f.write(text)
    if fig:
        figure(fig, os.path.join(ROOT, FIGURE))
    print("wrote %s, %s" % (PAGE, FIGURE))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
