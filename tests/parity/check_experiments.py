#!/usr/bin/python3
"""Issue 29's experiment pipeline (tools/run-experiments.sh → tools/experiments/) on a toy study:

  check_experiments.py OMN_AUDIT WORKDIR

A two-arm, two-LR, two-seed ablation of a 2-layer model on a generated corpus runs through run.py
(cell by cell: train, eval / post-training sweep / track, publish into the store; then the merge and
the analysis), and the analysis's main numbers
are recomputed here from the raw documents with independent code: the panel is the held-out set
without the rows the runs evaluated on, off − on per seed from the eval documents, the cost of gains
→ 1.0 from the sweep's per-sequence sums, the Student-t intervals, the fast-learning criterion (the
loss at 3/4 of training interpolated) from each train.json; the routing analysis's paired difference
and the depth analysis's early-layer mean likewise. Then: a rerun trains nothing; a new session (the
scratch folder gone) retrains only the cell missing from the store, to the same bits; a runner killed
mid-way is continued on the build the study started on after a new freeze; two lanes share one study's
cells, each trained once; a cell that cannot merge with the published ones is refused; an unknown
experiment is refused. Routing within one build and kernel: a study pinned to OpenBLAS's Haswell kernels trains
on them, each arm pairs with the control of its build and kernel, and --plan runs nothing; an experiment
without a sweep (sweep "none") and its qk-lr analysis, recomputed.
"""
import fcntl
import hashlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.dom.minidom

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from harness import Harness, write_corpus_config  # noqa: E402

omn, work = sys.argv[1], sys.argv[2]
h = Harness(omn, work)
check, run = h.check, h.run
root = os.path.abspath(os.path.join(here, "..", ".."))
runner = os.path.join(root, "tools", "experiments", "run.py")

cconf = write_corpus_config(work)
run("corpus", "--config", cconf, "--out", os.path.join(work, "data"))
corpus = json.load(open(os.path.join(work, "data", "corpus.json")))
T, EVAL_ROWS, PANEL_ROWS = 16, 3, 6
conf = {"schema": "omn-audit/train-config@1", "name": "toy", "corpus": "data",
        "model": {"n_layers": 2, "d_model": 32, "n_heads": 2, "n_kv_heads": 1, "head_dim": 16, "ffn_hidden": 64,
                  "qk_norm": True, "rope_theta": 10000.0},
        "optimizer": {"kind": "muon+adamw", "lr": 0.003, "muon_lr": 0.02},
        "schedule": {"warmup_steps": 2, "decay": "cosine"}, "steps": 16, "batch_size": 2, "seq_len": T, "seed": 0,
        "log_every": 4, "eval": {"every": 5, "rows": EVAL_ROWS}, "checkpoint_every": 8}
json.dump(conf, open(os.path.join(work, "toy.json"), "w"))
manifest = {"schema": "omn-audit/study-manifest@1", "base": "toy.json",
            "grid": {"qk_norm": [True, False], "lr": [0.003, 0.03], "seeds": [0, 1]},
            "output": {"json": "runs/toy/study.json", "runs": "runs/toy/runs"}}
json.dump(manifest, open(os.path.join(work, "toy-study.json"), "w"))
experiments = {"panel": {"rows": PANEL_ROWS, "batch": 2, "bootstrap_resamples": 200, "groups": 2},
               "experiments": {"toy": {"studies": ["toy-study"], "sweep": "full", "track": True, "analysis": "ablation"}},
               "sweeps": json.load(open(os.path.join(root, "configs", "experiments.json")))["sweeps"]}
econf = os.path.join(work, "experiments.json")
json.dump(experiments, open(econf, "w"))
# a frozen build: the binary under test, as tools/run-experiments.sh --freeze lays it out
builds = os.path.join(work, "runs", "builds", "test")
os.makedirs(builds)
for f in os.listdir(os.path.dirname(omn)):
    if f == "omn-audit" or (f.startswith("omn-audit-") and f.endswith(".so")):
        os.symlink(os.path.join(os.path.dirname(os.path.abspath(omn)), f), os.path.join(builds, f))
open(os.path.join(work, "runs", "builds", "CURRENT"), "w").write("test\n")
store = os.path.join(work, "results")
env = dict(os.environ, OMN_EXPERIMENTS_CONFIG=econf, OMN_EXPERIMENTS_RUNS=os.path.join(work, "runs"),
           OMN_EXPERIMENTS_STORE=store, OMN_EXPERIMENTS_OUT=work, OMP_NUM_THREADS="1")


def compute():
    return [json.loads(x) for x in open(os.path.join(store, "compute.jsonl"))]


def runner_call(*names):
    return subprocess.run(["/usr/bin/python3", runner, *names], env=env, capture_output=True, text=True)


# --- bad input to the runner: exit 2 and one line on stderr naming the file, never a traceback ----
# (in a scratch runs/ and store of their own: the toy run's accounting below stays whole)
bad_runs, bad_store = os.path.join(work, "bad-runs"), os.path.join(work, "bad-results")
os.makedirs(os.path.join(bad_runs, "builds"))
os.symlink(builds, os.path.join(bad_runs, "builds", "test"))
open(os.path.join(bad_runs, "builds", "CURRENT"), "w").write("test\n")


def bad_runner(conf_doc, study_text, want, *names):
    bc, bs = os.path.join(work, "bad-experiments.json"), os.path.join(work, "bad-study.json")
    json.dump(conf_doc, open(bc, "w"))
    open(bs, "w").write(study_text)
    p = subprocess.run(["/usr/bin/python3", runner, *names], capture_output=True, text=True,
                       env=dict(env, OMN_EXPERIMENTS_CONFIG=bc, OMN_EXPERIMENTS_RUNS=bad_runs, OMN_EXPERIMENTS_STORE=bad_store))
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and want in lines[0] and "Traceback" not in p.stderr,
          "run.py: %s -> exit 2, one line naming it (exit %d: %s)" % (want, p.returncode, p.stderr.strip()[-200:]))


bad_exp = dict(experiments, experiments={"bad": {"studies": ["bad-study"], "sweep": "full", "track": False, "analysis": "ablation"}})
bad_runner(dict(experiments, experiments=["toy"]), "", "bad-experiments.json: /experiments: expected an object")
bad_runner(bad_exp, "not JSON", "bad-study.json: the study manifest is not readable JSON", "bad")
bad_runner(bad_exp, json.dumps(dict(manifest, output={})), "bad-study.json: /output/json: expected a path", "bad")
bad_runner(bad_exp, json.dumps(dict(manifest, base="missing.json", output={"json": "bad-runs/bad/study.json"})),
           "bad: train bad-study cell 0/8: exit 2 (its output: %s)" % os.path.join(bad_runs, "experiments.log"), "bad")
good_eq = {"stated": "t", "measure": "removal_minus_training_without", "margin": 0.01, "alpha": 0.05, "seeds": [3], "studies": ["s"]}
for bad_eq in (dict(good_eq, margin=float("nan")), dict(good_eq, margin=-0.01), dict(good_eq, seeds=[-1]), dict(good_eq, alpha=0.1),
               dict(good_eq, measure="x"), "0.01"):
    bad_runner(dict(experiments, experiments={"bad": dict(bad_exp["experiments"]["bad"], equivalence=bad_eq)}),
               json.dumps(manifest), "/experiments/bad/equivalence: expected an object with stated", "bad")
bad_runner(dict(experiments, experiments={"bad": dict(bad_exp["experiments"]["bad"], compare_with="bad")}),
           json.dumps(manifest), "/experiments/bad/compare_with: expected another experiment of the same analysis", "bad")
os.makedirs(os.path.join(bad_store, "bad"), exist_ok=True)
open(os.path.join(bad_store, "bad", "BUILD"), "w").write("x\x1b[2J\x07\n")
bad_runner(bad_exp, json.dumps(dict(manifest, output={"json": "bad-runs/bad/study.json"})), "builds/x\\x1b[2J\\x07 has no omn-audit", "bad")

p = runner_call("toy")
if p.returncode != 0:
    print(p.stdout, p.stderr, open(os.path.join(work, "runs", "experiments.log")).read()[-3000:])
check(p.returncode == 0, "run.py toy: cells, merge and analysis exit 0")
scratch = os.path.join(work, "runs", "toy")
sdir = os.path.join(store, "toy")  # the store mirrors runs/ without checkpoints
study = json.load(open(os.path.join(sdir, "study.json")))
after = os.path.join(sdir, "after")
check(open(os.path.join(sdir, "BUILD")).read().strip() == "test", "the study records the build it started on (results/STUDY/BUILD)")
acct = compute()
order = (0, 2, 4, 6, 1, 3, 5, 7)  # seed-major: every cell of seed 0, then of seed 1
want = [x for k in order for x in ("train toy-study cell %d/8" % k, "after-training toy-study cell %d/8" % k)]
check([a["step"] for a in acct] == want + ["merge toy-study", "analysis"] and all(a["rc"] == 0 for a in acct),
      "results/compute.jsonl accounts each step: every cell trained then evaluated, seed 0's first, then the merge and the analysis")
stored = [os.path.join(dp, f) for dp, _, fs in os.walk(store) for f in fs]
check(stored and not [f for f in stored if f.endswith((".pt", ".bin", ".journal", ".tmp", ".lock"))],
      "the store holds no checkpoint, panel, journal, lock or temporary file (%d files)" % len(stored))

# --- the panel: the held-out set without the rows the runs evaluated during training --------------
held = open(os.path.join(work, "data", "heldout.bin"), "rb").read()
panel = open(os.path.join(scratch, "after", "panel.bin"), "rb").read()
check(panel == held[EVAL_ROWS * T * 2:], "panel.bin is heldout.bin without its first %d rows of %d tokens" % (EVAL_ROWS, T))
pj = json.load(open(os.path.join(after, "panel.json")))
check(pj["sha256"] == hashlib.sha256(panel).hexdigest() and pj["skipped_rows"] == EVAL_ROWS, "panel.json records its digest and the rows skipped")

# --- every run's documents ------------------------------------------------------------------------
runs = study["runs"]
fin = [r for r in runs if r["status"] == "finished"]
check(len(fin) >= 6, "the toy study trains (%d of %d runs finished)" % (len(fin), len(runs)))
loss = {}
for r in fin:
    e = json.load(open(os.path.join(after, r["id"] + ".eval.json")))
    check(e["checkpoint"]["sha256"] == r["final_checkpoint_sha256"] and e["selection"]["num_seqs"] == PANEL_ROWS,
          "%s: eval of its final.pt (digest verified) on %d panel rows" % (r["id"], PANEL_ROWS))
    seqs = e["result"]["sequences"]
    loss[r["id"]] = sum(seqs["nll_sum"]) / sum(seqs["tokens"])
    if r["qk_norm"]:
        sw = json.load(open(os.path.join(after, r["id"] + ".sweep.json")))
        check(len(sw["conditions"]) == 19 and all("divergence" in c for c in sw["conditions"]),
              "%s: the full post-training sweep, 19 conditions, each with KL" % r["id"])
        tr = json.load(open(os.path.join(after, r["id"] + ".track.json")))
        check([c["step"] for c in tr["checkpoints"]] == [0, 8, 16] and all(c["sha256_verified"] for c in tr["checkpoints"]),
              "%s: track of steps 0, 8, 16, every checkpoint verified against train.json's digests" % r["id"])

# --- the analysis, recomputed -------------------------------------------------------------------
an = json.load(open(os.path.join(store, "toy", "analysis.json")))
T975 = {1: 12.706, 2: 4.303}


def ci(v):
    v = np.array(v, dtype=float)
    m = v.mean()
    if len(v) < 2:
        return m, None, None
    half = T975[len(v) - 1] * v.std(ddof=1) / math.sqrt(len(v))
    return m, m - half, m + half


by = {(r["qk_norm"], r["lr"], r["seed"]): r for r in runs}
worst = 0.0
for row in an["by_lr"]:
    lr = row["lr"]
    diffs, removes = [], []
    for sd in (0, 1):
        on, off = by[(True, lr, sd)], by[(False, lr, sd)]
        if on["status"] == "finished" and off["status"] == "finished":
            diffs.append(loss[off["id"]] - loss[on["id"]])
        if on["status"] == "finished":
            sw = json.load(open(os.path.join(after, on["id"] + ".sweep.json")))
            c = next(c for c in sw["conditions"] if c["label"] == "constant 1 qk all")
            ctl = sw["control"]["open"]["result"]["sequences"]
            removes.append((sum(c["result"]["sequences"]["nll_sum"]) - sum(ctl["nll_sum"])) / sum(ctl["tokens"]))
    for mine, theirs in ((diffs, row["off_minus_on"]), (removes, row["gains_to_1"])):
        if not mine:
            check(theirs["mean"] is None, "LR %g: no pair, no value" % lr)
            continue
        m, lo, hi = ci(mine)
        worst = max(worst, abs(m - theirs["mean"]), abs((lo or 0) - (theirs["low"] or 0)), abs((hi or 0) - (theirs["high"] or 0)))
check(worst <= 1e-9, "every off − on and gains → 1.0 value and its t-interval recomputed from the raw documents (worst %.1e)" % worst)
best_on = next(a for a in study["arms"] if a["qk_norm"])["best_lr"]
check(an["best_lr"]["qk_on"] == best_on, "the best LR is the study's (chosen on the training-time rows)")
# experiment 9 side by side: removal (gains -> 1.0 at the on arm's best LR) minus training without (each at its best), by seed
best_off = next(a for a in study["arms"] if not a["qk_norm"])["best_lr"]
side = []
for sd in an["seeds"]:
    on, off_b, on_b = by[(True, best_on, sd)], by[(False, best_off, sd)], by[(True, best_on, sd)]
    if on["status"] != "finished" or off_b["status"] != "finished":
        continue
    sw = json.load(open(os.path.join(after, on["id"] + ".sweep.json")))
    c = next(c for c in sw["conditions"] if c["label"] == "constant 1 qk all")
    ctl = sw["control"]["open"]["result"]["sequences"]
    side.append((sum(c["result"]["sequences"]["nll_sum"]) - sum(ctl["nll_sum"])) / sum(ctl["tokens"]) - (loss[off_b["id"]] - loss[on_b["id"]]))
got = an["best_vs_best"]["removal_minus_training_without"]
m, lo, hi = ci(side) if side else (None, None, None)
check(len(side) == len(an["seeds"]) and abs(m - got["mean"]) <= 1e-9 and abs((lo or 0) - (got["low"] or 0)) <= 1e-9 and
      abs((hi or 0) - (got["high"] or 0)) <= 1e-9,
      "removal minus training without QK-norm, paired by seed, recomputed from the raw documents (%s vs %s)" % (m, got["mean"]))
for qk, key in ((True, "qk_on"), (False, "qk_off")):
    for sd, got in zip((0, 1), an["fast_learning"][key]):
        rec = json.load(open(os.path.join(sdir, by[(qk, an["best_lr"][key], sd)]["dir"], "train.json")))
        ev = dict((e["step"], e["heldout_loss"]) for e in rec["evals"])
        check(sorted(ev) == [0, 5, 10, 15, 16], "evaluations at 0, 5, 10, 15 and the last step")
        l0, lend, q = ev[0], ev[16], ev[10] + (ev[15] - ev[10]) * 2 / 5  # 3/4 of 16 steps: 12, between 10 and 15
        check(abs(got["share"] - (q - lend) / (l0 - lend)) < 1e-12 and got["past_fast_learning"] == ((q - lend) < 0.05 * (l0 - lend)),
              "%s seed %d: the fast-learning criterion from train.json's evaluations" % (key, sd))
svg = os.path.join(work, "docs", "figures", "experiments", "toy.svg")
doc = xml.dom.minidom.parse(svg)
text = open(svg).read()
check(doc.documentElement.tagName == "svg" and "trained without QK-norm" in text and "learned gains" in text,
      "the figure is well-formed SVG with both costs")
check("Trained on " in text and "records it" in text, "the figure names the CPU its runs trained on, in a footer")
md = open(os.path.join(work, "docs", "experiments", "toy.md")).read()
check("| peak LR |" in md and "generated by" in md, "the tables are written to docs/experiments/toy.md")

# --- a rerun, a new session, a killed runner, two lanes -------------------------------------------
n_before = len(compute())
p = runner_call("toy")
check(p.returncode == 0 and [a["step"] for a in compute()[n_before:]] == ["analysis"],
      "a rerun with every cell published trains nothing (only the analysis reruns)")
# what a killed lane left in runs/segments/, and what else may lie there: a lane accounts the step marker
# no lane holds (from its start to its last heartbeat), drops markers that are no step's (a number for
# a step, a start years before its heartbeat, not JSON) and a temporary older than an hour, and leaves
# a folder or FIFO alone (open() on a FIFO would block the lane)
seg_dir = os.path.join(work, "runs", "segments")
os.makedirs(seg_dir, exist_ok=True)
now = time.time()
dead = {"experiment": "toy", "step": "train toy-study cell 9/8", "build": "test", "start": now - 100, "threads": 1, "cpu": "Elsewhere CPU", "cores": 4}
for name, doc in (("1-1.json", dead), ("1-2.json", dict(dead, step=5)), ("1-3.json", dict(dead, start=0)), ("1-4.json", "not json {")):
    with open(os.path.join(seg_dir, name), "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    os.utime(os.path.join(seg_dir, name), (now - 40, now - 40))
open(os.path.join(seg_dir, "1-5.json.tmp"), "w").close()
os.utime(os.path.join(seg_dir, "1-5.json.tmp"), (now - 7200, now - 7200))
os.mkdir(os.path.join(seg_dir, "folder.json"))
os.mkfifo(os.path.join(seg_dir, "fifo.json"))
n_before = len(compute())
p = subprocess.run(["/usr/bin/python3", runner, "toy"], env=env, capture_output=True, text=True, timeout=120)
cut = [a for a in compute()[n_before:] if a.get("interrupted")]
check(p.returncode == 0 and len(cut) == 1 and cut[0]["step"] == dead["step"] and abs(cut[0]["seconds"] - 60) < 1 and
      cut[0]["cpu"] == "Elsewhere CPU" and cut[0]["cores"] == 4 and cut[0]["rc"] is None and
      sorted(os.listdir(seg_dir)) == ["fifo.json", "folder.json"],
      "a lane accounts a dead lane's step marker once (60 s, its CPU), drops the markers that are no step's and an old "
      "temporary, and leaves a folder and a FIFO alone (rc %d, %s, left %s)" % (p.returncode, cut, sorted(os.listdir(seg_dir))))
# a runner killed alone (its step's command still running) leaves the step held: the command inherits the
# marker's lock, so no lane accounts the step as cut off until the command ends; a runner stopped by
# Ctrl-C stops its command too. (the runner's steps, tools/experiments/run_steps.py, without its main())
lib = "import sys\nsys.path.insert(0, %r)\nimport run_steps as m\n" % os.path.dirname(runner)
solo = os.path.join(work, "solo-runs")
solo_env = dict(env, OMN_EXPERIMENTS_RUNS=solo, OMN_EXPERIMENTS_STORE=os.path.join(work, "solo-store"), OMN_EXPERIMENTS_HEARTBEAT="0.1")
lane = subprocess.Popen(["/usr/bin/python3", "-c", lib + "m.step('solo', 'train s cell 0/1', 'b', ['sleep', '3'])"], env=solo_env)
give_up = time.time() + 60
while lane.poll() is None and time.time() < give_up and not (
        os.path.isdir(os.path.join(solo, "segments")) and [f for f in os.listdir(os.path.join(solo, "segments")) if f.endswith(".json")]):
    time.sleep(0.02)
time.sleep(0.3)
lane.kill()
lane.wait()
sweep = ["/usr/bin/python3", "-c", lib + "m.cut_segments()"]
subprocess.run(sweep, env=solo_env, check=True)
solo_acct = os.path.join(work, "solo-store", "compute.jsonl")
held = not os.path.exists(solo_acct)
time.sleep(3)  # the command (sleep 3) ends: its lock with it
subprocess.run(sweep, env=solo_env, check=True)
lines = [json.loads(x) for x in open(solo_acct)] if os.path.exists(solo_acct) else []
check(held and len(lines) == 1 and lines[0]["interrupted"] and lines[0]["step"] == "train s cell 0/1",
      "a runner killed alone: its running command holds the step's marker (nothing accounted), and once it ends the step "
      "is accounted once as cut off (%s)" % lines)
lane = subprocess.Popen(["/usr/bin/python3", "-c", lib + "m.step('solo', 'train s cell 0/1', 'b', ['sleep', '30'])"], env=solo_env,
                        stderr=subprocess.DEVNULL)
give_up = time.time() + 60
while lane.poll() is None and time.time() < give_up and not [f for f in os.listdir(os.path.join(solo, "segments")) if f.endswith(".json")]:
    time.sleep(0.02)
time.sleep(0.3)
child = [int(q) for q in subprocess.run(["pgrep", "-P", str(lane.pid)], capture_output=True, text=True).stdout.split()]
lane.send_signal(signal.SIGINT)
lane.wait()


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


time.sleep(0.2)
still = [q for q in child if alive(q)]
for q in still:
    os.kill(q, signal.SIGKILL)
check(lane.returncode != 0 and len(child) == 1 and not still, "Ctrl-C stops the runner's running command with it (%s left of %s)" % (still, child))
os.rmdir(os.path.join(seg_dir, "folder.json"))
os.remove(os.path.join(seg_dir, "fifo.json"))
# the accounting line is the toy experiment's: a cell of 9/8 does not exist, so the estimate ignores it
with open(os.path.join(store, "compute.jsonl")) as f:
    kept = [line for line in f if '"Elsewhere CPU"' not in line]
with open(os.path.join(store, "compute.jsonl"), "w") as f:
    f.writelines(kept)
# a new session: the scratch folder is gone (checkpoints, panel, journals), and one cell is missing
# from the store (it was in flight when the session ended)
victim = by[(True, 0.003, 1)]
k = victim["index"]
old_eval = json.load(open(os.path.join(after, victim["id"] + ".eval.json")))["result"]["nll_sum"]
shutil.rmtree(scratch)
os.remove(os.path.join(sdir, "cell-%03d.json" % k))
os.remove(os.path.join(sdir, "study.json"))
n_before = len(compute())
p = runner_call("toy")
check(p.returncode == 0 and [a["step"] for a in compute()[n_before:]] ==
      ["train toy-study cell %d/8" % k, "after-training toy-study cell %d/8" % k, "merge toy-study", "analysis"],
      "a new session trains only the cell missing from the store, then merges")
again = next(r for r in json.load(open(os.path.join(sdir, "study.json")))["runs"] if r["id"] == victim["id"])
check(again["final_checkpoint_sha256"] == victim["final_checkpoint_sha256"] and
      json.load(open(os.path.join(after, victim["id"] + ".eval.json")))["result"]["nll_sum"] == old_eval,
      "the retrained cell is the same model, bit for bit (final.pt digest, panel NLL)")

# a runner killed mid-way, continued by two lanes after a new freeze ("stub", a wrapper that logs
# each subcommand it runs): the study stays on the build it started on, each cell is trained once
stub = os.path.join(work, "runs", "builds", "stub")
os.makedirs(stub)
for f in os.listdir(builds):
    if f != "omn-audit":
        os.symlink(os.path.realpath(os.path.join(builds, f)), os.path.join(stub, f))
stub_log = os.path.join(work, "stub.log")
with open(os.path.join(stub, "omn-audit"), "w") as f:
    f.write("#!/bin/sh\necho \"$1\" >> %s\nexec %s \"$@\"\n" % (stub_log, os.path.realpath(omn)))
os.chmod(os.path.join(stub, "omn-audit"), 0o755)
json.dump(dict(manifest, grid={"qk_norm": [True], "lr": [0.001, 0.002, 0.004, 0.008], "seeds": [0]},
               output={"json": "runs/toy2/study.json", "runs": "runs/toy2/runs"}), open(os.path.join(work, "toy2-study.json"), "w"))
experiments["experiments"]["toy2"] = {"studies": ["toy2-study"], "sweep": "dependence", "track": True, "analysis": "depth"}
json.dump(experiments, open(econf, "w"))
store2 = os.path.join(store, "toy2")
proc = subprocess.Popen(["/usr/bin/python3", runner, "toy2"], env=dict(env, OMN_EXPERIMENTS_HEARTBEAT="0.1"),
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
started = time.time()
deadline = time.time() + 300
while time.time() < deadline and proc.poll() is None:
    if os.path.exists(os.path.join(store2, "cell-000.json")) and os.path.exists(os.path.join(work, "runs", "toy2", "cell-001.json.journal")):
        break
    time.sleep(0.02)
# a step's marker touched by its heartbeat (runs/segments/: what a lane killed with its session leaves)
seg_dir = os.path.join(work, "runs", "segments")
heartbeat_seen = False
while time.time() < deadline and not heartbeat_seen:
    for f in (os.listdir(seg_dir) if os.path.isdir(seg_dir) else []):
        try:
            m = json.load(open(os.path.join(seg_dir, f)))
            heartbeat_seen = os.path.getmtime(os.path.join(seg_dir, f)) > m["start"] + 0.15
        except (OSError, ValueError):
            pass
    time.sleep(0.02)
os.killpg(proc.pid, signal.SIGKILL)
killed_after = time.time() - started
proc.wait()
# what the lanes must train: each cell whose study document the killed runner had not written whole (no
# document, or one with its journal still beside it)
untrained = [i for i in range(4) if not os.path.exists(os.path.join(work, "runs", "toy2", "cell-%03d.json" % i)) or
             os.path.exists(os.path.join(work, "runs", "toy2", "cell-%03d.json.journal" % i))]
try:  # the runner's children die with it, but a study's journal lock is free only once they are gone
    for _ in range(500):
        os.killpg(proc.pid, 0)
        time.sleep(0.01)
except ProcessLookupError:
    pass
before_kill = sorted(f for f in os.listdir(store2) if f.startswith("cell-"))
check(before_kill and len(before_kill) < 4 and not os.path.exists(os.path.join(store2, "study.json")),
      "toy2 killed (SIGKILL) with %d of 4 cells published" % len(before_kill))
open(os.path.join(work, "runs", "builds", "CURRENT"), "w").write("stub\n")
n_before = len(compute())
lanes = [subprocess.Popen(["/usr/bin/python3", runner, "toy2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
         for _ in range(2)]
outs = [lane.communicate(timeout=600)[0] for lane in lanes]
ran = open(stub_log).read().split() if os.path.exists(stub_log) else []
trained = sorted(a["step"] for a in compute()[n_before:] if a["step"].startswith("train ") and a["rc"] == 0)
# the step the kill cut off is accounted once, by one of the lanes, from its start to its last heartbeat
cut = [a for a in compute()[n_before:] if a.get("interrupted")]
check(heartbeat_seen and len(cut) == 1 and cut[0]["step"].split(" cell ")[0] in ("train toy2-study", "after-training toy2-study") and
      cut[0]["rc"] is None and 0 <= cut[0]["seconds"] <= killed_after + 1 and cut[0]["cpu"] and
      not os.listdir(os.path.join(work, "runs", "segments")),
      "the training step the kill cut off is accounted once, as interrupted, for at most the time it ran (%s, %.1f s)" % (cut, killed_after))
want = sorted("train toy2-study cell %d/4" % i for i in untrained)
if not all(lane.returncode == 0 for lane in lanes):  # the log says why a step failed (the next run overwrites it)
    print("".join(outs)[-3000:], open(os.path.join(work, "runs", "experiments.log")).read()[-6000:])
check(all(lane.returncode == 0 for lane in lanes) and trained == want,
      "two lanes continue the study, each unpublished cell trained once (%s)" % trained)
# the lanes' after-training steps share the study's after/ (panel.bin, panel.json): run two at once on
# two cells, again and again (every other time from a new session's state, no panel yet), as the lanes
# above did once; a shared temporary file failed one of them about one time in seven
after2 = os.path.join(work, "runs", "toy2", "after")
panel_json = open(os.path.join(after2, "panel.json")).read()
at_fails = []
for i in range(40):
    if i % 2:
        for f in ("panel.bin", "panel.json"):
            os.remove(os.path.join(after2, f))
    pair = [subprocess.Popen(["/usr/bin/python3", os.path.join(root, "tools", "experiments", "after_training.py"), omn,
                              os.path.join(work, "runs", "toy2", "cell-%03d.json" % c), "dependence", "1", "1", "{}"],
                             cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for c in (1, 2)]
    at_fails += [(out.strip().splitlines() or [""])[-1] for out, rc in ((q.communicate(timeout=120)[0], q.returncode) for q in pair) if rc != 0]
check(not at_fails and open(os.path.join(after2, "panel.json")).read() == panel_json and
      not [f for f in os.listdir(after2) if f.endswith(".tmp")],
      "two lanes' after-training steps on one study at once, 40 times: each exits 0, the panel's record unchanged, no "
      "temporary left (%s)" % at_fails[:2])
# the cells train, evaluate and sweep on the build the study started on; the merge (bookkeeping over
# their documents) runs on the current build, which compares the cells' corpus by content
check(os.path.exists(os.path.join(store2, "study.json")) and open(os.path.join(store2, "BUILD")).read().strip() == "test" and
      set(ran) == {"merge"},
      "the study was continued on the build it started on, only its merge on the new CURRENT (stub ran: %s)" % sorted(set(ran)))
check([a["step"] for a in compute()[n_before:]].count("merge toy2-study") == 1, "one lane merged the cells")
d2 = json.load(open(os.path.join(store, "toy2", "analysis.json")))
s2 = json.load(open(os.path.join(store2, "study.json")))
finals = []
for r in s2["runs"]:
    if r["status"] == "finished":
        tr = json.load(open(os.path.join(store2, "after", r["id"] + ".track.json")))["checkpoints"][-1]
        finals.append(sum((l["q"]["mean"] + l["k"]["mean"]) / 2 for l in tr["layers"][:2]) / 2)
check(len(finals) == 4 and abs(d2["arms"]["toy2"]["early_mean"]["mean"] - float(np.mean(finals))) < 1e-12,
      "the depth analysis: the early-layer gain mean of track's last checkpoints, over the finished runs")

# a deadline: no cell is started that the published cells say cannot finish before it
os.remove(os.path.join(sdir, "cell-002.json"))
os.remove(os.path.join(sdir, "study.json"))
n_before = len(compute())
past = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(time.time() - 120))
p = subprocess.run(["/usr/bin/python3", runner, "toy"], env=dict(env, OMN_EXPERIMENTS_DEADLINE=past), capture_output=True, text=True)
check(p.returncode == 0 and len(compute()) == n_before and not os.path.exists(os.path.join(sdir, "cell-002.json")) and
      "this lane stops" in open(os.path.join(work, "runs", "experiments.log")).read(),
      "past OMN_EXPERIMENTS_DEADLINE a lane starts no cell and says so")
p = subprocess.run(["/usr/bin/python3", runner, "toy"], env=dict(env, OMN_EXPERIMENTS_DEADLINE="8pm"), capture_output=True, text=True)
check(p.returncode == 2 and "OMN_EXPERIMENTS_DEADLINE=8pm: expected a UTC time" in p.stderr, "a malformed deadline is exit 2")
for beat in ("abc", "0", "-1", "nan", "inf", "1e9"):
    p = subprocess.run(["/usr/bin/python3", runner, "toy"], env=dict(env, OMN_EXPERIMENTS_HEARTBEAT=beat), capture_output=True, text=True)
    check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "OMN_EXPERIMENTS_HEARTBEAT=%s: expected seconds" % beat in p.stderr,
          "OMN_EXPERIMENTS_HEARTBEAT=%s is exit 2 naming it (%d: %s)" % (beat, p.returncode, p.stderr.strip()[-200:]))
p = runner_call("toy")
check(p.returncode == 0 and os.path.exists(os.path.join(sdir, "study.json")), "without the deadline the cell runs and the study merges")

# a new session with every cell of a study published and no CURRENT frozen yet: the study's own build
# merges it (on 2026-12-06 such a session's lanes stopped at once on 'no frozen build')
merged = json.load(open(os.path.join(sdir, "study.json")))
os.remove(os.path.join(sdir, "study.json"))
os.rename(os.path.join(work, "runs", "builds", "CURRENT"), os.path.join(work, "CURRENT.saved"))
n_stub = len(open(stub_log).read().split())
p = runner_call("toy")
remerged = json.load(open(os.path.join(sdir, "study.json"))) if os.path.exists(os.path.join(sdir, "study.json")) else {}
check(p.returncode == 0 and remerged.get("arms") == merged["arms"] and len(open(stub_log).read().split()) == n_stub and
      "no CURRENT build in this session" in open(os.path.join(work, "runs", "experiments.log")).read(),
      "without CURRENT a completed study is merged by its own build, to the same arms")
os.rename(os.path.join(work, "CURRENT.saved"), os.path.join(work, "runs", "builds", "CURRENT"))

# near the deadline a lane takes a shorter cell that fits (QK-off: no sweep) rather than none: the
# published cells of experiment "toy-late" (accounted here, as a session's would be) took 2 h with
# QK-norm on, 1 min with it off; cells 1 (on, seed 1) and 4 (off, seed 0) are missing, 30 min are left
experiments["experiments"]["toy-late"] = dict(experiments["experiments"]["toy"])
json.dump(experiments, open(econf, "w"))
with open(os.path.join(store, "compute.jsonl"), "a") as f:
    for k in range(8):
        f.write(json.dumps({"experiment": "toy-late", "step": "train toy-study cell %d/8" % k, "seconds": 7200 if k < 4 else 60,
                            "rc": 0}) + "\n")
for k in (1, 4):
    os.remove(os.path.join(sdir, "cell-%03d.json" % k))
os.remove(os.path.join(sdir, "study.json"))
n_before = len(compute())
soon = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(time.time() + 30 * 60))
p = subprocess.run(["/usr/bin/python3", runner, "toy-late"], env=dict(env, OMN_EXPERIMENTS_DEADLINE=soon), capture_output=True, text=True)
steps = [a["step"] for a in compute()[n_before:]]
log = open(os.path.join(work, "runs", "experiments.log")).read()
check(p.returncode == 0 and [x for x in steps if x.startswith("train ")] == ["train toy-study cell 4/8"] and
      not os.path.exists(os.path.join(sdir, "cell-001.json")) and "cell 1 takes ~120 min" in log and "analysis" not in steps,
      "30 min before the deadline a lane leaves the 2-h QK-on cell and trains the 1-min QK-off one (%s)" % steps)
p = runner_call("toy")
check(p.returncode == 0 and os.path.exists(os.path.join(sdir, "cell-001.json")) and os.path.exists(os.path.join(sdir, "study.json")),
      "without the deadline the cell left runs and the study merges")

# two published cells of a kind, one slowed by a neighbour (3 h) and one not (1 h): the estimate is
# their median, 2 h, so a lane 2.5 h before the deadline trains the third (the longer of the two alone
# kept such cells out of every session)
experiments["experiments"]["toy-median"] = dict(experiments["experiments"]["toy"])
json.dump(experiments, open(econf, "w"))
with open(os.path.join(store, "compute.jsonl"), "a") as f:
    for k, secs in ((0, 3 * 3600), (2, 3600)):
        f.write(json.dumps({"experiment": "toy-median", "step": "train toy-study cell %d/8" % k, "seconds": secs, "rc": 0}) + "\n")
os.remove(os.path.join(sdir, "cell-001.json"))
os.remove(os.path.join(sdir, "study.json"))
n_before = len(compute())
later = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(time.time() + 150 * 60))
p = subprocess.run(["/usr/bin/python3", runner, "toy-median"], env=dict(env, OMN_EXPERIMENTS_DEADLINE=later), capture_output=True, text=True)
steps = [a["step"] for a in compute()[n_before:]]  # (its run is kept from above: only after-training reruns)
check(p.returncode == 0 and "after-training toy-study cell 1/8" in steps and os.path.exists(os.path.join(sdir, "cell-001.json")) and
      "toy-median: toy-study: cell 1 takes" not in open(os.path.join(work, "runs", "experiments.log")).read(),
      "of a 3-h and a 1-h cell the estimate is 2 h: 2.5 h before the deadline the lane publishes the cell (%s)" % steps)

# a study that widens an ablation's LR grid (configs/experiments.json's ablation-small): the
# experiment's studies are read as one grid. Two lanes: B finds the first study's last cell claimed
# by A and goes on to the second study instead of idling its core; A, done with its cell, finds the
# second study's cells in B's hands; whichever lane completes the grid merges and runs the analysis
json.dump(dict(manifest, grid={"qk_norm": [True, False], "lr": [0.06], "seeds": [0, 1]},
               output={"json": "runs/toy-hi/study.json", "runs": "runs/toy-hi/runs"}), open(os.path.join(work, "toy-hi-study.json"), "w"))
experiments["experiments"]["toy-wide"] = {"studies": ["toy-study", "toy-hi-study"], "sweep": "full", "track": True, "analysis": "ablation",
                                          "compare_with": "toy"}
json.dump(experiments, open(econf, "w"))
os.remove(os.path.join(sdir, "cell-003.json"))
os.remove(os.path.join(sdir, "study.json"))
lane_a = open(os.path.join(scratch, "cell-003.lock"), "a")
fcntl.flock(lane_a, fcntl.LOCK_EX)
n_before = len(compute())
lane_b = subprocess.Popen(["/usr/bin/python3", runner, "toy-wide"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
hi_scratch = os.path.join(work, "runs", "toy-hi")
deadline = time.time() + 300
while time.time() < deadline and lane_b.poll() is None and not (
        os.path.isdir(hi_scratch) and [f for f in os.listdir(hi_scratch) if f.endswith(".journal")]):
    time.sleep(0.02)
check(lane_b.poll() is None, "lane B, finding toy-study's last cell claimed, started on toy-hi-study's cells")
lane_a.close()
p = runner_call("toy-wide")  # lane A: the cell it had claimed
out_b = lane_b.communicate(timeout=600)[0]
steps = [x["step"] for x in compute()[n_before:]]
if p.returncode != 0 or lane_b.returncode != 0:
    print(p.stdout, p.stderr, out_b[-2000:])
check(p.returncode == 0 and lane_b.returncode == 0 and
      sorted(x for x in steps if x.startswith("train ")) == sorted(["train toy-study cell 3/8"] + ["train toy-hi-study cell %d/4" % k for k in range(4)]) and
      steps.count("merge toy-study") == 1 and steps.count("merge toy-hi-study") == 1 and "analysis" in steps and
      steps.index("analysis") > max(steps.index("merge toy-study"), steps.index("merge toy-hi-study")),
      "two lanes on a two-study grid: each cell trained once, each study merged once, the analysis after both merges (%s)" % steps)
check(not [a for a in compute()[n_before:] if a.get("interrupted")],
      "lane A, starting while lane B's step runs, leaves B's locked marker alone (no step accounted as interrupted)")
wide = json.load(open(os.path.join(store, "toy-wide", "analysis.json")))
hi_dir = os.path.join(store, "toy-hi")
grid = {}
for base in (sdir, hi_dir):
    st = json.load(open(os.path.join(base, "study.json")))
    for r in st["runs"]:
        grid[(r["qk_norm"], r["lr"], r["seed"])] = (base, r)
check(wide["lrs"] == [0.003, 0.03, 0.06], "the grid's LRs are both studies' (%s)" % wide["lrs"])


def panel_nll(base, r):
    seqs = json.load(open(os.path.join(base, "after", r["id"] + ".eval.json")))["result"]["sequences"]
    return sum(seqs["nll_sum"]) / sum(seqs["tokens"])


row = next(x for x in wide["by_lr"] if x["lr"] == 0.06)
diffs = [panel_nll(*grid[(False, 0.06, sd)]) - panel_nll(*grid[(True, 0.06, sd)]) for sd in (0, 1)
         if grid[(False, 0.06, sd)][1]["status"] == "finished" and grid[(True, 0.06, sd)][1]["status"] == "finished"]
m, low, _ = ci(diffs)
check(len(diffs) == 2 and abs(row["off_minus_on"]["mean"] - m) < 1e-12 and abs(row["off_minus_on"]["low"] - low) < 1e-12,
      "the added study's LR: off − on recomputed from its own eval documents (%.4f)" % m)
for qk, key in ((True, "qk_on"), (False, "qk_off")):
    means = {}
    for lr in wide["lrs"]:
        rs = [grid[(qk, lr, sd)] for sd in (0, 1)]
        if all(r["status"] == "finished" for _, r in rs):
            means[lr] = np.mean([json.load(open(os.path.join(b, r["dir"], "train.json")))["final_heldout_loss"] for b, r in rs])
    check(wide["best_lr"][key] == min(means, key=means.get),
          "%s: the best LR over both studies is the lowest mean held-out loss (training-time rows) among LRs where every run "
          "finished (%s of %s)" % (key, wide["best_lr"][key], means))
# removal minus training without at every LR, paired by seed, from the rows' own per-seed values
for row in wide["by_lr"]:
    want = [None if None in (r, d) else r - d for r, d in zip(row["gains_to_1"]["values"], row["off_minus_on"]["values"])]
    check(row["removal_minus_training_without"]["values"] == want,
          "LR %g: removal − training without is gains → 1.0 minus off − on, seed by seed (%s)" % (row["lr"], want))
# beside another experiment (compare_with): at the LRs both trained, the other's rows as its own
# analysis has them (here the same study, so the two sides agree)
toy_rows = {r["lr"]: r for r in json.load(open(os.path.join(store, "toy", "analysis.json")))["by_lr"]}
m = wide["matched_lrs"]
check([r["lr"] for r in m["rows"]] == [0.003, 0.03] and all(
    r["there"]["off_minus_on"]["values"] == toy_rows[r["lr"]]["off_minus_on"]["values"] == r["here"]["off_minus_on"]["values"]
    for r in m["rows"]), "compare_with: the LRs both grids trained, each side's off − on its own analysis's (%s)" % [r["lr"] for r in m["rows"]])
# the pre-registered equivalence test: TOST at alpha 0.05 over the seeds at each arm's best LR; its
# extra studies join the lookups, not the grid (toy-hi's LR is not a best LR, so no seed comes from it)
experiments["experiments"]["toy-tost"] = {"studies": ["toy-study", "toy-hi-study"], "sweep": "full", "track": True, "analysis": "ablation",
                                          "equivalence": {"stated": "in this test", "measure": "removal_minus_training_without",
                                                          "secondary": ["off_minus_on"], "margin": 0.05, "alpha": 0.05, "seeds": [0, 1, 7],
                                                          "studies": ["toy-hi-study"]}}
json.dump(experiments, open(econf, "w"))
a = subprocess.run([sys.executable, os.path.join(root, "tools", "experiments", "analyse.py"), "ablation", "toy-tost",
                    os.path.join(sdir, "study.json"), "--equivalence", os.path.join(hi_dir, "study.json")], env=env, capture_output=True, text=True)
tst = json.load(open(os.path.join(store, "toy-tost", "analysis.json"))) if a.returncode == 0 else {"lrs": None, "equivalence": {}}
eq = tst["equivalence"]
check(a.returncode == 0 and tst["lrs"] == [0.003, 0.03] and eq["missing_seeds"] == [7] and eq["seeds"] == [0, 1],
      "an equivalence study stays out of the grid's LRs; a seed no study trained is named missing (%s %s)" % (a.stderr[-200:], eq))
if a.returncode == 0:
    best_on = tst["best_lr"]["qk_on"]
    brow = next(r for r in tst["by_lr"] if r["lr"] == best_on)
    t = eq["tests"]["removal_minus_training_without"]
    v = [x for x in t["values"] if x is not None]
    if tst["best_lr"]["qk_on"] == tst["best_lr"]["qk_off"]:
        check(t["values"] == brow["removal_minus_training_without"]["values"], "the test's values are the best LR's removal − training without")
    if len(v) >= 2:
        try:
            from scipy import stats  # the independent quantile where scipy is installed
            q = stats.t.ppf(0.95, len(v) - 1)
        except ImportError:
            q = {1: 6.314, 2: 2.920, 3: 2.353}[len(v) - 1]
        mv = float(np.mean(v))
        se = float(np.std(v, ddof=1)) / np.sqrt(len(v))
        check(abs(t["low"] - (mv - q * se)) < 1e-3 * max(se, 1e-9) * q + 1e-12 and abs(t["high"] - (mv + q * se)) < 1e-3 * max(se, 1e-9) * q + 1e-12,
              "TOST: the 90 %% interval is mean ± t(0.95, n−1)·se (%.6f, %.6f)" % (t["low"], t["high"]))
    check(t["verdict"].startswith("not read: seed(s) 7"), "a test with a seed missing is not read (%s)" % t["verdict"])
sys.path.insert(0, os.path.join(root, "tools", "experiments"))
from analysis_common import T95, tost  # noqa: E402
try:
    from scipy import stats
    check(all(abs(T95[k - 1] - stats.t.ppf(0.95, k)) < 6e-4 for k in range(1, 31)), "T95 is the one-sided 95 % t quantile, df 1..30")
except ImportError:
    pass
check(tost([0.001, -0.002, 0.0015, 0.0005], 0.01)["verdict"] == "equivalent within ±0.01" and
      tost([0.02, 0.018, 0.021], 0.01)["verdict"] == "equivalence not shown" and
      tost([0.001, 0.2, -0.19], 0.01)["verdict"] == "equivalence not shown" and tost([0.001], 0.01)["verdict"] == "too few values",
      "TOST: small scatter inside the margin is equivalent; a shifted mean or a wide scatter is not shown; one value is too few")

# the equivalence studies written by the stated rule (tools/experiments/equivalence_studies.py): each
# arm at its best LR of the grid, the test's seeds, the grid's last study's settings; only while the
# headline interval contains 0; then trained by the runner and read by the analysis with every seed in
writer = os.path.join(root, "tools", "experiments", "equivalence_studies.py")
experiments["experiments"]["toy-eq"] = {"studies": ["toy-study", "toy-hi-study"], "sweep": "full", "track": True, "analysis": "ablation",
                                        "equivalence": {"stated": "in this test", "measure": "removal_minus_training_without",
                                                        "margin": 0.05, "alpha": 0.05, "seeds": [2], "studies": ["toy-eq-on", "toy-eq-off"]}}
json.dump(experiments, open(econf, "w"))
eq_call = lambda *a: subprocess.run(["/usr/bin/python3", writer, "toy-eq", *a], env=env, capture_output=True, text=True)  # noqa: E731
p = eq_call()
check(p.returncode == 2 and "toy-eq/analysis.json: no analysis of the grid yet" in p.stderr,
      "equivalence studies before the grid's analysis: exit 2 naming it (%s)" % p.stderr.strip())
a = subprocess.run([sys.executable, os.path.join(root, "tools", "experiments", "analyse.py"), "ablation", "toy-eq",
                    os.path.join(sdir, "study.json"), os.path.join(hi_dir, "study.json")], env=env, capture_output=True, text=True)
apath = os.path.join(store, "toy-eq", "analysis.json")
eqa = json.load(open(apath))
kept = json.dumps(eqa)
headline = eqa["best_vs_best"]["removal_minus_training_without"]
for low, high, opened in ((0.01, 0.02, False), (-0.01, 0.02, True)):
    headline["low"], headline["high"] = low, high
    json.dump(eqa, open(apath, "w"))
    p = eq_call()
    check(p.returncode == 0 and ("would write" in p.stdout) == opened and not os.path.exists(os.path.join(work, "toy-eq-on.json")),
          "headline [%g, %g]: %s, and a dry run writes nothing" % (low, high, "studies proposed" if opened else "the grid decided it"))
copy = os.path.join(work, "results-copy")  # the store copied elsewhere: its analysis names the store it read
shutil.copytree(store, copy)
p = subprocess.run(["/usr/bin/python3", writer, "toy-eq"], env=dict(env, OMN_EXPERIMENTS_STORE=copy), capture_output=True, text=True)
check(p.returncode == 0 and "would write" in p.stdout,
      "a copy of the store is read like the store: the analysis's studies found by their place in it (%s)" % p.stderr.strip())
shutil.rmtree(copy)
os.rename(os.path.join(hi_dir, "study.json"), os.path.join(hi_dir, "study.json.kept"))
p = eq_call("--write")
os.rename(os.path.join(hi_dir, "study.json.kept"), os.path.join(hi_dir, "study.json"))
check(p.returncode == 2 and "toy-hi/study.json: not merged yet" in p.stderr, "a study of the grid not merged: exit 2 naming it (%s)" % p.stderr.strip())
json.dump(dict(json.loads(kept), studies=[os.path.join(sdir, "study.json")]), open(apath, "w"))
p = eq_call("--write")
check(p.returncode == 2 and "the analysis read" in p.stderr and "run the analysis again" in p.stderr,
      "an analysis that did not read every study of the grid: exit 2 (%s)" % p.stderr.strip())
open(apath, "w").write(kept)
eqa = json.loads(kept)
headline = eqa["best_vs_best"]["removal_minus_training_without"]
if headline["low"] is not None and not headline["low"] <= 0 <= headline["high"]:  # the toy's own headline: made open
    headline["low"], headline["high"] = -abs(headline["mean"]) - 1, abs(headline["mean"]) + 1
    json.dump(eqa, open(apath, "w"))
others = {k: v for k, v in json.load(open(econf))["experiments"].items() if k != "toy-eq"}
p = eq_call("--write")
written = {qk: json.load(open(os.path.join(work, "toy-eq-%s.json" % qk))) for qk in ("on", "off")} if p.returncode == 0 else {}
after = json.load(open(econf))
check(p.returncode == 0 and after["experiments"]["toy-eq"]["studies"] == ["toy-study", "toy-hi-study", "toy-eq-on", "toy-eq-off"] and
      {k: v for k, v in after["experiments"].items() if k != "toy-eq"} == others and
      all(written[qk]["grid"] == {"qk_norm": [on], "lr": [eqa["best_lr"]["qk_on" if on else "qk_off"]], "seeds": [2]} and
          written[qk]["base"] == "toy.json" and written[qk]["output"] == {"json": "runs/toy-eq-%s/study.json" % qk, "runs": "runs/toy-eq-%s/runs" % qk}
          for qk, on in (("on", True), ("off", False))),
      "--write: each arm at its best LR with the test's seeds, outputs beside the grid's, added to the experiment's studies "
      "and nothing else changed (%s)" % (p.stderr.strip() or written))
p = eq_call("--write")
check(p.returncode == 2 and "toy-eq-on.json exists: refusing to overwrite" in p.stderr, "a written study is never overwritten")
experiments = after
p = runner_call("toy-eq")
eqa = json.load(open(apath))
e = eqa.get("equivalence", {})
check(p.returncode == 0 and eqa["lrs"] == [0.003, 0.03, 0.06] and e.get("missing_seeds") == [] and 2 in e.get("seeds", []) and
      not e["tests"]["removal_minus_training_without"]["verdict"].startswith("not read"),
      "the runner trains the written studies and the analysis reads the test with every seed (%s %s)" % (p.stderr[-300:], e.get("tests")))

# the choice reads both studies: the added study's arm made the best (its training-time loss lowered
# in a copy of its document), the analysis picks its LR
hi_study = os.path.join(hi_dir, "study.json")
saved = open(hi_study).read()
d = json.loads(saved)
for arm in d["arms"]:
    if arm["qk_norm"]:
        arm["best_loss"] -= 10
json.dump(d, open(hi_study, "w"))
a = subprocess.run([sys.executable, os.path.join(root, "tools", "experiments", "analyse.py"), "ablation", "toy-forged",
                    os.path.join(sdir, "study.json"), hi_study], env=env, capture_output=True, text=True)
open(hi_study, "w").write(saved)
forged = json.load(open(os.path.join(store, "toy-forged", "analysis.json")))["best_lr"] if a.returncode == 0 else None
check(forged == {"qk_on": 0.06, "qk_off": wide["best_lr"]["qk_off"]},
      "the best LR is read from every study: the added study's arm, made the best, gives its LR (%s)" % forged)
check("Studies, read as one grid: `toy` (LR 0.003, 0.03), `toy-hi` (LR 0.06)" in open(os.path.join(work, "docs", "experiments", "toy-wide.md")).read(),
      "the tables name the studies the grid joins")
hi_panel = os.path.join(hi_dir, "after", "panel.json")
saved = open(hi_panel).read()
d = json.loads(saved)
d["skipped_rows"] += 1
json.dump(d, open(hi_panel, "w"))
a = subprocess.run([sys.executable, os.path.join(root, "tools", "experiments", "analyse.py"), "ablation", "toy-wide",
                    os.path.join(sdir, "study.json"), os.path.join(hi_dir, "study.json")], env=env, capture_output=True, text=True)
open(hi_panel, "w").write(saved)
check(a.returncode != 0 and "was scored on another panel" in a.stderr, "studies scored on different panels do not join a grid (%s)" % a.stderr.strip()[-100:])
a = subprocess.run([sys.executable, os.path.join(root, "tools", "experiments", "analyse.py"), "ablation", "toy-wide",
                    os.path.join(sdir, "study.json"), os.path.join(store2, "study.json")], env=env, capture_output=True, text=True)
check(a.returncode != 0 and "lacks QK-norm off at LR 0.001 for seed 0" in a.stderr,
      "a study without every arm and seed of the others does not join a grid (%s)" % a.stderr.strip()[-120:])

# a corpus.json rebuilt in a new session (the same data, another time and build in its provenance)
# is another file: the cells still merge, compared by the data they trained on
def edit_and_rerun(path, pointer, value):
    """Sets a field of a published document, unpublishes cell 1 and the merge, reruns the runner."""
    d = json.load(open(path))
    d[pointer[0]][pointer[1]] = value
    json.dump(d, open(path, "w"))
    os.remove(os.path.join(sdir, "cell-001.json"))
    os.remove(os.path.join(sdir, "study.json"))
    shutil.rmtree(scratch)
    return runner_call("toy")


c0 = os.path.join(sdir, "cell-000.json")
p = edit_and_rerun(c0, ("corpus", "sha256"), "0" * 64)
check(p.returncode == 0 and os.path.exists(os.path.join(sdir, "study.json")),
      "a cell whose corpus.json differs from the published cells' only in its bytes (same token files) is published and merged")

# a cell trained on other data is refused before its sweep
tj0 = os.path.join(sdir, json.load(open(c0))["runs"][0]["dir"], "train.json")
p = edit_and_rerun(tj0, ("corpus", "train_sha256"), "0" * 64)
check(p.returncode == 2 and "/corpus/train_sha256" in p.stderr and not os.path.exists(os.path.join(sdir, "cell-001.json")),
      "a cell trained on other data than the published cells is refused, exit 2 naming /corpus/train_sha256")
# and merge itself checks each run's train.json against the digest its shard pins, then the data
cells = [os.path.join(sdir, f) for f in sorted(os.listdir(sdir)) if f.startswith("cell-") and f.endswith(".json")]
cells += [os.path.join(scratch, f) for f in sorted(os.listdir(scratch)) if f.startswith("cell-") and f.endswith(".json") and
          not os.path.exists(os.path.join(sdir, f))]  # the refused cell, trained but not published
m = subprocess.run([omn, "merge", "-o", os.path.join(work, "merged.json"), *cells], capture_output=True, text=True)
# shard documents gathered without their runs: compared by their corpus.json digests, as before
apart = os.path.join(work, "shards-apart")
os.makedirs(apart)
for c in cells:
    shutil.copy(c, apart)
lone = sorted(os.path.join(apart, f) for f in os.listdir(apart))
a = subprocess.run([omn, "merge", "-o", os.path.join(work, "merged-apart.json"), *lone], capture_output=True, text=True)
check(a.returncode == 2 and "/corpus/sha256" in a.stderr and "not beside the shards" in a.stderr,
      "merge of shards without their runs and with different corpus.json digests: exit 2 saying why (%s)" % a.stderr.strip()[-120:])
same = json.load(open(lone[1]))["corpus"]["sha256"]
for f in lone:
    d = json.load(open(f))
    d["corpus"]["sha256"] = same
    json.dump(d, open(f, "w"))
a = subprocess.run([omn, "merge", "-o", os.path.join(work, "merged-apart.json"), *lone], capture_output=True, text=True)
check(a.returncode == 0, "merge of shards without their runs and one corpus.json digest: merged (%s)" % a.stderr.strip()[-120:])
check(m.returncode == 4 and "train.json" in m.stderr,
      "merge checks each run's train.json against the digest its shard pins (exit %d: %s)" % (m.returncode, m.stderr.strip()[-140:]))

# routing: the arms by optimizer, the differences from OMN's routing paired by seed
open(os.path.join(work, "runs", "builds", "CURRENT"), "w").write("test\n")
json.dump(dict(manifest, set={"optimizer": {"kind": "adamw", "muon_lr": None}},
               grid={"qk_norm": [True], "lr": [0.003], "seeds": [0, 1], "optimizer": ["muon+adamw", "adamw"]},
               output={"json": "runs/routing-optimizer/study.json", "runs": "runs/routing-optimizer/runs"}),
          open(os.path.join(work, "routing-optimizer.json"), "w"))
experiments["experiments"]["toy-routing"] = {"studies": ["routing-optimizer"], "sweep": "dependence", "track": True, "analysis": "routing"}
json.dump(experiments, open(econf, "w"))
p = runner_call("toy-routing")
check(p.returncode == 0, "run.py toy-routing exits 0")
ra = json.load(open(os.path.join(store, "toy-routing", "analysis.json")))
rs = json.load(open(os.path.join(store, "routing-optimizer", "study.json")))
ra_after = os.path.join(store, "routing-optimizer", "after")
dep = {}
for r in rs["runs"]:
    sw = json.load(open(os.path.join(ra_after, r["id"] + ".sweep.json")))
    c = next(c for c in sw["conditions"] if c["label"] == "constant 1 qk all")
    ctl = sw["control"]["open"]["result"]["sequences"]
    dep[(r["optimizer"], r["seed"])] = (sum(c["result"]["sequences"]["nll_sum"]) - sum(ctl["nll_sum"])) / sum(ctl["tokens"])
diffs = [dep[("adamw", sd)] - dep[("muon+adamw", sd)] for sd in (0, 1)]
m, lo, hi = ci(diffs)
got = ra["arms"]["AdamW everywhere"]["vs_omn_dependence"]
check(abs(got["mean"] - m) < 1e-12 and abs(got["low"] - lo) < 1e-12 and abs(got["high"] - hi) < 1e-12,
      "routing: AdamW everywhere − OMN dependence, paired by seed, recomputed (%.2e)" % m)
check(os.path.exists(os.path.join(work, "docs", "figures", "experiments", "toy-routing.svg")), "routing: its figure")

# routing within one build and kernel: an arm and a rerun of the OMN control, both pinned to OpenBLAS's
# Sandybridge kernels (configs/experiments.json /experiments/NAME/openblas_coretype; AVX only, so any machine that
# runs the others runs them, and not the kernels the original control trained on); each arm is paired with the
# control of its own build and kernel, and --plan says what would run without running it
PIN = "Sandybridge"
json.dump(dict(manifest, set={"optimizer": {"kind": "adamw", "muon_lr": None}},
               grid={"qk_norm": [True], "lr": [0.003], "seeds": [0, 1], "optimizer": ["muon+adamw"]},
               output={"json": "runs/routing-control-sandybridge/study.json", "runs": "runs/routing-control-sandybridge/runs"}),
          open(os.path.join(work, "routing-control-sandybridge.json"), "w"))
json.dump(dict(manifest, set={"optimizer": {"qk_gain_lr_scale": 10}}, grid={"qk_norm": [True], "lr": [0.003], "seeds": [0, 1]},
               output={"json": "runs/routing-gain-lr-10/study.json", "runs": "runs/routing-gain-lr-10/runs"}),
          open(os.path.join(work, "routing-gain-lr-10.json"), "w"))
experiments["experiments"]["toy-routing"] = {
    "studies": ["routing-optimizer", "routing-gain-lr-10", "routing-control-sandybridge"], "sweep": "dependence", "track": True,
    "analysis": "routing", "openblas_coretype": {"routing-gain-lr-10": PIN, "routing-control-sandybridge": PIN}}
json.dump(experiments, open(econf, "w"))
p = runner_call("--plan", "toy-routing")
check(p.returncode == 0 and "routing-control-sandybridge: 2 cells, 0 published" in p.stdout and "pinned to %s" % PIN in p.stdout
      and not os.path.exists(os.path.join(store, "routing-control-sandybridge")),
      "run.py --plan: the cells to train and the kernel pin, and nothing written (%s)" % (p.stdout + p.stderr).strip()[-200:])
bad = dict(experiments, experiments={"x": dict(experiments["experiments"]["toy-routing"], openblas_coretype={"nope": PIN})})
bad_runner(bad, "", "/experiments/x/openblas_coretype: expected an object of OpenBLAS core types", "x")
p = runner_call("toy-routing")
check(p.returncode == 0, "run.py toy-routing with a pinned arm and control rerun exits 0 (%s)" % p.stderr.strip()[-200:])
for st in ("routing-gain-lr-10", "routing-control-sandybridge"):
    for c in sorted(f for f in os.listdir(os.path.join(store, st)) if f.startswith("cell-")):
        cell = json.load(open(os.path.join(store, st, c)))
        rec = json.load(open(os.path.join(store, st, cell["runs"][0]["dir"], "train.json")))
        check(rec["provenance"]["libraries"]["openblas"].split()[-2].lower() == PIN.lower(),
              "%s %s trained on the pinned kernel (train.json: %s)" % (st, c, rec["provenance"]["libraries"]["openblas"]))
ra = json.load(open(os.path.join(store, "toy-routing", "analysis.json")))
gl = ra["arms"]["gains' LR ×10"]
orig_kernel = json.load(open(os.path.join(store, "routing-optimizer", rs["runs"][0]["dir"], "train.json")))["provenance"]["libraries"]["openblas"].split()[-2]
want_ctl = "routing-optimizer" if orig_kernel.lower() == PIN.lower() else "routing-control-sandybridge"
check(all(q["same_build_kernel"] and q["control_study"] == want_ctl for q in gl["pairing"]) and len(gl["pairing"]) == 2,
      "routing: the pinned arm is paired with the control of its build and kernel, %s (%s)" % (
          want_ctl, [(q["control_study"], q["control"]["kernel"]) for q in gl["pairing"]]))
check(all(q["control_study"] == "routing-optimizer" for q in ra["arms"]["AdamW everywhere"]["pairing"]),
      "routing: AdamW everywhere stays paired with the control it trained beside")


def dependence(st, r):
    sw = json.load(open(os.path.join(store, st, "after", r["id"] + ".sweep.json")))
    c = next(c for c in sw["conditions"] if c["label"] == "constant 1 qk all")
    ctl = sw["control"]["open"]["result"]["sequences"]
    return (sum(c["result"]["sequences"]["nll_sum"]) - sum(ctl["nll_sum"])) / sum(ctl["tokens"])


runs_of = lambda st: {r["seed"]: r for r in json.load(open(os.path.join(store, st, "study.json")))["runs"]  # noqa: E731
                      if r.get("optimizer", "muon+adamw") == "muon+adamw"}
arm, ctl = runs_of("routing-gain-lr-10"), runs_of(want_ctl)
m, lo, hi = ci([dependence("routing-gain-lr-10", arm[sd]) - dependence(want_ctl, ctl[sd]) for sd in (0, 1)])
got = gl["vs_omn_dependence"]
check(abs(got["mean"] - m) < 1e-12 and abs(got["low"] - lo) < 1e-12 and abs(got["high"] - hi) < 1e-12,
      "routing: gains' LR ×10 − its matched control's dependence, paired by seed, recomputed (%.2e)" % m)
rr = ra["control_reruns"]["routing-control-sandybridge"]["vs_original_dependence"]
orig = runs_of("routing-optimizer")
m, lo, hi = ci([dependence("routing-control-sandybridge", runs_of("routing-control-sandybridge")[sd]) - dependence("routing-optimizer", orig[sd])
                for sd in (0, 1)])
check(abs(rr["mean"] - m) < 1e-12, "routing: the control rerun − the original, recomputed (%.2e)" % m)

# an experiment without a sweep (sweep "none"): eval only; the qk-lr analysis by the ablation's definitions
json.dump(dict(manifest, grid={"qk_norm": [True, False], "lr": [0.003, 0.03], "seeds": [0]},
               output={"json": "runs/toy-qk-lr/study.json", "runs": "runs/toy-qk-lr/runs"}), open(os.path.join(work, "toy-qk-lr.json"), "w"))
experiments["experiments"]["toy-qk-lr"] = {"studies": ["toy-qk-lr"], "sweep": "none", "track": False, "analysis": "qk-lr"}
json.dump(experiments, open(econf, "w"))
p = runner_call("toy-qk-lr")
check(p.returncode == 0, "run.py toy-qk-lr (sweep none, analysis qk-lr) exits 0 (%s)" % p.stderr.strip()[-200:])
qd = os.path.join(store, "toy-qk-lr")
qs = json.load(open(os.path.join(qd, "study.json")))
check(not [f for f in os.listdir(os.path.join(qd, "after")) if f.endswith(".sweep.json")] and
      all(os.path.exists(os.path.join(qd, "after", r["id"] + ".eval.json")) for r in qs["runs"] if r["status"] == "finished"),
      "sweep none: every finished run evaluated on the panel, none swept")
qa = json.load(open(os.path.join(store, "toy-qk-lr", "analysis.json")))
qb = {(r["qk_norm"], r["lr"]): r for r in qs["runs"]}
for row in qa["by_lr"]:
    on, off = qb[(True, row["lr"])], qb[(False, row["lr"])]
    if on["status"] == off["status"] == "finished":
        d = panel_nll(qd, off) - panel_nll(qd, on)
        check(abs(row["off_minus_on"]["mean"] - d) < 1e-12 and row["off_minus_on"]["low"] is None and row["verdict"] == "one seed: no claim",
              "qk-lr: off − on at LR %g recomputed from the eval documents, one seed: no interval, no claim" % row["lr"])
    check(row["diverged_on"] == (on["status"] != "finished") and row["diverged_off"] == (off["status"] != "finished"),
          "qk-lr: a run that did not finish counts as diverged (LR %g)" % row["lr"])
arms = {a["qk_norm"]: a for a in qs["arms"]}
check(qa["best_lr"] == {"qk_on": arms[True]["best_lr"], "qk_off": arms[False]["best_lr"]}, "qk-lr: each arm's best LR is its study's choice")
p = runner_call("nope")
check(p.returncode == 2 and "nope: not an experiment" in p.stderr, "an unknown experiment is exit 2, naming the known ones")
experiments["experiments"]["toy"]["sweep"] = "fll"
json.dump(experiments, open(econf, "w"))
p = runner_call("toy")
check(p.returncode == 2 and "/experiments/toy/sweep: expected one of /sweeps (%s), got 'fll'" % ", ".join(experiments["sweeps"]) in p.stderr,
      "an experiments file naming an unknown sweep is exit 2 naming the pointer, before anything runs")

# the compute line names every CPU the runs trained on (ablation-small's cells came from two machines;
# the line named the first study's host alone), counted from each run's train.json
sys.path.insert(0, os.path.join(root, "tools", "experiments"))
from analysis_common import Job  # noqa: E402
one = {"host": {"cpu": "AMD EPYC"}, "runs_by_cpu": {"AMD EPYC": 8}}
two = {"host": {"cpu": "Intel(R) Xeon(R) Processor"}, "runs_by_cpu": {"Intel(R) Xeon(R) Processor": 6, "AMD EPYC": 18}}
check(Job.cpu_text(one) == "AMD EPYC" and Job.cpu_text(two) == "18 runs on AMD EPYC, 6 on Intel(R) Xeon(R) Processor",
      "the compute line counts the runs on each CPU (%r)" % Job.cpu_text(two))
toy_cpus = json.load(open(os.path.join(store, "toy", "analysis.json")))["compute"]["runs_by_cpu"]
check(sum(toy_cpus.values()) == 8, "analysis.json counts every run of the toy study by its CPU (%s)" % toy_cpus)
merged_elsewhere = {"host": {"cpu": "AMD EPYC"}, "runs_by_cpu": {"Intel(R) Xeon(R) Processor": 12}}
check(Job.cpu_text(merged_elsewhere) == "Intel(R) Xeon(R) Processor",
      "runs that all trained on one CPU are named by it, not by the document's host (a merge may run elsewhere)")
toy_svg = open(os.path.join(work, "docs", "figures", "experiments", "toy.svg")).read()
check(all(c in toy_svg for c in toy_cpus), "the toy's figure names the CPU its runs' train.json record (%s)" % list(toy_cpus))
h.finish()
