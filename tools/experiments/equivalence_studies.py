#!/usr/bin/python3
"""Writes an ablation's pre-registered equivalence studies once its grid has chosen the best LRs:

  equivalence_studies.py EXPERIMENT            what the rule decides and would write; writes nothing
  equivalence_studies.py EXPERIMENT --write    writes the study manifests and adds them to the
                                               experiment's /studies, for tools/run-experiments.sh

The rule is the one stated with the test (configs/experiments.json /experiments/EXPERIMENT/equivalence),
applied by this script rather than by hand: only when the grid leaves the question open -- the
interval of removal minus training without at the arms' best LRs (the analysis's best_vs_best)
contains 0 -- and then one study per arm, that arm at its best LR of the whole grid (the analysis's
best_lr), the test's seeds, every other setting the grid's last study's (its base config, steps,
outputs beside it). It needs every study of the grid merged and the analysis to have read them all.
A grid that decided the question (an interval clear of 0) gets no studies: it says so and exits 0.
Exit 2 naming the file and what is missing; an existing manifest is never overwritten.
Environment (for tests): OMN_EXPERIMENTS_CONFIG, OMN_EXPERIMENTS_STORE.
"""
import json
import math
import os
import sys

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def fail(msg):
    print("equivalence-studies: " + msg, file=sys.stderr)
    sys.exit(2)


def load(path, what):
    if not os.path.isfile(path):  # a FIFO or a folder would hang or fail in open()
        fail("%s: %s: %s" % (path, what, "not a regular file" if os.path.exists(path) else "no such file"))
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        fail("%s: %s is not readable JSON: %s" % (path, what, e))


def decision(analysis, path):
    """(open, the headline interval): whether the grid leaves removal − training without undecided."""
    try:
        h = analysis["best_vs_best"]["removal_minus_training_without"]
        best = analysis["best_lr"]["qk_on"], analysis["best_lr"]["qk_off"]
        number = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)  # noqa: E731
        if not all(number(x) and x > 0 for x in best):
            fail("%s: /best_lr: expected a learning rate for each arm, got %r" % (path, best))
        if not number(h["mean"]) or not all(h[k] is None or number(h[k]) for k in ("low", "high")) or (h["low"] is None) != (h["high"] is None):
            fail("%s: /best_vs_best/removal_minus_training_without: expected a mean and an interval (low, high; null with one seed)" % path)
    except (KeyError, TypeError):
        fail("%s: no /best_vs_best/removal_minus_training_without or /best_lr: not an ablation's analysis" % path)
    is_open = h["low"] is None or h["low"] <= 0 <= h["high"]
    return is_open, h, {True: best[0], False: best[1]}


def manifests(name, e, plan, best, template, template_path):
    """study name -> manifest: one per arm (QK-norm on first, as the plan names them)."""
    folders = {os.path.dirname(v) for v in template.get("output", {}).values()} if isinstance(template.get("output"), dict) else set()
    if len(folders) != 1 or not isinstance(template.get("grid"), dict):
        fail("%s: /output: expected the study's outputs in one folder and a /grid, to write its equivalence studies beside it" % template_path)
    if len(plan["studies"]) != 2:
        fail("/experiments/%s/equivalence/studies: expected two studies (QK-norm on, then off), got %d" % (name, len(plan["studies"])))
    out = {}
    for study, qk in zip(plan["studies"], (True, False)):
        m = {k: v for k, v in template.items() if k == "schema"}  # the template's order, schema first
        m["description"] = (
            "The pre-registered equivalence test's seeds (configs/experiments.json /experiments/%s/equivalence, stated %s): "
            "QK-norm %s at its best LR of the grid (%g, the analysis's best_lr over %s), seeds %s, as %s in every other respect. "
            "Written by tools/experiments/equivalence_studies.py, which applies the stated rule."
            % (name, plan["stated"], "on" if qk else "off", best[qk], ", ".join(e["studies"]),
               ", ".join(map(str, plan["seeds"])), os.path.basename(template_path)))
        m.update({k: v for k, v in template.items() if k not in ("schema", "description", "grid", "output")})
        m["grid"] = dict(template["grid"], qk_norm=[qk], lr=[best[qk]], seeds=plan["seeds"])
        # the template's outputs (its document, CSV and runs) lie in one folder: the new study's beside it
        m["output"] = {k: os.path.join(os.path.dirname(os.path.dirname(v)), study, os.path.basename(v)) for k, v in template["output"].items()}
        out[study] = m
    return out


def add_studies(conf_path, name, new):
    """configs/experiments.json with `new` appended to /experiments/NAME/studies, its layout kept (a
    targeted edit, checked by reading the file back: nothing else may change)."""
    text = open(conf_path).read()
    before = json.loads(text)
    at = text.find('"%s": {' % name)
    key = text.find('"studies": [', at) if at >= 0 else -1
    end = text.find("]", key) if key >= 0 else -1
    if end < 0:
        fail("%s: /experiments/%s/studies: not found as a list to add to" % (conf_path, name))
    edited = text[:end] + "".join(', "%s"' % s for s in new) + text[end:]
    after = json.loads(edited)
    want = json.loads(json.dumps(before))
    want["experiments"][name]["studies"] += new
    if after != want:
        fail("%s: adding %s to /experiments/%s/studies would change something else: add them by hand" % (conf_path, ", ".join(new), name))
    with open(conf_path, "w") as f:
        f.write(edited)


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    if len(args) != 1:
        fail("usage: equivalence_studies.py EXPERIMENT [--write]")
    name = args[0]
    conf_path = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_CONFIG", os.path.join(root, "configs", "experiments.json")))
    store = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_STORE", os.path.join(root, "results")))
    conf = load(conf_path, "the experiments file")
    e = conf.get("experiments", {}).get(name)
    if not isinstance(e, dict):
        fail("%s: /experiments/%s: no such experiment" % (conf_path, name))
    plan = e.get("equivalence")
    if not isinstance(plan, dict):
        fail("%s: /experiments/%s/equivalence: the experiment states no equivalence test" % (conf_path, name))
    mdir = os.path.join(os.path.dirname(conf_path), conf.get("manifests", "."))
    runs = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_RUNS", os.path.join(root, "runs")))
    grid = [s for s in e["studies"] if s not in plan["studies"]]
    docs, rels = [], []  # each study's merged document in the store (which mirrors runs/, as run.py's Study.store)
    for s in grid:
        mpath = os.path.join(mdir, s + ".json")
        out = load(mpath, "the study manifest").get("output", {}).get("json")
        if not isinstance(out, str):
            fail("%s: /output/json: expected a path (the study document)" % mpath)
        rel = os.path.relpath(os.path.normpath(os.path.join(mdir, out)), runs)
        if rel.startswith(".."):
            fail("%s: /output/json: %s is not under %s, which the store mirrors" % (mpath, out, runs))
        docs.append(os.path.join(store, rel))
        rels.append(rel)
        if not os.path.isfile(docs[-1]):
            fail("%s: not merged yet: the grid's best LRs are not chosen until every study of it is" % docs[-1])
    apath = os.path.join(store, name, "analysis.json")
    if not os.path.isfile(apath):
        fail("%s: no analysis of the grid yet (tools/run-experiments.sh %s writes it when every study is merged)" % (apath, name))
    analysis = load(apath, "the experiment's analysis")
    listed = analysis.get("studies") if isinstance(analysis, dict) else None
    if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
        fail("%s: /studies: expected the list of study documents the analysis read" % apath)
    # which studies it read, by their place in the store (STUDY/study.json): the store the analysis wrote
    # into may since have been copied (OMN_EXPERIMENTS_STORE), and its paths name the store it read
    # (the longest place that fits: a study folder nested in another's name is not taken for it)
    read = sorted(max((r for r in rels if (os.sep + os.path.normpath(os.path.join(root, p))).endswith(os.sep + r)), key=len, default=p)
                  for p in listed)
    if read != sorted(rels):
        fail("%s: /studies: the analysis read %s, not the grid's studies (%s): run the analysis again (tools/run-experiments.sh %s)"
             % (apath, ", ".join(analysis.get("studies", [])) or "none", ", ".join(grid), name))
    is_open, h, best = decision(analysis, apath)
    lo = "n/a" if h["low"] is None else "%+.4f" % h["low"]
    hi = "n/a" if h["high"] is None else "%+.4f" % h["high"]
    print("%s: removal minus training without at the best LRs (QK-on %g, QK-off %g): %+.4f [%s, %s] nats/token" % (
        name, best[True], best[False], h["mean"], lo, hi))
    if not is_open:
        print("the grid decided it (the interval is clear of 0): no equivalence studies are written")
        return
    todo = manifests(name, e, plan, best, load(os.path.join(mdir, grid[-1] + ".json"), "the study manifest"),
                     os.path.join(mdir, grid[-1] + ".json"))
    for study, m in todo.items():
        path = os.path.join(mdir, study + ".json")
        print("%s%s:\n%s" % ("" if write else "would write ", path, json.dumps(m, indent=2)))
        if write and os.path.exists(path):
            fail("%s exists: refusing to overwrite it (remove it to write it again)" % path)
    if not write:
        print("(nothing written: --write writes them and adds them to /experiments/%s/studies)" % name)
        return
    for study, m in todo.items():
        with open(os.path.join(mdir, study + ".json"), "w") as f:
            f.write(json.dumps(m, indent=2) + "\n")
    add_studies(conf_path, name, [s for s in todo if s not in e["studies"]])
    print("written; added to /experiments/%s/studies: tools/run-experiments.sh %s trains them" % (name, name))


main()
