"""What issue 29's analyses share (tools/experiments/analyse.py runs them): Student-t intervals and
their wording, pairing by seed, a study document with its runs' raw documents, a sweep's effects, the
fast-learning criterion, the learning-rate schedule, and the Job that writes an analysis's JSON, tables
and figure.

OMN_ANALYSIS_PARTIAL=1 runs an analysis on a store whose studies are not all complete, for trying it
while the cells are published: a study without study.json is read from the cell documents published
so far (results/STUDY/cell-K.json), and everything the analysis writes is marked partial and goes
under OMN_ANALYSIS_PARTIAL_OUT (default /tmp/omn-analysis-partial; never inside the repository), so a
partial result never lands in results/ or docs/. The runner never sets it: it analyses complete stores."""
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
partial = os.environ.get("OMN_ANALYSIS_PARTIAL", "") not in ("", "0")
partial_root = os.path.abspath(os.environ.get("OMN_ANALYSIS_PARTIAL_OUT", "/tmp/omn-analysis-partial"))
# two-sided 95 % Student-t quantiles, df 1..30
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
# one-sided 95 % Student-t quantiles, df 1..30: the 90 % interval of two one-sided tests at alpha 0.05
T95 = [6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753,
       1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697]
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


def tost(values, margin, alpha=0.05):
    """Two one-sided t-tests of |mean| < margin (an equivalence test): equivalent where the (1 − 2α)
    interval of the mean lies inside (−margin, +margin). Only α = 0.05 is tabled (T95)."""
    if alpha != 0.05:
        sys.exit("analysis: the equivalence test is tabled for alpha 0.05 only, not %r" % alpha)
    iv = interval(values)  # the mean and the sample standard deviation
    n = iv["n"]
    if n < 2:
        return {"n": n, "margin": margin, "alpha": alpha, "values": values, "verdict": "too few values"}
    m, sd = iv["mean"], iv["sd"]
    se = sd / math.sqrt(n)
    q = T95[n - 2] if n - 1 <= 30 else 1.645
    low, high = m - q * se, m + q * se
    return {"n": n, "mean": m, "sd": sd, "low": low, "high": high, "margin": margin, "alpha": alpha, "df": n - 1,
            "t_lower": (m + margin) / se if se > 0 else None, "t_upper": (m - margin) / se if se > 0 else None,
            "critical_t": q, "values": values,
            "verdict": "equivalent within ±%g" % margin if -margin < low and high < margin else "equivalence not shown"}


def experiment_config(name):
    """The experiment's entry of configs/experiments.json (OMN_EXPERIMENTS_CONFIG, as the runner reads);
    an empty one for an experiment it does not name (a test's)."""
    path = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_CONFIG", os.path.join(root, "configs", "experiments.json")))
    return json.load(open(path))["experiments"].get(name, {})


def paired(a, b, f=lambda x, y: x - y):
    """f(a_i, b_i) seed by seed (two lists in the same seed order), None where either lacks the seed."""
    return [f(x, y) if x is not None and y is not None else None for x, y in zip(a, b)]


def fmt(iv, digits=4, sign=False):
    if iv["mean"] is None:
        return "—"
    f = "%+.*f" if sign else "%.*f"
    s = f % (digits, iv["mean"])
    if iv["low"] is not None:
        s += " [%s, %s]" % (f % (digits, iv["low"]), f % (digits, iv["high"]))
    return s


def whisk(axis, xs, ivs, colour, label, marker, offset=1.0, ls=None):
    """means with their intervals as error bars at xs (x offset, for arms side by side on a log axis);
    the values without a mean are left out, one without an interval has no bar."""
    xs2 = [x * offset for x, iv in zip(xs, ivs) if iv["mean"] is not None]
    m = [iv["mean"] for iv in ivs if iv["mean"] is not None]
    lo = [iv["mean"] - iv["low"] if iv["low"] is not None else 0 for iv in ivs if iv["mean"] is not None]
    hi = [iv["high"] - iv["mean"] if iv["high"] is not None else 0 for iv in ivs if iv["mean"] is not None]
    axis.errorbar(xs2, m, yerr=[lo, hi], color=colour, marker=marker, capsize=3, label=label, lw=1.5, ms=5, **({"ls": ls} if ls else {}))


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
        self.cells = None  # (published, expected) where read from the cells of an incomplete study
        if os.path.exists(path) or not partial:
            if not os.path.exists(path):
                sys.exit("analysis: %s does not exist: the study is not complete (OMN_ANALYSIS_PARTIAL=1 reads the cells "
                         "published so far, for trying an analysis; its outputs are marked partial)" % path)
            self.doc = json.load(open(path))
        else:
            self.doc = self.from_cells()
        self.after = os.path.join(self.dir, "after")
        self.runs = self.doc["runs"]

    def from_cells(self):
        """An incomplete study (OMN_ANALYSIS_PARTIAL): the published cell documents' runs, in cell order."""
        names = sorted(f for f in os.listdir(self.dir) if f.startswith("cell-") and f.endswith(".json")) if os.path.isdir(self.dir) else []
        docs = [json.load(open(os.path.join(self.dir, f))) for f in names]
        expected = docs[0]["grid"]["cells"] if docs else None
        self.cells = (len(docs), expected)
        doc = dict(docs[0]) if docs else {"provenance": {}}
        doc["runs"] = [r for d in docs for r in d["runs"]]
        return doc

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

    def log(self, r, rec):
        """the run's log.jsonl (rec: its train.json), one record a logged step"""
        return [json.loads(line) for line in open(os.path.join(self.dir, r["dir"], rec["log"])) if line.strip()]


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


def lr_multiplier(schedule, step, total):
    """The schedule's factor on the peak LR at `step` (1-based) of `total`, as omn-audit's trainer applies it
    (src/train/train_config.cpp, lrMultiplier): linear warm-up, then cosine, linear or constant to min_lr_ratio."""
    w = schedule.get("warmup_steps", 0)
    if w > 0 and step <= w:
        return step / w
    span = total - w
    if span <= 1 or schedule.get("decay", "cosine") == "constant":
        return 1.0
    t = (step - w - 1) / (span - 1)
    shape = 0.5 * (1.0 + math.cos(math.pi * t)) if schedule.get("decay", "cosine") == "cosine" else 1.0 - t
    lo = schedule.get("min_lr_ratio", 0.0)
    return lo + (1.0 - lo) * shape


def checked_schedule(rec, log):
    """rec's schedule (train.json), checked against the LR its log records at every logged step: exit 1
    where this reading of the schedule is not the one the run trained with."""
    lr, total = rec["config"]["values"]["optimizer"]["lr"], rec["steps"]
    logged = [e for e in log if "lr" in e]  # (the step-0 evaluation has no LR)
    if not logged:
        sys.exit("analysis: %s: its log records no LR to check the schedule against" % rec.get("name", "a run"))
    for e in logged:
        want = lr * lr_multiplier(rec["schedule"], e["step"], total)
        if abs(e["lr"] - want) > 1e-9 * max(abs(want), 1e-12):
            sys.exit("analysis: %s: step %d logged LR %r, the schedule gives %r" % (rec.get("name", "a run"), e["step"], e["lr"], want))
    return rec["schedule"]


def footer(fig, text):
    """`text` in small print (wrapped to the figure's width) on a strip added below the figure: the figure
    grows by it and what it held keeps its place and size (axes, texts, legends anchored to the figure alike)"""
    import textwrap
    text = "\n".join(textwrap.wrap(text, int(fig.get_figwidth() * 17)))  # ~17 characters an inch at 7 pt
    line = 0.1 + 0.12 * (text.count("\n") + 1)
    h = fig.get_figheight()
    lift = lambda y: (y * h + line) / (h + line)  # noqa: E731  (a figure fraction, after growing)
    for ax in fig.axes:
        p = ax.get_position()
        ax.set_position([p.x0, lift(p.y0), p.width, p.height * h / (h + line)])
    for t in fig.texts:
        x, y = t.get_position()
        t.set_position((x, lift(y)))
    for leg in fig.legends:
        leg.set_bbox_to_anchor((0, lift(0), 1, 1 - lift(0)), transform=fig.transFigure)
    fig.set_figheight(h + line)
    fig.text(0.01, line / 2 / (h + line), text, fontsize=7, color="#444", ha="left", va="center")


class Job:
    """One analysis: its kind (ablation, routing, depth, regime), the experiment it is written for, the
    study documents it reads; it writes results/EXPERIMENT/analysis.json, docs/experiments/EXPERIMENT.md
    and docs/figures/experiments/EXPERIMENT.svg (with OMN_ANALYSIS_PARTIAL, the same paths under
    OMN_ANALYSIS_PARTIAL_OUT, each marked partial)."""

    def __init__(self, kind, experiment, study_paths, extra_paths=(), compare=None):
        self.kind, self.experiment, self.study_paths = kind, experiment, study_paths
        self.extra_paths, self.compare = list(extra_paths), compare  # analyse.py --equivalence, --compare-with (name, paths)
        self.out_root, self.store_root = out_root, store_root
        self.partial = {} if partial else None  # with OMN_ANALYSIS_PARTIAL: each study's cells (mark_partial)
        if partial:
            inside = os.path.commonpath([partial_root, root]) == root
            if inside:
                sys.exit("analysis: OMN_ANALYSIS_PARTIAL_OUT=%s is inside the repository (%s): a partial analysis is "
                         "written outside it" % (partial_root, root))
            self.out_root, self.store_root = partial_root, os.path.join(partial_root, "results")

    def mark_partial(self, studies):
        """Under OMN_ANALYSIS_PARTIAL, what the analysis read: each study's cells (published, expected;
        a complete study's study.json counts whole)."""
        if partial:
            self.partial = {os.path.basename(s.dir): {"published": s.cells[0] if s.cells else len(s.runs),
                                                      "expected": s.cells[1] if s.cells else len(s.runs),
                                                      "from": "cells" if s.cells else "study.json"} for s in studies}
        return self.partial

    def partial_text(self):
        if not self.partial:
            return "PARTIAL"
        some = [v for v in self.partial.values() if v["published"]]
        empty = len(self.partial) - len(some)  # (a study without a published cell does not say how many it has)
        return "PARTIAL: %d of %d cells%s" % (sum(v["published"] for v in some), sum(v["expected"] for v in some),
                                             "; %d of %d studies have none yet" % (empty, len(self.partial)) if empty else "")

    def save(self, fig, compute):
        """the figure under docs/figures/experiments/, its footer naming the CPU each run trained on
        (`compute`: compute_note's record)"""
        d = os.path.join(self.out_root, "docs", "figures", "experiments")
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, self.experiment + ".svg")
        if self.partial is not None:  # in the title, or as one
            title = getattr(fig, "_suptitle", None)
            text = self.partial_text() + " (OMN_ANALYSIS_PARTIAL, not a result)"
            fig.suptitle(text + ("\n" + title.get_text() if title else ""), color="#D55E00", fontsize=title.get_fontsize() if title else 10,
                         fontweight="bold")
        footer(fig, "Trained on %s (each run's CPU as its train.json records it)" % self.cpu_text(compute))
        fig.savefig(p, metadata={"Date": None})
        plt.close(fig)
        return os.path.relpath(p, self.out_root)

    def write(self, analysis, markdown):
        out = os.path.join(self.store_root, self.experiment)
        os.makedirs(out, exist_ok=True)
        if self.partial is not None:
            analysis = dict(analysis, partial=self.partial)
            markdown = ("**%s: an analysis of an incomplete store (OMN_ANALYSIS_PARTIAL), not a result.**\n\n"
                        % self.partial_text()) + markdown
        with open(os.path.join(out, "analysis.json"), "w") as f:
            json.dump(analysis, f, indent=1)
            f.write("\n")
        d = os.path.join(self.out_root, "docs", "experiments")
        os.makedirs(d, exist_ok=True)
        head = ("<!-- generated by `tools/run-experiments.sh %s` (tools/experiments/analyse.py %s): do not edit -->\n\n"
                % (self.experiment, self.kind))
        with open(os.path.join(d, self.experiment + ".md"), "w") as f:
            f.write(head + markdown)
        if self.partial is not None:
            print("analysis (partial): %s, %s" % (os.path.join(out, "analysis.json"), os.path.join(d, self.experiment + ".md")))
        else:
            print("analysis: results/%s/analysis.json, docs/experiments/%s.md" % (self.experiment, self.experiment))

    def compute_note(self, studies):
        """the runs' own training time, the sweeps' time, and every step the runner accounted (all invocations)."""
        secs = sum(r.get("seconds") or 0 for s in studies for r in s.runs)
        acct = os.path.join(store_root, "compute.jsonl")  # the store read (a partial analysis writes elsewhere)
        steps, cut = {}, 0.0
        names = {os.path.basename(s.dir) for s in studies}
        if os.path.exists(acct):
            for line in open(acct):
                a = json.loads(line)
                if a["experiment"] == self.experiment:
                    what = a["step"].split(" cell ")[0]  # "train STUDY cell k/N" → "train STUDY"
                    kind, _, study = what.partition(" ")
                    if kind in ("train", "after-training", "merge") and study not in names:
                        continue  # a study of the experiment this analysis does not read (its runs are not counted either)
                    steps[what] = steps.get(what, 0.0) + a["seconds"]
                    if a.get("interrupted") and what.startswith("train "):  # cut off by its lane's end: accounted by the next lane
                        cut += a["seconds"]
        sweep = 0.0
        for s in studies:
            for r in s.runs:
                sw = s.sweep(r)
                if sw:
                    sweep += sw["control"]["open"]["seconds"] + sw["control"]["close"]["seconds"] + sum(c["seconds"] for c in sw["conditions"])
        cpu = next((s.doc["provenance"].get("host", {}) for s in studies if s.runs), {})
        # a study's cells can train on several CPUs (the sessions' machines change): count each run's own
        runs_by_cpu = {}
        for s in studies:
            for r in s.runs:
                try:
                    host = s.train(r).get("provenance", {}).get("host", {})
                except FileNotFoundError:
                    continue
                name = host.get("cpu", "unknown CPU") if isinstance(host, dict) else str(host)
                runs_by_cpu[name] = runs_by_cpu.get(name, 0) + 1
        out = {"training_seconds": secs, "sweep_seconds": sweep, "host": cpu, "runs_by_cpu": runs_by_cpu,
               "runner_seconds_by_step": steps}
        if cut:
            out["interrupted_training_seconds"] = cut
        return out

    @staticmethod
    def cut_text(comp):
        """'' or, where steps were cut off by a session's end, the runner's time for the training steps with
        every segment counted (a run's own timing may hold its last segment only)"""
        if not comp.get("interrupted_training_seconds"):
            return ""
        train = sum(v for k, v in comp["runner_seconds_by_step"].items() if k.startswith("train "))
        return (" The runner's training steps took %.2f h, every segment counted (%.2f h of it in steps cut off by a "
                "session's end and resumed from a checkpoint)." % (train / 3600, comp["interrupted_training_seconds"] / 3600))

    @staticmethod
    def cpu_text(comp):
        """'AMD EPYC', or '18 runs on AMD EPYC, 6 on Intel(R) Xeon(R) Processor' where the runs' CPUs differ (most runs first)."""
        by = {str(k): v for k, v in (comp.get("runs_by_cpu") or {}).items()}
        if len(by) == 1:  # the runs' own, not the document's (a merge may run elsewhere)
            return next(iter(by))
        if len(by) > 1:
            parts = sorted(by.items(), key=lambda kv: (-kv[1], kv[0]))
            return ", ".join("%d%s on %s" % (n, " runs" if i == 0 else "", c) for i, (c, n) in enumerate(parts))
        host = comp["host"]
        return host.get("cpu", host) if isinstance(host, dict) else host
