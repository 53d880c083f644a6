#!/usr/bin/python3
"""`omn-audit study` against independent code, on a micro model and a generated corpus:

  check_study.py OMN_AUDIT WORKDIR

A 2-arm (QK-norm on/off) x 4-LR x 1-seed study, then:
  * every run's numbers in study.json are its own train.json's;
  * LR sensitivity (Wortsman et al. 2023), largest stable LR, best LR and the paired on/off
    differences are recomputed here from the runs' train.json files, by code written here;
  * kill -9 in the middle of a study, then --resume: the same runs, bitwise the same final weights,
    the same per-arm numbers as the uninterrupted study;
  * --shard 0/2 + --shard 1/2, then merge: the document the unsharded study wrote;
  * a tampered journal, a changed manifest on --resume, bad manifests and existing outputs end in
    exit 2 naming the place, nothing overwritten; study.json validates against its schema.
"""
import json
import math
import os
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from harness import Harness, write_corpus_config  # noqa: E402

omn, work = sys.argv[1], sys.argv[2]
h = Harness(omn, work)
check, run, env = h.check, h.run, h.env


cconf = write_corpus_config(work)
run("corpus", "--config", cconf, "--out", os.path.join(work, "data"))
base = {"schema": "omn-audit/train-config@1", "name": "micro", "corpus": "data",
        "model": {"n_layers": 2, "d_model": 32, "n_heads": 2, "n_kv_heads": 1, "head_dim": 16, "ffn_hidden": 64, "qk_norm": True},
        "optimizer": {"kind": "adamw", "lr": 0.003, "betas": [0.9, 0.95]},
        "schedule": {"warmup_steps": 4, "decay": "cosine", "min_lr_ratio": 0.1},
        "steps": 40, "batch_size": 4, "seq_len": 32, "seed": 3, "log_every": 5,
        "eval": {"every": 10, "rows": 8}, "checkpoint_every": 10, "loss_thresholds": [5.0, 4.0]}
json.dump(base, open(os.path.join(work, "micro.json"), "w"), indent=1)
LRS = [1e-3, 1e-2, 1e-1, 3.0]


def manifest(dirname, **over):
    d = os.path.join(work, dirname)
    os.makedirs(d, exist_ok=True)
    m = {"schema": "omn-audit/study-manifest@1", "description": "micro study", "base": "../micro.json",
         "grid": {"qk_norm": [True, False], "lr": LRS, "seeds": [7]},
         "output": {"json": "study.json", "csv": "study.csv", "runs": "runs"}}
    m.update(over)
    path = os.path.join(d, "study-manifest.json")
    json.dump(m, open(path, "w"), indent=1)
    return path


# --- the uninterrupted study ------------------------------------------------------------------------
m_a = manifest("a")
t0 = time.time()
p = run("study", "--manifest", m_a)
print("  (study of 8 runs: %.1f s)" % (time.time() - t0))
doc = json.load(open(os.path.join(work, "a", "study.json")))
check(doc["schema"] == "omn-audit/study@1" and len(doc["runs"]) == 8, "study: 8 runs (2 arms x 4 LRs x 1 seed)")
check("LR sensitivity" in p.stdout and "qk-off" in p.stdout, "study: prints the per-arm table")
r = subprocess.run([sys.executable, os.path.join(here, "..", "interop", "check_schema.py"),
                    os.path.join(here, "..", "..", "docs", "schema"), "study.schema.json", os.path.join(work, "a", "study.json")])
check(r.returncode == 0, "study.json validates against docs/schema/study.schema.json")
csv_rows = open(os.path.join(work, "a", "study.csv")).read().strip().split("\n")
check(len(csv_rows) == 9 and csv_rows[0].startswith("id,arm,qk_norm"), "study.csv: a header and one row per run")
check(not os.path.exists(os.path.join(work, "a", "study.json.journal")), "study: no journal left after success")

studies = os.path.join(here, "..", "..", "configs", "studies")
r = subprocess.run([sys.executable, os.path.join(here, "..", "interop", "check_schema.py"), os.path.join(here, "..", "..", "docs", "schema"),
                    "study-manifest.schema.json", m_a] + [os.path.join(studies, f) for f in sorted(os.listdir(studies))])
check(r.returncode == 0, "the test's manifest and configs/studies/*.json validate against study-manifest.schema.json")

# --- every number from the runs' own files, recomputed here ------------------------------------------
trains = {}
for run_rec in doc["runs"]:
    d = os.path.join(work, "a", run_rec["dir"])
    t = json.load(open(os.path.join(d, "train.json")))
    trains[run_rec["id"]] = t
    same = (t["final_heldout_loss"] == run_rec["final_heldout_loss"] and t["initial_loss"] == run_rec["initial_loss"]
            and t["status"] == run_rec["status"] and t["config"]["values"]["optimizer"]["lr"] == run_rec["lr"]
            and t["model"]["qk_norm"] == run_rec["qk_norm"])
    check(same, "run %s: the study records its train.json (%s, held-out %s)" % (run_rec["id"], t["status"], t["final_heldout_loss"]))
check(any(t["status"] == "diverged" for t in trains.values()), "the grid reaches a divergent LR (%d of 8 diverged)"
      % sum(t["status"] == "diverged" for t in trains.values()))
check(any(t["status"] == "finished" for t in trains.values()), "the grid has stable LRs")


def rule_says(t, log):
    """docs/train.md's divergence rules, applied to the raw log: the step the run should stop at, or None."""
    l0 = log[0]["eval"]["heldout_loss"]
    warmup = t["config"]["values"]["schedule"]["warmup_steps"]
    for rec in log[1:]:
        vals = [rec.get("train_loss"), rec.get("grad_norm")]
        if any(v is None or not math.isfinite(v) for v in vals):
            return rec["step"]
        if "eval" in rec and rec["step"] > warmup:
            h = rec["eval"]["heldout_loss"]
            if h is None or h > l0:
                return rec["step"]
    return None


for rid, t in trains.items():
    log = [json.loads(x) for x in open(os.path.join(work, "a", next(r["dir"] for r in doc["runs"] if r["id"] == rid), "log.jsonl"))]
    want = rule_says(t, log)
    got = t["divergence"]["step"] if t["diverged"] else None
    check(log[0]["step"] == 0 and t["initial_loss"] == log[0]["eval"]["heldout_loss"] and want == got,
          "run %s: L0 is the held-out loss at step 0 (%.4f); the divergence rules on the raw log say %s, the run says %s"
          % (rid, t["initial_loss"], want, got))


def independent_arm(qk):
    ts = sorted([t for t in trains.values() if t["model"]["qk_norm"] == qk], key=lambda t: t["config"]["values"]["optimizer"]["lr"])
    capped, stable_lrs, best = [], [], None
    for t in ts:
        lr, l0 = t["config"]["values"]["optimizer"]["lr"], t["initial_loss"]
        loss = t["final_heldout_loss"]
        ok = t["status"] == "finished" and loss is not None and loss < l0
        capped.append(l0 if t["status"] == "diverged" or loss is None else min(loss, l0))
        if ok:
            stable_lrs.append(lr)
            if best is None or loss < best[1]:
                best = (lr, loss)
    sens = sum(capped) / len(capped) - min(capped)
    return sens, (max(stable_lrs) if stable_lrs else None), best


for arm in doc["arms"]:
    sens, largest, best = independent_arm(arm["qk_norm"])
    check(math.isclose(arm["lr_sensitivity"], sens, rel_tol=0, abs_tol=1e-12),
          "%s: LR sensitivity %.6f = mean(min(L, L0)) - min L recomputed here (%.6f)" % (arm["arm"], arm["lr_sensitivity"], sens))
    check(arm["largest_stable_lr"] == largest, "%s: largest stable LR %s recomputed here (%s)" % (arm["arm"], arm["largest_stable_lr"], largest))
    check(best is not None and arm["best_lr"] == best[0] and math.isclose(arm["best_loss"], best[1], abs_tol=1e-12),
          "%s: best LR %s, loss %s recomputed here" % (arm["arm"], arm["best_lr"], arm["best_loss"]))
cmp = doc["comparison"][0]
ok = cmp["on"] == "qk-on" and cmp["off"] == "qk-off"
for row in cmp["per_lr"]:
    on = [t for t in trains.values() if t["model"]["qk_norm"] and t["config"]["values"]["optimizer"]["lr"] == row["lr"]][0]
    off = [t for t in trains.values() if not t["model"]["qk_norm"] and t["config"]["values"]["optimizer"]["lr"] == row["lr"]][0]
    both = on["status"] == "finished" and off["status"] == "finished"
    want = on["final_heldout_loss"] - off["final_heldout_loss"] if both else None
    got = row["difference"]["mean"]
    ok = ok and (got == want if want is None else math.isclose(got, want, abs_tol=1e-12))
check(ok, "comparison: the paired on - off difference at every LR recomputed here")

# --- kill -9 in the middle of a run, then --resume ------------------------------------------------------
# longer runs, so that the kill lands in a run after its checkpoint at step 30 and before its end
long_grid = {"qk_norm": [True], "lr": [1e-2, 3e-2], "seeds": [7]}
long_set = {"steps": 120}
m_ref = manifest("b-ref", grid=long_grid, set=long_set)
run("study", "--manifest", m_ref)
doc_ref = json.load(open(os.path.join(work, "b-ref", "study.json")))
m_b = manifest("b", grid=long_grid, set=long_set)
journal = os.path.join(work, "b", "study.json.journal")
second = os.path.join(work, "b", "runs", "qk-on_lr-3.000e-02_seed-7")
proc = subprocess.Popen([omn, "study", "--manifest", m_b], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
deadline = time.time() + 120
while time.time() < deadline and not os.path.exists(os.path.join(second, "checkpoints", "step-000030.pt")):
    time.sleep(0.005)
proc.send_signal(signal.SIGKILL)
proc.wait()
in_flight = json.load(open(os.path.join(second, "train.json")))
lines = open(journal).read().count("\n")
check(lines == 2 and in_flight["status"] == "running" and in_flight["last_checkpoint_step"] >= 10,
      "killed mid-run: 1 of 2 runs journaled, the second running with a checkpoint at step %s" % in_flight["last_checkpoint_step"])
r = run("study", "--manifest", m_b, expect=2)
check("--resume" in r.stderr, "a journal left by a kill is not ignored: exit 2 asks for --resume")
r = run("study", "--manifest", m_b, "--resume")
check("(its run resumed)" in r.stderr and "resumed at step" in r.stderr, "--resume continues the run in flight from its checkpoint")
doc_b = json.load(open(os.path.join(work, "b", "study.json")))


def essence(d):
    runs = [{k: v for k, v in x.items() if k not in ("seconds", "dir", "train_json_sha256")} for x in d["runs"]]
    return runs, d["arms"], d["comparison"]


check(essence(doc_b) == essence(doc_ref), "kill -9 + --resume: the same runs (final weights bitwise), arms and comparison as uninterrupted")

# SIGTERM (as SIGINT) in the same place: the run in flight stops between two steps, exit 130 with the
# way to continue; --resume then gives the uninterrupted study
m_t = manifest("b-term", grid=long_grid, set=long_set)
second_t = os.path.join(work, "b-term", "runs", "qk-on_lr-3.000e-02_seed-7")
proc = subprocess.Popen([omn, "study", "--manifest", m_t], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
deadline = time.time() + 120
while time.time() < deadline and not os.path.exists(os.path.join(second_t, "checkpoints", "step-000030.pt")):
    time.sleep(0.005)
proc.send_signal(signal.SIGTERM)
err = proc.communicate()[1]
check(proc.returncode == 130 and "rerun the study with --resume" in err,
      "SIGTERM in a study: exit 130 with the way to continue (exit %d: %s)" % (proc.returncode, err.strip()[-160:]))
run("study", "--manifest", m_t, "--resume")
check(essence(json.load(open(os.path.join(work, "b-term", "study.json")))) == essence(doc_ref),
      "SIGTERM + --resume: the same runs (final weights bitwise), arms and comparison as uninterrupted")

# --- shards and merge -------------------------------------------------------------------------------
m_c = manifest("c")
run("study", "--manifest", m_c, "--shard", "0/2", "-o", os.path.join(work, "c", "s0.json"))
run("study", "--manifest", m_c, "--shard", "1/2", "-o", os.path.join(work, "c", "s1.json"))
s0 = json.load(open(os.path.join(work, "c", "s0.json")))
check(len(s0["runs"]) == 4 and s0["shard"] == {"index": 0, "count": 2}, "--shard 0/2: cells 0, 2, 4, 6")
os.makedirs(os.path.join(work, "elsewhere"))
merged_path = os.path.join(work, "elsewhere", "merged.json")
run("merge", "-o", merged_path, os.path.join(work, "c", "s0.json"), os.path.join(work, "c", "s1.json"))
merged = json.load(open(merged_path))
check(essence(merged) == essence(doc), "merge of two shards: the unsharded study's runs, arms and comparison")
check(all(os.path.exists(os.path.join(work, "elsewhere", x["dir"], "train.json")) for x in merged["runs"]),
      "merge: every run's directory is rebased to where the merged document is written")
s1 = json.load(open(os.path.join(work, "c", "s1.json")))
s1["runs"][0]["lr"] = 0.5
json.dump(s1, open(os.path.join(work, "c", "s1-bad.json"), "w"))
r = run("merge", "-o", os.path.join(work, "c", "m3.json"), os.path.join(work, "c", "s0.json"), os.path.join(work, "c", "s1-bad.json"), expect=2)
check("/runs/0" in r.stderr and "not a cell of /grid" in r.stderr, "merge: a run that is not a cell of the grid is refused, naming it")
r = run("merge", "-o", os.path.join(work, "c", "m4.json"), "--csv", os.path.join(work, "c", "m4.json"),
        os.path.join(work, "c", "s0.json"), os.path.join(work, "c", "s1.json"), expect=2)
check("same file" in r.stderr, "merge: -o and --csv naming one file is refused")
r = run("study", "--manifest", m_c, "-o", os.path.join(work, "c", "x.json"), "--csv", os.path.join(work, "c", "x.json"), expect=2)
check("same file" in r.stderr, "study: -o and --csv naming one file is refused")
# inconsistent study documents: a run whose qk_norm is not its arm's, trajectories of unequal length
os.makedirs(os.path.join(work, "c", "figs-incons"), exist_ok=True)
for what, edit, ptr in (("qk_norm of another arm", lambda d: d["runs"][0].update(qk_norm=not d["runs"][0]["qk_norm"]), "/runs/0/qk_norm"),
                        ("a held-out series one short", lambda d: d["runs"][0]["trajectory"]["eval"]["heldout_loss"].pop(),
                         "/runs/0/trajectory/eval/heldout_loss")):
    bad = json.load(open(os.path.join(work, "c", "s1.json")))
    edit(bad)
    json.dump(bad, open(os.path.join(work, "c", "s1-incons.json"), "w"))
    r1 = run("merge", "-o", os.path.join(work, "c", "m5.json"), os.path.join(work, "c", "s0.json"), os.path.join(work, "c", "s1-incons.json"), expect=2)
    r2 = run("plot", os.path.join(work, "c", "s1-incons.json"), "-o", os.path.join(work, "c", "figs-incons"), expect=2)
    check(ptr in r1.stderr and ptr in r2.stderr, "merge and plot refuse a study document with %s, naming %s" % (what, ptr))
r = run("merge", "-o", os.path.join(work, "c", "m2.json"), os.path.join(work, "c", "s0.json"), os.path.join(work, "c", "s0.json"), expect=2)
check("duplicate" in r.stderr, "merge: the same shard twice is refused")
r = run("study", "--manifest", m_c, "--shard", "1x/2y", expect=2)
check("expected i/N" in r.stderr, "--shard 1x/2y is refused, not read as 1/2")
# a grid past the cap (10,000 runs) is refused at /grid before anything is expanded or trained
m_big = manifest("big", grid={"qk_norm": [True, False], "lr": {"from": 1e-4, "to": 1.0, "points": 1000}, "seeds": list(range(6))})
t0 = time.time()
r = run("study", "--manifest", m_big, expect=2)
check("/grid" in r.stderr and "12000 cells" in r.stderr and not os.path.exists(os.path.join(work, "big", "runs")),
      "a 12,000-cell grid: exit 2 naming /grid in %.1f s, nothing run (%s)" % (time.time() - t0, r.stderr.strip()[-100:]))

# one output rule: no output over an input reached through the configs, nor inside the runs directory
corpus_json = os.path.join(work, "data", "corpus.json")
before = open(corpus_json, "rb").read()
r = run("study", "--manifest", m_a, "-o", corpus_json, "--force", expect=2)
check("is the input" in r.stderr and open(corpus_json, "rb").read() == before,
      "study -o data/corpus.json --force: exit 2, the corpus left as it was (%s)" % r.stderr.strip()[-80:])
a_run = os.path.join(work, "a", doc["runs"][0]["dir"], "train.json")
before = open(a_run, "rb").read()
r = run("study", "--manifest", m_a, "-o", a_run, "--force", expect=2)
check("runs directory" in r.stderr and open(a_run, "rb").read() == before, "study -o RUN/train.json --force: exit 2, the run's record kept")
r = run("study", "--manifest", m_a, "-o", os.path.join(work, "a", "runs"), "--csv", os.path.join(work, "a", "x.csv"), expect=2)
check(r.returncode == 2 and not os.path.exists(os.path.join(work, "a", "x.csv")), "study -o RUNS_DIR: exit 2 before any run")

# --- integrity and bad input ------------------------------------------------------------------------
m_d = manifest("d", grid={"qk_norm": [True], "lr": [1e-3, 1e-2], "seeds": [1]})
proc = subprocess.Popen([omn, "study", "--manifest", m_d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
jd = os.path.join(work, "d", "study.json.journal")
while time.time() < deadline + 60 and not (os.path.exists(jd) and open(jd).read().count("\n") >= 2):
    time.sleep(0.05)
proc.send_signal(signal.SIGKILL)
proc.wait()
text = open(jd).read()
lines = text.split("\n")
rec = json.loads(lines[1])
rec["final_heldout_loss"] = 0.001
lines[1] = json.dumps(rec)
open(jd, "w").write("\n".join(lines) + '{"torn')
r = run("study", "--manifest", m_d, "--resume", expect=2)
check("line 2: checksum mismatch" in r.stderr, "a doctored journal record is refused (checksum), not trusted")
open(jd, "w").write(text + '{"torn')
m = json.load(open(m_d))
m["description"] = "changed"
json.dump(m, open(m_d, "w"))
r = run("study", "--manifest", m_d, "--resume", expect=2)
check("manifest_sha256 was" in r.stderr, "--resume with a changed manifest is refused and says what changed")
m["description"] = "micro study"
json.dump(m, open(m_d, "w"), indent=1)
run("study", "--manifest", m_d, "--resume")
check(len(json.load(open(os.path.join(work, "d", "study.json")))["runs"]) == 2, "a torn journal tail is cut and the study resumes")

before = open(os.path.join(work, "a", "study.json"), "rb").read()
r = run("study", "--manifest", m_a, expect=2)
check("exists" in r.stderr and open(os.path.join(work, "a", "study.json"), "rb").read() == before,
      "an existing study.json is not overwritten without --force")


def bad(over, want):
    path = manifest("bad", **over)
    r = run("study", "--manifest", path, expect=2)
    check(want in r.stderr, "bad manifest -> exit 2: %s" % want)


bad({"colour": 1}, "/colour: unknown key")
bad({"grid": {"qk_norm": [True], "lr": {"from": 1e-2, "to": 1e-3, "points": 4}}}, "/grid/lr/to: expected to >= from")
bad({"grid": {"qk_norm": [True], "lr": [1e-3, 1e-3]}}, "/grid/lr: a learning rate appears twice")
bad({"grid": {"qk_norm": [True], "lr": [1e-3], "seeds": [2 ** 70]}}, "/grid/seeds/0")
bad({"grid": {"qk_norm": [True], "lr": [1e-3], "n_layers": [0]}}, "/grid/n_layers/0")
bad({"set": {"steps": -1}}, "/steps")
bad({"base": "missing.json"}, "missing.json")

# --- track: the checkpoints of one run, equal to profile on each, statistic by statistic -------------
run_dir = os.path.join(work, "a", doc["runs"][0]["dir"])
track_json = os.path.join(work, "track.json")
run("track", run_dir, "--json", track_json, "--csv", os.path.join(work, "track.csv"))
tr = json.load(open(track_json))
steps = [c["step"] for c in tr["checkpoints"]]
tr2 = json.loads(run("track", run_dir, os.path.join(run_dir, "final.pt"), "--json", os.path.join(work, "track2.json")).stdout and
                 open(os.path.join(work, "track2.json")).read())
check(len(tr2["checkpoints"]) == len(steps), "track: a file named twice (a directory and one of its files) is tracked once")
check(steps == sorted(steps) and steps[0] == 0 and steps[-1] == base["steps"] and len(steps) == 5,
      "track: a run directory's checkpoints ordered by the step in their metadata (%s)" % steps)
r = subprocess.run([sys.executable, os.path.join(here, "..", "interop", "check_schema.py"),
                    os.path.join(here, "..", "..", "docs", "schema"), "track.schema.json", track_json])
check(r.returncode == 0, "track.json validates against docs/schema/track.schema.json")
same = True
for c in tr["checkpoints"]:
    pj = os.path.join(work, "p.json")
    run("profile", c["path"], "--json", pj, "--force", "--no-tables")
    p = json.load(open(pj))
    same = same and p["statistics"] == c["statistics"] and c["sha256"] == p["checkpoint"]["sha256"] and c["sha256_verified"]
    for lt, lp in zip(c["layers"], p["layers"]):
        for role in ("q", "k"):
            same = same and all(lt[role][k] == lp[role][k] for k in ("mean", "std", "min", "max"))
check(same, "track RUN = profile on each checkpoint, statistic by statistic, each verified against the run's train.json")
files = [c["path"] for c in tr["checkpoints"]]
tf = json.loads(run("track", *files, "--json", "-").stdout)
check([c["statistics"] for c in tf["checkpoints"]] == [c["statistics"] for c in tr["checkpoints"]] and
      all(c["sha256"] is None and not c["sha256_verified"] for c in tf["checkpoints"]),
      "track FILES (no train.json named): the same statistics, read without hashing")
csv_lines = open(os.path.join(work, "track.csv")).read().strip().split("\n")
check(len(csv_lines) == 1 + 5 * base["model"]["n_layers"] * 2, "track.csv: one row per checkpoint, layer and role")
final = os.path.join(run_dir, "final.pt")
sums = os.path.join(work, "sums.txt")
digest = subprocess.run(["sha256sum", final], capture_output=True, text=True).stdout
open(sums, "w").write(digest)
r = run("track", run_dir, "--digests", sums, "--json", os.path.join(work, "track-v.json"))
tv = json.load(open(os.path.join(work, "track-v.json")))
check(tv["summary"]["verified"] == len(steps) and tv["checkpoints"][-1]["sha256"] == digest[:64],
      "track RUN --digests: the listed checkpoint verified against the list, the others against train.json")
open(sums, "w").write("0" * 64 + "  " + final + "\n")
r = run("track", run_dir, "--digests", sums, expect=4)
check("SHA-256 mismatch" in r.stderr, "track --digests: a mismatch is exit 4")
open(sums, "w").write(digest.replace(final, final + ".missing"))
r = run("track", run_dir, "--digests", sums, expect=2)
check("is not one of the checkpoints" in r.stderr, "track --digests: a listed file that is not tracked is an error, not silently unverified")
r = run("track", run_dir, "--json", track_json, expect=2)
check("exists" in r.stderr, "track: an existing --json is not overwritten without --force")
r = run("track", os.path.join(work, "text"), expect=2)
check("no checkpoint files" in r.stderr, "track: a directory without checkpoints is an error")
pj = os.path.join(work, "p.json")
run("profile", os.path.join(run_dir, "checkpoints", "step-000010.pt"), "--json", pj, "--force", "--no-tables")
r = run("track", run_dir, "--baseline", pj, expect=3)
check("DRIFT: 4 checkpoint(s)" in r.stderr and "DRIFT:" not in r.stdout, "track --baseline: the steps that drifted from step 10's profile are flagged, exit 3, the verdict on stderr")
run("plot", track_json, "-o", os.path.join(work, "track-fig"))
check(all(os.path.exists(os.path.join(work, "track-fig", f)) for f in ("track-heatmap-q.svg", "track-heatmap-k.svg", "track-layer-means.svg")),
      "plot of a track: the Q and K heatmaps and the per-layer lines")
run("plot", os.path.join(work, "a", "study.json"), "-o", os.path.join(work, "study-fig"))
check(all(os.path.exists(os.path.join(work, "study-fig", f)) for f in ("study-loss-vs-lr.svg", "study-train-loss.svg", "study-max-logit.svg")),
      "plot of a study: loss vs LR and the trajectories")

first_id = doc["runs"][0]["id"]
run("plot", os.path.join(work, "a", "study.json"), "-o", os.path.join(work, "study-fig-runs"), "--runs", first_id)
svg = open(os.path.join(work, "study-fig-runs", "study-train-loss.svg")).read()
check(svg.count('class="run"') == 1, "plot --runs: the trajectories of exactly the runs chosen")
r = run("plot", os.path.join(work, "a", "study.json"), "-o", os.path.join(work, "study-fig-bad"), "--runs", "no-such-run", expect=2)
check("no-such-run" in r.stderr, "plot --runs with an unknown id: exit 2 naming it")
run("report", os.path.join(work, "a", "study.json"), "-o", os.path.join(work, "study-report.html"))
html = open(os.path.join(work, "study-report.html")).read()
check("Study: arms" in html and html.count("<svg") >= 4 and "omn-audit/study-manifest@1" in html,
      "report of a study: the arms, the paired comparison, the figures, the manifest's exact bytes")

h.finish()
