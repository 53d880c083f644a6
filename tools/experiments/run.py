#!/usr/bin/python3
"""Runs issue 29's experiments (configs/experiments.json), called by tools/run-experiments.sh:

  run.py [EXPERIMENT ...]        every experiment in the file's order, or the named ones

Each experiment: its studies (`omn-audit study`, journaled: an interrupted one continues with
--resume), then what runs on the trained models (after_training.py: the held-out panel, eval, the
post-training sweep, track), then its analysis (analyse.py: the table and the figure). Every step is
skipped when its output exists, so rerunning after any interruption continues where it stopped.

A study runs on the frozen build it started on: STUDY_DIR/BUILD names a commit of runs/builds/
(tools/run-experiments.sh --freeze), since its journal pins the model-code fingerprint. A new study
takes runs/builds/CURRENT. Its after-training is pinned the same way (STUDY_DIR/after/BUILD: an
interrupted sweep's journal pins the build too) and verifies every checkpoint by its digest. Environment: OMN_EXPERIMENT_THREADS (1), OMN_SHARD=i/N (the study step only, one shard;
merge the shards with `omn-audit merge`, then rerun without OMN_SHARD).
"""
import json
import os
import platform
import subprocess
import sys
import time

def fail(msg):
    """Bad input or a missing build: the message on stderr, exit 2 (as omn-audit's usage errors)."""
    print(msg, file=sys.stderr)
    sys.exit(2)


root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
os.chdir(root)
# another experiments file (its studies are manifests beside it) and another folder for the builds,
# the log and the compute journal: for tests/parity/check_experiments.py
conf_path = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_CONFIG", "configs/experiments.json"))
try:
    conf = json.load(open(conf_path))
except (OSError, ValueError) as e:
    fail("run-experiments: %s: %s" % (conf_path, e))
for _name, _e in conf.get("experiments", {}).items():  # checked before anything runs
    for _key, _ok in (("studies", isinstance(_e.get("studies"), list) and _e["studies"]),
                      ("sweep", _e.get("sweep") in conf.get("sweeps", {})),
                      ("analysis", _e.get("analysis") in ("ablation", "routing", "depth")),
                      ("track", isinstance(_e.get("track"), bool))):
        if not _ok:
            fail("run-experiments: %s: /experiments/%s/%s: expected %s, got %r" % (
                conf_path, _name, _key, {"studies": "a list of manifest names", "sweep": "one of /sweeps (%s)" % ", ".join(conf.get("sweeps", {})),
                                         "analysis": "ablation, routing or depth", "track": "true or false"}[_key], _e.get(_key)))
runs_root = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_RUNS", "runs"))
threads = os.environ.get("OMN_EXPERIMENT_THREADS", "1")
shard = os.environ.get("OMN_SHARD", "")
log_path = os.path.join(runs_root, "experiments.log")
# `nice` alone does not yield to other sessions where the kernel groups tasks by session (autogroup,
# the default on Debian): a study started with setsid then takes a whole core from a build started
# elsewhere. Lowering the group too makes the experiments use only idle time; only when the runner
# leads its own session (`setsid tools/run-experiments.sh`), since the group is the whole session's.
if os.getsid(0) == os.getpid():
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass
os.makedirs(runs_root, exist_ok=True)


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def note(msg):
    with open(log_path, "a") as f:
        f.write("%s %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), msg))


def account(experiment, step, seconds, build, rc):
    """One line per step and invocation in runs/experiments.jsonl: the compute each took."""
    with open(os.path.join(runs_root, "experiments.jsonl"), "a") as f:
        f.write(json.dumps({"experiment": experiment, "step": step, "seconds": round(seconds, 1), "rc": rc,
                            "build": build, "threads": int(threads), "cpu": cpu(), "cores": os.cpu_count(),
                            "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")


def build_dir(commit):
    d = os.path.join(runs_root, "builds", commit)
    if not os.path.isfile(os.path.join(d, "omn-audit")):
        fail("run-experiments: %s has no omn-audit: tools/run-experiments.sh --freeze %s" % (d, commit))
    return d


def current():
    try:
        return open(os.path.join(runs_root, "builds", "CURRENT")).read().strip()
    except FileNotFoundError:
        fail("run-experiments: no frozen build: tools/run-experiments.sh --freeze")


def step(experiment, name, build, cmd):
    note("%s: %s: start %s" % (experiment, name, " ".join(cmd)))
    start = time.time()
    with open(log_path, "a") as logf:
        rc = subprocess.run(["nice", "-n", "19", *cmd], stdout=logf, stderr=subprocess.STDOUT).returncode
    account(experiment, name, time.time() - start, build, rc)
    if rc != 0:
        note("%s: %s: exit %d; rerun tools/run-experiments.sh %s to continue" % (experiment, name, rc, experiment))
        sys.exit(rc)
    note("%s: %s: done in %.0f s" % (experiment, name, time.time() - start))


def study_output(name):
    manifest = os.path.join(os.path.dirname(conf_path), conf.get("manifests", "."), name + ".json")
    if not os.path.isfile(manifest):
        fail("run-experiments: %s: no such manifest" % manifest)
    out = os.path.normpath(os.path.join(os.path.dirname(manifest), json.load(open(manifest))["output"]["json"]))
    return manifest, out


def pinned(pin, started):
    """The build a study (or its after-training) runs on: the one recorded in `pin` once the work has
    started (`started`: a journal or an output exists), else CURRENT, recorded now (atomically)."""
    if started and os.path.exists(pin):
        commit = open(pin).read().strip()
        build_dir(commit)
        return commit
    commit = current()
    build_dir(commit)
    with open(pin + ".tmp", "w") as f:
        f.write(commit + "\n")
    os.replace(pin + ".tmp", pin)
    return commit


def run_study(experiment, name):
    manifest, out = study_output(name)
    sdir = os.path.dirname(out)
    if shard:
        out = "%s.shard-%s.json" % (out[:-5], shard.split("/")[0])
    if os.path.exists(out) and not os.path.exists(out + ".journal"):
        return out
    os.makedirs(sdir, exist_ok=True)
    commit = pinned(os.path.join(sdir, "BUILD"), os.path.exists(out + ".journal"))
    omn = os.path.join(build_dir(commit), "omn-audit")
    args = [omn, "study", "--manifest", manifest, "--threads", threads]
    if shard:
        args += ["--shard", shard, "-o", out]
    if os.path.exists(out + ".journal"):
        args.append("--resume")
    step(experiment, "study " + name, commit, args)
    return out


def main():
    names = sys.argv[1:] or list(conf["experiments"])
    for n in names:
        if n not in conf["experiments"]:
            fail("run-experiments: %s: not an experiment of configs/experiments.json (%s)"
                     % (n, ", ".join(conf["experiments"])))
    if "OMN_EXPERIMENTS_CONFIG" not in os.environ and not os.path.isfile("data/sotu/corpus.json"):  # the corpus every config names
        omn = os.path.join(build_dir(current()), "omn-audit")
        subprocess.run(["bash", "tools/fetch-corpus.sh"], check=True)
        subprocess.run([omn, "corpus", "--config", "configs/corpus/sotu.json", "--out", "data/sotu"], check=True)
    for n in names:
        e = conf["experiments"][n]
        outs = [run_study(n, s) for s in e["studies"]]
        if shard:
            note("%s: shard %s done; merge the shards, then rerun without OMN_SHARD" % (n, shard))
            continue
        for s, out in zip(e["studies"], outs):
            after = os.path.join(os.path.dirname(out), "after")
            if os.path.exists(os.path.join(after, "DONE")):
                continue
            os.makedirs(after, exist_ok=True)
            # pinned like a study: an interrupted sweep's journal is continued only by the build that began it
            commit = pinned(os.path.join(after, "BUILD"), len(os.listdir(after)) > 1)
            omn = os.path.join(build_dir(commit), "omn-audit")
            step(n, "after-training " + s, commit, ["/usr/bin/python3", "tools/experiments/after_training.py", omn, out,
                                                    e["sweep"], "1" if e["track"] else "0", threads])
        step(n, "analysis", "-", ["/usr/bin/python3", "tools/experiments/analyse.py", e["analysis"], n, *outs])
    note("experiments %s: done" % ", ".join(names))


main()
