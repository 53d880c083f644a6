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
      - the interval level, `95 %`: a property of the analyses' Student-t quantiles, not of the store;
      - digests and build ids (7 or more hex digits with a letter) and dates (YYYY-MM-DD).
    So a number typed by hand, or one the store does not give at its printed precision, fails the test.
"""
import glob
import json
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

# --- (b) every recorded number, re-derived here ---
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
UNITS = (3600, 1e6)  # the only constants an expression may hold: seconds → hours, a count → millions
docs = {}


def load(rel):
    if rel not in docs:
        with open(os.path.join(src, rel)) as f:
            docs[rel] = json.load(f) if rel.endswith(".json") else f.read()
    return docs[rel]


def student(values):
    v = [x for x in values if x is not None]
    n = len(v)
    m = sum(v) / n
    if n < 2:
        return m, None, None
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (n - 1))
    h = T975[n - 1] * sd / math.sqrt(n)
    return m, m - h, m + h


def derive(e):
    if "src" in e:
        rel, ptr = e["src"]
        v = load(rel)
        for k in ptr:
            v = v[k]
        return v
    if "const" in e:
        raise ValueError("a constant outside a unit conversion: %r" % e)
    op = e["op"]
    if op in ("div", "mul"):
        if "const" in e["b"] and e["b"]["const"] not in UNITS:
            raise ValueError("a constant that is no unit: %r" % e["b"])
        b = e["b"]["const"] if "const" in e["b"] else derive(e["b"])
        return derive(e["a"]) / b if op == "div" else derive(e["a"]) * b
    if op == "sub":
        return derive(e["a"]) - derive(e["b"])
    if op == "mean":
        v = [derive(x) for x in e["of"]]
        return sum(v) / len(v)
    if op == "sum":
        return sum(derive(x) for x in e["of"])
    if op == "prod":
        out = 1
        for x in e["of"]:
            out *= derive(x)
        return out
    if op == "len":
        return len(derive(e["of"]))
    if op == "t":
        a = derive(e["a"])
        if "b" in e:
            a = [x - y for x, y in zip(a, derive(e["b"]))]
        return dict(zip(("mean", "low", "high"), student(a)))[e["stat"]]
    if op == "count":
        return len(glob.glob(os.path.join(src, e["glob"])))
    if op == "word":
        s = str(derive(e["of"])).strip()
        return s.split()[e["i"]] if "i" in e else s[:e["n"]]
    if op == "key":
        if e["key"] not in derive(e["of"]):
            raise KeyError(e["key"])
        return e["key"]
    raise ValueError("unknown operation %r" % op)


for start, end, rec in spans:
    try:
        v = derive(rec["expr"])
        want = v if rec["spec"] == "s" else format(v, rec["spec"]).replace("-", "−")
    except (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError, OSError) as err:
        check(False, "page offset %d: %r does not derive from the store (%s: %s)" % (start, rec["text"], type(err).__name__, err))
        continue
    check(want == rec["text"] == text[start:end], "page offset %d: printed %r, the store gives %r" % (start, text[start:end], want))

# --- every number on the page inside a recorded text, the exclusions by rule aside ---
strings = set()


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
    collect(load(rel))


def known(word):
    w = word.strip(".,;:()")
    return w in strings or os.path.exists(os.path.join(src, w)) or os.path.exists(os.path.join(src, "docs", w)) or \
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
        check(not bad, "code span %r names %s: neither a path nor a string of the store" % (m.group(0), bad))
    cut(m.start(), m.end())
for m in re.finditer(r"\]\(([^)\s]+)\)", text):
    check(os.path.exists(os.path.join(src, "docs", m.group(1))), "link target %s does not exist" % m.group(1))
    cut(m.start(), m.end())
rules = [r"(?m)^(\*\*)?\d+\. ",            # list and section numbers
         r"[A-Za-z]+-\d+\b",               # names: OMN-1
         r"\b95 %",                        # the interval level
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
    check(all(covered[m.start():m.end()]), "docs/results.md line %d: %r is not a number the store gives (no record covers it)" % (line, m.group(0)))

print("%d numbers on the page, %d recorded texts re-derived from %d documents of the store" % (numbers, len(spans), len(docs)))
if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("docs/results.md: regenerates byte-identical, every number from the store")
