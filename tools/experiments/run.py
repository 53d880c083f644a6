#!/usr/bin/python3
"""Runs issue 29's experiments (configs/experiments.json), called by tools/run-experiments.sh:

  run.py [EXPERIMENT ...]        every experiment in the file's order, or the named ones
  run.py --plan [EXPERIMENT ...] what that would do now (cells to train, builds, kernels); runs nothing

A session's files do not outlive it here: only what git tracks does. So an experiment is run cell by
cell (one training run of a study's grid: `omn-audit study --shard K/N` with N the number of cells),
and each cell is finished whole in one go, then *published* into the tracked store (results/, which
mirrors runs/ without checkpoints, panels and journals):

  1. train the cell (runs/STUDY/cell-K.json, its run directory; journaled: a runner killed within the
     session continues the run from its last checkpoint with --resume);
  2. after training (after_training.py): eval of its final.pt on the held-out panel, the post-training
     sweep with --kl if QK-norm is on, track of its checkpoints where asked;
  3. publish: the run's train.json and config, the eval/sweep/track documents, the panel's record,
     then the cell's study document last: results/STUDY/cell-K.json present = the cell is done.

A cell whose document is in the store is never rerun; any other cell continues from its last
checkpoint where runs/ still holds its journal and run (within a session, and in a new one where runs/
outlived the last), else starts from scratch. A step cut off by a session's end is accounted by the
next lane (its marker in runs/segments/), so a resumed cell's compute counts every segment. Two runners (lanes) may
work on one experiment: a cell is claimed with a lock, and a lane that finds a study's remaining cells
claimed goes on to the experiment's next study. When every cell of a study is in the store the
cells are merged (`omn-audit merge`) into results/STUDY/study.json; when every study of an experiment
is merged, its analysis (analyse.py) writes results/EXPERIMENT/analysis.json, docs/experiments/ and
docs/figures/experiments/. The compute of every step is appended to results/compute.jsonl.

A study runs on one build from its first cell to its merge (merge requires one git revision):
results/STUDY/BUILD names it, a commit built into runs/builds/COMMIT by
`tools/run-experiments.sh --freeze`; a new session rebuilds it from the commit when it is missing.
A new study takes runs/builds/CURRENT. An experiment's /openblas_coretype pins a study's OpenBLAS kernel
(OPENBLAS_CORETYPE for its cells' train and after-training steps; a cell that records another kernel is
not published); other studies train on the kernels omn-audit chooses for the CPU. Environment: OMN_EXPERIMENT_THREADS (1 thread per run);
OMN_EXPERIMENTS_DEADLINE (a UTC time, 2026-12-02T20:00Z: the session's end; a lane starts no cell
that the published cells of its kind say it cannot finish by then, since an unfinished cell is lost
where runs/ does not outlive the session, and takes a shorter one that fits instead: a QK-off cell has
no sweep); for tests, OMN_EXPERIMENTS_CONFIG, OMN_EXPERIMENTS_RUNS, OMN_EXPERIMENTS_STORE,
OMN_EXPERIMENTS_OUT, OMN_EXPERIMENTS_HEARTBEAT (seconds between a running step's heartbeats, 60).

The parts: run_settings.py (the file and the environment, checked once), run_steps.py (a step, its
accounting and its marker), run_cells.py (a study's build, its cells trained, published and merged).
"""
import fcntl
import json
import os
import subprocess
import sys
import time

from run_settings import conf, deadline, fail, field, note, runs_root, shown, store_root
from run_steps import cut_segments, locked, step
from run_cells import Study, build_dir, cell_seconds, current, kernel_pin, merge, recorded_kernel, results_page, run_cell


def run_experiment(n, e):
    studies = [Study(name) for name in e["studies"]]
    too_long = []  # cells this lane left because they cannot finish before the deadline
    for s in studies:
        os.makedirs(s.dir, exist_ok=True)
        commit = None
        # seed-major order (the seed is the grid's innermost axis): every arm and LR of the first seed,
        # then of the next, so a partial study is balanced
        for k in sorted(s.cells, key=lambda i: (i % s.n_seeds, i)):
            if s.published(k):
                continue
            need = cell_seconds(n, s, k, studies)
            if deadline and need and time.time() + need > deadline:
                # an unfinished cell is lost where runs/ does not outlive the session: take a shorter one if any fits
                note("%s: %s: cell %d takes ~%.0f min, the deadline is %.0f min away: left for the next session" % (
                    n, s.name, k, need / 60, (deadline - time.time()) / 60))
                too_long.append(k)
                continue
            lock = locked(os.path.join(s.dir, "cell-%03d.lock" % k))
            if lock is None:
                continue  # another lane has it
            try:
                if s.published(k):
                    continue
                commit = commit or s.pin()
                run_cell(n, e, s, k, commit)
            finally:
                lock.close()
        done = sum(s.published(k) for k in s.cells)
        if done < len(s.cells):
            # the lane goes on to the next study's cells (a study with its last cells in another lane
            # must not idle this core); the merge and the analysis wait for every cell
            note("%s: %s: %d of %d cells published; the rest is in another lane or failed" % (n, s.name, done, len(s.cells)))
            continue
        merge(n, s, commit or s.pin())
    # the store decides, not what this lane saw on its way: the other lane may have published a study
    # this lane passed while it worked on the next one, and it will not come back to it
    if not all(s.published(k) for s in studies for k in s.cells):
        if too_long:  # (another lane may still publish the cells this one left: it then merges)
            note("%s: no unpublished cell can finish before the deadline: this lane stops on this experiment" % n)
        return
    for s in studies:
        merge(n, s, s.pin())  # a study another lane completed (a merged study is left alone)
    with open(os.path.join(runs_root, n + ".analysis.lock"), "a") as lk:  # one lane writes the analysis at a time
        fcntl.flock(lk, fcntl.LOCK_EX)
        step(n, "analysis", "-", ["/usr/bin/python3", "tools/experiments/analyse.py", *analysis_arguments(n, e, studies)])
        results_page(n)


def analysis_arguments(n, e, studies):
    """analyse.py's arguments: the kind, the experiment, its study documents; after --equivalence those
    of its equivalence test's studies, after --compare-with the experiment it is set beside and its own."""
    doc = lambda s: shown(os.path.join(s.store, "study.json"))  # noqa: E731
    extra = e.get("equivalence", {}).get("studies", [])
    args = [e["analysis"], n, *[doc(s) for s in studies if s.name not in extra]]
    if any(s.name in extra for s in studies):
        args += ["--equivalence", *[doc(s) for s in studies if s.name in extra]]
    if "compare_with" in e:
        args += ["--compare-with", e["compare_with"], *[doc(Study(x)) for x in conf["experiments"][e["compare_with"]]["studies"]]]
    return args


def plan(names):
    """--plan: what `run-experiments.sh NAME...` would do now, from the configuration and the store; runs
    and writes nothing (no build, no BUILD pin, no lock). Exit 2 where a study's manifest or pin is wrong."""
    cur = current(required=False)
    for n in names:
        e = conf["experiments"][n]
        studies = [Study(name) for name in e["studies"]]
        conds = conf["sweeps"][e["sweep"]]
        print("%s: %d studies; after training: eval on the panel %s, sweep %r (%s) on QK-on cells, track %s; analysis %s" % (
            n, len(studies), json.dumps(dict(conf.get("panel", {}), **e.get("panel", {}))), e["sweep"],
            "%d conditions" % len(conds) if conds else "none: no sweep", "yes" if e["track"] else "no", e["analysis"]))
        merged = 0
        for s in studies:
            pub = [k for k in s.cells if s.published(k)]
            pinfile = os.path.join(s.store, "BUILD")
            build = (open(pinfile).read().strip() + " (results/%s/BUILD)" % os.path.relpath(s.store, store_root)) if os.path.exists(pinfile) \
                else "%s (runs/builds/CURRENT, pinned when its first cell starts)" % cur if cur else "none: freeze one first (--freeze)"
            core = kernel_pin(e, s).get("OPENBLAS_CORETYPE")
            todo = [k for k in sorted(s.cells, key=lambda i: (i % s.n_seeds, i)) if k not in pub]
            done = os.path.exists(os.path.join(s.store, "study.json"))
            merged += done
            print("  %s: %d cells, %d published%s; build %s; OpenBLAS kernel %s" % (
                s.name, len(s.cells), len(pub), ", merged" if done else "", build,
                "pinned to %s (OPENBLAS_CORETYPE for its train and after-training steps)" % core if core else "omn-audit's choice for the CPU"))
            for k in pub:  # what the published cells record: the build and kernel their pairs are judged by
                cell = json.load(open(os.path.join(s.store, "cell-%03d.json" % k)))
                rk = recorded_kernel(cell)
                bad = core and (rk or "").lower() != core.lower()
                print("    cell %d published: build %s, kernel %s%s" % (k, str(field(cell, "/provenance/git_revision"))[:7], rk,
                                                                      "  <- NOT the pinned kernel" if bad else ""))
            if todo:
                print("    to train, in this order: cells %s" % ", ".join(map(str, todo)))
        print("  analysis: %s" % ("written when the last study is merged (results/%s/analysis.json%s)" % (
            n, ", replacing the one in the store" if os.path.exists(os.path.join(store_root, n, "analysis.json")) else "")
            if merged < len(studies) else "every study merged: a run rewrites results/%s/analysis.json" % n))


def main():
    if "--plan" in sys.argv[1:]:
        names = [a for a in sys.argv[1:] if a != "--plan"] or list(conf["experiments"])
        for n in names:
            if n not in conf["experiments"]:
                fail("run-experiments: %s: not an experiment of configs/experiments.json (%s)" % (n, ", ".join(conf["experiments"])))
        plan(names)
        return
    names = sys.argv[1:] or list(conf["experiments"])
    for n in names:
        if n not in conf["experiments"]:
            fail("run-experiments: %s: not an experiment of configs/experiments.json (%s)"
                 % (n, ", ".join(conf["experiments"])))
    if "OMN_EXPERIMENTS_CONFIG" not in os.environ and not os.path.isfile("data/sotu/corpus.json"):  # the corpus every config names
        with open(os.path.join(runs_root, "corpus.lock"), "a") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)
            if not os.path.isfile("data/sotu/corpus.json"):
                # the build of the first study to run (a new session has its pin, not always CURRENT)
                omn = os.path.join(build_dir(Study(conf["experiments"][names[0]]["studies"][0]).pin()), "omn-audit")
                subprocess.run(["bash", "tools/fetch-corpus.sh"], check=True)
                subprocess.run([omn, "corpus", "--config", "configs/corpus/sotu.json", "--out", "data/sotu"], check=True)
    cut_segments()
    for n in names:
        run_experiment(n, conf["experiments"][n])
    note("experiments %s: this lane is done" % ", ".join(names))


if __name__ == "__main__":
    main()
