"""docs/results.md's core (tools/experiments/results_page.py): the store's documents read as recorded
expressions (Page), the experiments present in the store (Experiments), and the claim rules' verdict."""
import glob
import json
import math
import os


ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PAGE = "docs/results.md"
FIGURE = "docs/figures/experiments/removal-vs-training-without.svg"

# two-sided 95 % Student-t quantiles, df 1..30: the analyses' (analysis_common.T975)
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
REMOVAL = "constant 1 qk all"  # the sweep's condition: every Q and K gain set to 1.0
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


def upper_first(text):
    return text[:1].upper() + text[1:]


def omn1_reference(p):
    """OMN-1's early (layers 0-1) and last-layer gain means and their ratio, from the reference profile"""
    ref = "configs/omn-1-reference-profile.json"
    figs = p.load(ref)["figures"]
    at = lambda ptr: Page.src(ref, "figures", next(i for i, f in enumerate(figs) if f["pointer"] == ptr), "value")  # noqa: E731
    early = {"op": "mean", "of": [at("/layers/%d/%s/mean" % (li, qk)) for li in (0, 1) for qk in ("q", "k")]}
    late = {"op": "mean", "of": [at("/layers/27/%s/mean" % qk) for qk in ("q", "k")]}
    return {"early": early, "late": late, "ratio": {"op": "div", "a": early, "b": late}, "max": at("/statistics/max"),
            "negative": at("/statistics/count_negative")}
