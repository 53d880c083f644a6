#!/usr/bin/python3
"""docs/results.md is what the store gives, and every number on it comes from the store.

  check_results_page.py [SOURCE_DIR]      (default: this checkout; no omn-audit, no training: about a second)

(a) Regenerates the page from the committed store (tools/experiments/results_page.py, in memory: nothing is
    written) and requires it byte-identical to docs/results.md, and the figure it links to present.
(b) Every number the generator printed is re-derived here from the files themselves, with this file's own
    JSON reader and its own implementation of the few operations the generator may apply (a difference, a
    quotient or product by a unit constant, a mean, a sum, a product, a length, a Student-t interval, a file
    count, a word of a string, a key of an object), formatted at the printed precision, and must be the printed
    text. Then every number in the page must lie inside one of those printed texts, except, by rule:
      - code spans and fenced code (identifiers: paths, commands, study and condition names); each word of
        one that holds a digit must be an existing path or a string or key of a document the generator read;
      - link and image targets, `](...)`: paths, which must exist;
      - list and section numbers: a number that opens a line (after `**` if bold) followed by `. `;
      - names: a number joined to a word by a hyphen (OMN-1);
      - the interval level, `95 %` (and an equivalence test's, `90 %`): a property of the analyses' Student-t
        quantiles, not of the store;
      - digests and build ids (7 or more hex digits with a letter) and dates (YYYY-MM-DD).
    So a number typed by hand, or one the store does not give at its printed precision, fails the test.
(c) The sections the committed store may not hold yet are generated and checked as in (b) on a synthetic
    store (a temporary copy of configs/ and docs/, the store's documents linked, never written): the
    routing controls rerun on the arms' build and kernels (routing-optimizer's OMN runs relabelled as
    routing-control-haswell and -skylakex on build 9a38267), the regime-tiny analysis of the regime cells
    published so far (a study without study.json read from its cells), and qk-lr-tiny (the tiny
    ablation's seed-0 documents standing in for its cells, one QK-off run marked diverged). The analyses run on it as the runner runs them
    (tools/experiments/analyse.py); the page must show each section, pair each routing arm with the
    control of its build and kernel, and every number must re-derive. Then one control run is given segments
    (a resumed run's train.json), its first on SkylakeX's kernels: the page must flag its pairs as crossing kernels.
(d) On the same synthetic store, the small ablation's pre-registered equivalence test as its analysis would
    hold it once read (inside the margin, across it, a seed lacking a value, a verdict contradicting its
    values), and a complete grid that measured a difference (no test run): the page's wording follows.
(e) While an ablation's widening study is unfinished, its grid completed from its published cells (copies
    of a published seed of the same arm and LR): the analysis as the runner runs it at the last merge,
    and the page with LRs only one size trained.
"""
import glob
import json
import shutil
import subprocess
import tempfile
import math
import os
import re
import sys

src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(src, "tools", "experiments"))
import results_page  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


# --- (a) the page regenerates byte-identical ---
text, spans, page, _ = results_page.build(src)
committed = open(os.path.join(src, "docs", "results.md")).read()
check(text == committed, "docs/results.md is not what the store gives: run /usr/bin/python3 tools/experiments/results_page.py "
      "(first differing line: %s)" % next((i + 1 for i, (a, b) in enumerate(zip(text.splitlines(), committed.splitlines())) if a != b),
                                            min(len(text.splitlines()), len(committed.splitlines())) + 1))
check(os.path.exists(os.path.join(src, results_page.FIGURE)), "the page's figure %s is missing" % results_page.FIGURE)
check("Trained on: " in open(os.path.join(src, results_page.FIGURE)).read(), "the page's figure names the CPU its runs trained on")

# --- (b) every recorded number, re-derived here ---
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
T95 = {1: 6.314, 2: 2.920, 3: 2.353, 4: 2.132, 5: 2.015, 6: 1.943, 7: 1.895, 8: 1.860, 9: 1.833, 10: 1.812}  # one-sided: TOST's 90 %
UNITS = (3600, 1e6)  # the only constants an expression may hold: seconds → hours, a count → millions
class Store:
    """one store's documents, read with this file's own reader (rel: a path relative to its root)"""

    def __init__(self, root):
        self.root, self.docs = root, {}

    def load(self, rel):
        if rel not in self.docs:
            with open(os.path.join(self.root, rel)) as f:
                self.docs[rel] = json.load(f) if rel.endswith(".json") else f.read()
        return self.docs[rel]


def student(values, level=95):
    v = [x for x in values if x is not None]
    n = len(v)
    if n == 0:
        return None, None, None
    m = sum(v) / n
    if n < 2:
        return m, None, None
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    h = {95: T975, 90: T95}[level][n - 1] * sd / math.sqrt(n)
    return m, m - h, m + h


def derive(e, st):
    if "src" in e:
        rel, ptr = e["src"]
        v = st.load(rel)
        for k in ptr:
            v = v[k]
        return v
    if "const" in e:
        raise ValueError("a constant outside a unit conversion: %r" % e)
    op = e["op"]
    if op in ("div", "mul"):
        if "const" in e["b"] and e["b"]["const"] not in UNITS:
            raise ValueError("a constant that is no unit: %r" % e["b"])
        b = e["b"]["const"] if "const" in e["b"] else derive(e["b"], st)
        return derive(e["a"], st) / b if op == "div" else derive(e["a"], st) * b
    if op == "sub":
        return derive(e["a"], st) - derive(e["b"], st)
    if op == "mean":
        v = [derive(x, st) for x in e["of"]]
        return sum(v) / len(v)
    if op == "sum":
        return sum(derive(x, st) for x in e["of"])
    if op == "prod":
        out = 1
        for x in e["of"]:
            out *= derive(x, st)
        return out
    if op == "len":
        return len(derive(e["of"], st))
    if op == "t":
        a = derive(e["a"], st)
        if "b" in e:
            a = [x - y if x is not None and y is not None else None for x, y in zip(a, derive(e["b"], st))]
        return dict(zip(("mean", "low", "high"), student(a, e.get("level", 95))))[e["stat"]]
    if op == "count":
        return len(glob.glob(os.path.join(st.root, e["glob"])))
    if op == "word":
        s = str(derive(e["of"], st)).strip()
        return s.split()[e["i"]] if "i" in e else s[:e["n"]]
    if op == "key":
        if e["key"] not in derive(e["of"], st):
            raise KeyError(e["key"])
        return e["key"]
    raise ValueError("unknown operation %r" % op)


def check_numbers(root, text, spans, page, where=""):
    """(b) on one store: every recorded text re-derived, every number of the page inside one; returns the
    count of numbers, of recorded texts and of documents read"""
    st = Store(root)
    strings = set()
    for start, end, rec in spans:
        try:
            v = derive(rec["expr"], st)
            want = v if rec["spec"] == "s" else format(v, rec["spec"]).replace("-", "−")
        except (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError, OSError) as err:
            check(False, where + "page offset %d: %r does not derive from the store (%s: %s)" % (start, rec["text"], type(err).__name__, err))
            continue
        check(want == rec["text"] == text[start:end], where + "page offset %d: printed %r, the store gives %r" % (start, text[start:end], want))

    # --- every number on the page inside a recorded text, the exclusions by rule aside ---

    def collect(v):
        if isinstance(v, dict):
            for k, x in v.items():
                strings.add(k)
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)
        elif isinstance(v, str):
            strings.update([v] + v.split())

    for rel in list(page.cache):
        collect(st.load(rel))

    def known(word):
        w = word.strip(".,;:()")
        return w in strings or os.path.exists(os.path.join(root, w)) or os.path.exists(os.path.join(root, "docs", w)) or \
            os.path.exists(w) and os.path.isabs(w)

    blank = list(text)

    def cut(a, b):
        for i in range(a, b):
            if blank[i] != "\n":
                blank[i] = " "

    for m in re.finditer(r"```.*?```", text, re.S):
        cut(m.start(), m.end())
    for m in re.finditer(r"`([^`\n]+)`", text):
        if re.search(r"\d", m.group(1)):
            bad = [w for w in m.group(1).split() if re.search(r"\d", w) and not known(w)]
            check(not bad, where + "code span %r names %s: neither a path nor a string of the store" % (m.group(0), bad))
        cut(m.start(), m.end())
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        check(os.path.exists(os.path.join(root, "docs", m.group(1))), "%slink target %s does not exist" % (where, m.group(1)))
        cut(m.start(), m.end())
    rules = [r"(?m)^(\*\*)?\d+\. ",            # list and section numbers
             r"[A-Za-z]+-\d+\b",               # names: OMN-1
             r"\b95 %",                        # the interval level
             r"\b90 %",                        # an equivalence test's interval level (two one-sided tests at 0.05)
             r"\b(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b",  # digests, build ids
             r"\b\d{4}-\d{2}-\d{2}\b"]         # dates
    for rx in rules:
        for m in re.finditer(rx, "".join(blank)):
            cut(m.start(), m.end())
    covered = [False] * len(text)
    for start, end, _ in spans:
        for i in range(start, end):
            covered[i] = True
    numbers = 0
    for m in re.finditer(r"[+−-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[+−-]?\d+)?", "".join(blank)):
        numbers += 1
        line = text.count("\n", 0, m.start()) + 1
        check(all(covered[m.start():m.end()]), where + "docs/results.md line %d: %r is not a number the store gives (no record covers it)" % (line, m.group(0)))
    return numbers, len(spans), len(st.docs)


# --- (a), (b) on the committed store ---
n_numbers, n_texts, n_docs = check_numbers(src, text, spans, page)
print("%d numbers on the page, %d recorded texts re-derived from %d documents of the store" % (n_numbers, n_texts, n_docs))


# --- (c) the sections the store does not hold yet, on a synthetic store ---
def link_all(src_dir, dst_dir, skip=()):
    """dst_dir a real folder whose entries are links to src_dir's (so what an analysis writes lands in dst_dir)"""
    os.makedirs(dst_dir, exist_ok=True)
    for f in sorted(os.listdir(src_dir)):
        if f not in skip:
            os.symlink(os.path.join(src_dir, f), os.path.join(dst_dir, f))


def control_rerun(fake, name, build, kernel):
    """routing-optimizer's OMN (Muon + AdamW) runs as a rerun study `name`, their train.json relabelled to
    `build` and OpenBLAS `kernel` (the CPU left as it is)"""
    real = os.path.join(src, "results", "routing-optimizer")
    d = os.path.join(fake, "results", name)
    doc = json.load(open(os.path.join(real, "study.json")))
    doc["runs"] = [r for r in doc["runs"] if r.get("optimizer") == "muon+adamw"]
    os.makedirs(os.path.join(d, "after"))
    json.dump(doc, open(os.path.join(d, "study.json"), "w"))
    os.symlink(os.path.join(real, "after", "panel.json"), os.path.join(d, "after", "panel.json"))
    for r in doc["runs"]:
        for f in os.listdir(os.path.join(real, "after")):
            if f.startswith(r["id"] + "."):
                os.symlink(os.path.join(real, "after", f), os.path.join(d, "after", f))
        rd = os.path.join(d, r["dir"])
        link_all(os.path.join(real, r["dir"]), rd, skip=("train.json",))
        rec = json.load(open(os.path.join(real, r["dir"], "train.json")))
        rec["provenance"]["git_revision"] = build
        words = rec["provenance"]["libraries"]["openblas"].split()
        words[-2] = kernel
        rec["provenance"]["libraries"]["openblas"] = " ".join(words)
        json.dump(rec, open(os.path.join(rd, "train.json"), "w"))


fake = tempfile.mkdtemp(prefix="omn-results-page-")
try:
    shutil.copytree(os.path.join(src, "configs"), os.path.join(fake, "configs"))
    shutil.copytree(os.path.join(src, "docs"), os.path.join(fake, "docs"))
    os.makedirs(os.path.join(fake, "results"))
    conf = json.load(open(os.path.join(src, "configs", "experiments.json")))["experiments"]
    made = {"routing-tiny", "qk-lr-tiny", "routing-control-haswell", "routing-control-skylakex"} | \
        {e for e, c in conf.items() if c["analysis"] == "regime"} | {st for c in conf.values() if c["analysis"] == "regime" for st in c["studies"]}
    for f in sorted(os.listdir(os.path.join(src, "results"))):
        if f not in made and f != "compute.jsonl":
            os.symlink(os.path.join(src, "results", f), os.path.join(fake, "results", f))
    shutil.copyfile(os.path.join(src, "results", "compute.jsonl"), os.path.join(fake, "results", "compute.jsonl"))
    control_rerun(fake, "routing-control-haswell", "9a38267f" + "0" * 32, "Haswell")
    control_rerun(fake, "routing-control-skylakex", "9a38267f" + "0" * 32, "SkylakeX")
    # qk-lr-tiny as it is configured, one seed, and with runs that diverged: the tiny ablation's seed 0, its QK-off
    # runs at the largest LR marked diverged
    qd = os.path.join(fake, "results", "qk-lr-tiny")
    link_all(os.path.join(src, "results", "ablation-tiny"), qd, skip=("analysis.json", "study.json"))
    doc = json.load(open(os.path.join(src, "results", "ablation-tiny", "study.json")))
    doc["runs"] = [r for r in doc["runs"] if r["seed"] == 0]
    top = max(r["lr"] for r in doc["runs"])
    for r in doc["runs"]:
        if r["lr"] == top and not r["qk_norm"]:
            r["status"] = "diverged"
    json.dump(doc, open(os.path.join(qd, "study.json"), "w"))
    regime = [(e, c) for e, c in conf.items() if c["analysis"] == "regime"]
    for e, c in regime:
        for st in c["studies"]:
            d = os.path.join(fake, "results", st)
            real = os.path.join(src, "results", st)
            if not os.path.isdir(real):
                continue
            link_all(real, d)
            if not os.path.exists(os.path.join(d, "study.json")):  # an unfinished study: its published cells' runs
                cells = sorted(f for f in os.listdir(real) if f.startswith("cell-") and f.endswith(".json"))
                doc = json.load(open(os.path.join(real, cells[0])))
                doc["runs"] = [r for f in cells for r in json.load(open(os.path.join(real, f)))["runs"]]
                json.dump(doc, open(os.path.join(d, "study.json"), "w"))
    env = dict(os.environ, OMN_EXPERIMENTS_STORE=os.path.join(fake, "results"), OMN_EXPERIMENTS_OUT=fake)
    env.pop("OMN_ANALYSIS_PARTIAL", None)
    analyse = os.path.join(src, "tools", "experiments", "analyse.py")
    jobs = [("routing", "routing-tiny", conf["routing-tiny"]["studies"]), ("qk-lr", "qk-lr-tiny", ["qk-lr-tiny"])]
    jobs += [("regime", e, [st for st in c["studies"] if os.path.isdir(os.path.join(fake, "results", st))]) for e, c in regime]
    for kind, e, studies in jobs:
        if not studies:
            continue
        pr = subprocess.run([sys.executable, analyse, kind, e] + ["results/%s/study.json" % st for st in studies],
                            cwd=fake, env=env, capture_output=True, text=True)
        check(pr.returncode == 0, "synthetic store: analyse.py %s %s exits 0 (%d: %s)" % (kind, e, pr.returncode, pr.stderr.strip()[-300:]))
    ftext, fspans, fpage, _ = results_page.build(fake)
    with open(os.path.join(fake, "docs", "results.md"), "w") as f:
        f.write(ftext)
    numbers2 = check_numbers(fake, ftext, fspans, fpage, "synthetic store: ")
    an = json.load(open(os.path.join(fake, "results", "routing-tiny", "analysis.json")))
    for arm, t in an["arms"].items():
        for q in t.get("pairing", []):
            check(q["same_build_kernel"], "synthetic store: routing arm %s seed %d is paired with a control of its own build and kernel "
                  "(got %s: %s %s, the arm %s %s)" % (arm, q["seed"], q["control_study"], q["control"]["build"], q["control"]["kernel"],
                                                      q["arm"]["build"], q["arm"]["kernel"]))
    check("`routing-control-haswell` (" in ftext and "`routing-control-skylakex` (" in ftext,
          "synthetic store: the routing table names the control each arm was compared with")
    check("The OMN control itself, rerun" in ftext, "synthetic store: the page shows the control reruns")
    check("### QK-norm on vs off over a wide LR grid (`qk-lr-tiny`)" in ftext and "**Beside `ablation-tiny`**" in ftext,
          "synthetic store: the page shows qk-lr-tiny and sets it beside the tiny ablation")
    check("no difference here is a claim either way" in ftext and "Diverged runs: QK-on 0, QK-off 1." in ftext,
          "synthetic store: qk-lr-tiny's one seed makes no claim, and its diverged run is counted")
    for e, c in regime:
        if os.path.exists(os.path.join(fake, "results", e, "analysis.json")):
            check("### Early-layer regime: the training context and the gains' LR budget (`%s`)" % e in ftext,
                  "synthetic store: the page shows the %s table" % e)
            q3 = next((l for l in ftext.splitlines() if l.startswith("**3. ")), "")
            check(("In `%s`" % e) in q3 and "is in progress" not in q3.split("In `%s`" % e)[1],
                  "synthetic store: question 3 answers from the %s analysis" % e)
    # a resumed run records each segment (train.json /segments): a control run whose provenance says Haswell
    # but which trained its first half on SkylakeX's kernels makes its pairs cross kernels
    def routing_section(text):
        return text.split("| arm − OMN's |", 1)[1].split("\n\n", 1)[0] if "| arm − OMN's |" in text else ""
    ctl = os.path.join(fake, "results", "routing-control-haswell")
    run0 = json.load(open(os.path.join(ctl, "study.json")))["runs"][0]
    tj = os.path.join(ctl, run0["dir"], "train.json")
    rec = json.load(open(tj))
    seg = {k: rec["provenance"]["host"]["cpu"] if k == "cpu" else rec["provenance"]["git_revision"] if k == "git_revision"
           else rec["provenance"]["libraries"]["openblas"] for k in ("cpu", "git_revision", "openblas")}
    other = dict(seg, openblas=seg["openblas"].replace(" Haswell ", " SkylakeX "))
    rec["segments"] = [dict(other, start_step=0, end_step=rec["steps"] // 2, end="interrupted"),
                       dict(seg, start_step=rec["steps"] // 2, end_step=rec["steps"], end="finished")]
    before = routing_section(ftext).count("kernel")
    json.dump(rec, open(tj, "w"))
    stext, sspans, spage, _ = results_page.build(fake)
    check_numbers(fake, stext, sspans, spage, "synthetic store, a resumed control: ")
    check(" SkylakeX " in other["openblas"] and routing_section(stext).count("kernel") > before,
          "synthetic store: a control whose first segment ran SkylakeX's kernels flags its pairs as crossing kernels (%d -> %d)"
          % (before, routing_section(stext).count("kernel")))
    print("synthetic store (routing controls, qk-lr-tiny, regime): %d numbers, %d recorded texts re-derived from %d documents" % numbers2)

    # --- (d) the small ablation's pre-registered equivalence test, read: seeds 3 and 4 added to its analysis's
    # values (the grid's own three kept), once inside the margin and once across it; then a store where the
    # bracketed grid measured a difference, so the test is never run ---
    ab = os.path.join(fake, "results", "ablation-small")
    os.unlink(ab)
    link_all(os.path.join(src, "results", "ablation-small"), ab, skip=("analysis.json",))
    real_an = json.load(open(os.path.join(src, "results", "ablation-small", "analysis.json")))

    def with_test(extra, verdict_of, cut=None):
        an = json.loads(json.dumps(real_an))
        if cut:  # the runner accounted a training step cut off by a session's end
            an["compute"]["interrupted_training_seconds"] = cut
        eq = an["equivalence"]
        eq["seeds"], eq["missing_seeds"] = eq["seeds"] + eq["plan"]["seeds"], []
        for name, t in eq["tests"].items():
            t["values"] = t["values"] + [extra[name]] * len(eq["plan"]["seeds"]) if name in extra else t["values"]
            t["n"] = len(t["values"])
            m, lo, hi = student(t["values"], 90)
            t["verdict"] = verdict_of(name, lo, hi, eq["plan"]["margin"])
        json.dump(an, open(os.path.join(ab, "analysis.json"), "w"))
        return eq

    def by_margin(name, lo, hi, margin):
        return "equivalent within ±%g" % margin if -margin < lo and hi < margin else "equivalence not shown"

    def paragraph(text):
        return next((l for l in text.splitlines() if l.startswith("**Equivalence test of the small model")), "")

    eq = with_test({"removal_minus_training_without": 0.0, "off_minus_on": 0.033}, by_margin, cut=1800.0)
    etext, espans, epage, _ = results_page.build(fake)
    check_numbers(fake, etext, espans, epage, "synthetic store, equivalence read: ")
    para = paragraph(etext)
    check(("removal − training without is " in para and "(90 % interval): **equivalent within ±0.01**" in para and
           "training without (QK-off − QK-on) is " in para and "**equivalence not shown**" in para and
           "over seeds %s" % ", ".join(map(str, eq["seeds"])) in para),
          "synthetic store: the summary reads the equivalence test, each measure's verdict by the margin (%r)" % para[:400])
    check("The store holds one test, the small model's (the Summary's first question)" in etext and "- One equivalence test, the small model's" in etext
          and "which is not equivalence: no margin" not in etext and "No equivalence test has been read yet" not in etext,
          "synthetic store: with a test read, rule 3 and the limitations say which, and no line says there is none")
    train_h = sum(v for k, v in real_an["compute"]["runner_seconds_by_step"].items() if k.startswith("train ")) / 3600
    check("(the runner's training steps, every segment of a resumed run counted: %.2f h, 0.50 h of it cut off by a session's end)"
          % train_h in etext, "synthetic store: steps cut off by a session's end are counted in the experiment's compute")
    best = real_an["best_lr"]
    if best["qk_on"] == best["qk_off"]:  # the test's LR is one where neither size measures a difference
        check("(which is not by itself equivalence: the small model's equivalence test below is at this LR)" in etext,
              "synthetic store: no measurable difference at the test's LR points at the test, not 'no equivalence test'")
    # a seed whose secondary value is missing: that measure is not tested (the primary still is)
    eq = with_test({"removal_minus_training_without": 0.0, "off_minus_on": None}, by_margin)
    para = paragraph(results_page.build(fake)[0])
    check("training without (QK-off − QK-on) is not tested: seed %s, %s lacks its value" % tuple(eq["seeds"][-2:]) in para and
          "**equivalent within ±0.01**" in para, "synthetic store: a measure a seed lacks is not tested, and says which seed (%r)" % para[-300:])
    with_test({"removal_minus_training_without": None}, by_margin)
    ntext = results_page.build(fake)[0]
    check(not paragraph(ntext) and "No equivalence test has been read yet" in ntext,
          "synthetic store: a primary measure a seed lacks leaves the test unread")
    with_test({"removal_minus_training_without": 0.02}, by_margin)
    para = paragraph(results_page.build(fake)[0])
    check("removal − training without is " in para and para.count("**equivalence not shown**") == 2 and "within ±0.01**" not in para,
          "synthetic store: values across the margin read as equivalence not shown (%r)" % para[:300])
    with_test({"removal_minus_training_without": 0.0}, lambda *a: "equivalence not shown")
    try:
        results_page.build(fake)
        check(False, "synthetic store: an analysis whose verdict contradicts its own values is refused")
    except SystemExit as err:
        check("/equivalence/tests/removal_minus_training_without says" in str(err),
              "synthetic store: a contradicting verdict is refused naming the test (%s)" % err)
    # the grid complete and a measured difference at the best LRs: the test's condition fails, and the page says so
    an = json.loads(json.dumps(real_an))
    bvb = an["best_vs_best"]["removal_minus_training_without"]
    bvb["mean"], bvb["low"], bvb["high"] = 0.05, 0.03, 0.07
    json.dump(an, open(os.path.join(ab, "analysis.json"), "w"))
    cfg = os.path.join(fake, "configs", "experiments.json")
    conf2 = json.load(open(cfg))
    conf2["experiments"]["ablation-small"]["studies"] = [st for st in conf2["experiments"]["ablation-small"]["studies"]
                                                         if os.path.exists(os.path.join(src, "results", st, "study.json"))]
    json.dump(conf2, open(cfg, "w"))
    mtext, mspans, mpage, _ = results_page.build(fake)
    check_numbers(fake, mtext, mspans, mpage, "synthetic store, no test needed: ")
    check("- No equivalence test was read: the small ablation's pre-registered test is run only if its bracketed grid" in mtext
          and not paragraph(mtext),
          "synthetic store: a measured difference at the best LRs says why the equivalence test was not run")
    print("synthetic store (the equivalence test read, across the margin, contradicted, not needed): checked")

    # --- (e) an ablation grid widened by a study at LRs the other size never trained (the small model's
    # bracket): its unpublished cells stand in as copies of a published seed of the same arm and LR, the
    # analysis runs as the runner runs it when the last study merges, and the page must show those LRs
    # with the other size's cells empty and every number re-derived ---
    conf_now = json.load(open(os.path.join(src, "configs", "experiments.json")))["experiments"]
    wide = next((e for e, c in conf_now.items() if c["analysis"] == "ablation" and len(c["studies"]) > 1 and "compare_with" in c and
                 not os.path.exists(os.path.join(src, "results", c["studies"][-1], "study.json")) and
                 glob.glob(os.path.join(src, "results", c["studies"][-1], "cell-*.json"))), None)
    if wide:
        json.dump(dict(json.load(open(cfg)), experiments=dict(json.load(open(cfg))["experiments"],
                                                              **{wide: conf_now[wide]})), open(cfg, "w"))
        last = conf_now[wide]["studies"][-1]
        real = os.path.join(src, "results", last)
        d = os.path.join(fake, "results", last)
        os.unlink(d)  # a link to the real study: never written through
        link_all(real, d, skip=("runs", "after"))
        for sub in ("runs", "after"):
            link_all(os.path.join(real, sub), os.path.join(d, sub))
        cells = sorted(glob.glob(os.path.join(real, "cell-*.json")))
        doc = json.load(open(cells[0]))
        doc["runs"] = [r for c in cells for r in json.load(open(c))["runs"]]
        man = json.load(open(os.path.join(src, "configs", "studies", last + ".json")))
        have = {(r["qk_norm"], r["lr"], r["seed"]): r for r in doc["runs"]}
        for qk in man["grid"]["qk_norm"]:
            for lr in sorted({r["lr"] for r in doc["runs"]}):
                base = next((r for (q, l, sd), r in sorted(have.items(), key=lambda kv: kv[0][2]) if q == qk and l == lr), None)
                for sd in man["grid"]["seeds"]:
                    if base is None or (qk, lr, sd) in have:
                        continue
                    r = dict(base, seed=sd, id=base["id"].replace("seed-%d" % base["seed"], "seed-%d" % sd))
                    r["dir"] = "runs/" + r["id"]
                    os.symlink(os.path.join(real, base["dir"]), os.path.join(d, r["dir"]))
                    for f in os.listdir(os.path.join(real, "after")):
                        if f.startswith(base["id"] + "."):
                            os.symlink(os.path.join(real, "after", f), os.path.join(d, "after", f.replace(base["id"], r["id"])))
                    doc["runs"].append(r)
        json.dump(doc, open(os.path.join(d, "study.json"), "w"))
        ed = os.path.join(fake, "results", wide)  # the analysis replaces its analysis.json: a folder of the fake's own
        if os.path.islink(ed):
            os.unlink(ed)
            link_all(os.path.join(src, "results", wide), ed, skip=("analysis.json",))
        other = conf_now[wide]["compare_with"]
        pr = subprocess.run([sys.executable, analyse, "ablation", wide] + ["results/%s/study.json" % st for st in conf_now[wide]["studies"]] +
                            ["--compare-with", other] + ["results/%s/study.json" % st for st in conf_now[other]["studies"]],
                            cwd=fake, env=env, capture_output=True, text=True)
        check(pr.returncode == 0, "synthetic store: the widened grid's analysis exits 0 (%d: %s)" % (pr.returncode, pr.stderr.strip()[-300:]))
        if pr.returncode == 0:
            wtext, wspans, wpage, _ = results_page.build(fake)
            check_numbers(fake, wtext, wspans, wpage, "synthetic store, the widened grid: ")
            new_lrs = sorted({lr_ for lr_ in (r["lr"] for r in doc["runs"])})
            rows = [l for l in wtext.splitlines() if l.startswith("| %s |" % format(new_lrs[0], ".3g"))]
            check(len(rows) == 1 and rows[0].count("| — ") == 3,
                  "synthetic store: an LR only the widened size trained has a row, the other size's cells empty (%s)" % rows)
        print("synthetic store (%s's grid completed from its published cells): checked" % wide)
finally:
    shutil.rmtree(fake, ignore_errors=True)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("docs/results.md: regenerates byte-identical, every number from the store; the synthetic store's sections too")
