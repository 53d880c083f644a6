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
"""
import calendar
import fcntl
import json
import math
import os
import platform
import shutil
import stat
import statistics
import subprocess
import sys
import time


def safe(text, limit=1000):
    """Text as printed on a terminal: control characters (ESC, BEL, C1) escaped, cut at `limit`
    characters (a results/STUDY/BUILD or an environment value may hold anything)."""
    text = "".join("\\x%02x" % ord(c) if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 else c for c in str(text))
    return text if len(text) <= limit else text[:limit] + "... (%d more characters)" % (len(text) - limit)


def fail(msg, code=2):
    """Bad input, a missing build or a failed step: one line on stderr, exit 2 (as omn-audit's usage errors)."""
    print(safe(msg), file=sys.stderr)
    sys.exit(code)


def load_json(path, what):
    """A JSON file the runner reads; what is wrong with it is exit 2 naming it, never a traceback."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        fail("run-experiments: %s: %s is not readable JSON: %s" % (path, what, e))


def need(doc, path, pointer, kind, what):
    """doc at JSON pointer `pointer` (of the file `path`), which must be a `kind`; exit 2 naming both."""
    v = doc
    for key in pointer.strip("/").split("/"):
        v = v.get(key) if isinstance(v, dict) else None
    if not isinstance(v, kind):
        fail("run-experiments: %s: %s: expected %s, got %s" % (path, pointer, what, "nothing" if v is None else type(v).__name__))
    return v


ANALYSES = ("ablation", "routing", "depth", "regime", "qk-lr")  # analyse.py's kinds
EQUIVALENCE_MEASURES = ("removal_minus_training_without", "off_minus_on")  # analysis_ablation.equivalence


def equivalence_ok(q):
    """an ablation's pre-registered equivalence test (analysis_ablation.equivalence reads it)"""
    return (isinstance(q, dict) and q.get("measure") in EQUIVALENCE_MEASURES
            and all(m in EQUIVALENCE_MEASURES for m in q.get("secondary", [])) and isinstance(q.get("stated"), str) and q["stated"]
            and isinstance(q.get("margin"), (int, float)) and not isinstance(q.get("margin"), bool) and math.isfinite(q["margin"])
            and q["margin"] > 0 and q.get("alpha") == 0.05 and isinstance(q.get("seeds"), list)
            and all(type(x) is int and x >= 0 for x in q["seeds"])
            and isinstance(q.get("studies"), list) and all(isinstance(x, str) and x for x in q["studies"]))
root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
os.chdir(root)
conf_path = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_CONFIG", "configs/experiments.json"))
conf = load_json(conf_path, "the experiments file")
need(conf, conf_path, "/experiments", dict, "an object of experiments by name")
for _name, _e in conf["experiments"].items():  # checked before anything runs
    need(conf, conf_path, "/experiments/" + _name, dict, "an object")
    for _key, _ok in (("studies", isinstance(_e.get("studies"), list) and _e["studies"]),
                      ("sweep", _e.get("sweep") in conf.get("sweeps", {})),
                      ("analysis", _e.get("analysis") in ANALYSES),
                      ("panel", isinstance(_e.get("panel", {}), dict) and all(k in ("rows", "tokens") and isinstance(v, int) and v > 0
                                                                             for k, v in _e.get("panel", {}).items())),
                      ("track", isinstance(_e.get("track"), bool)),
                      ("openblas_coretype", isinstance(_e.get("openblas_coretype", {}), dict) and all(
                          k in _e.get("studies", []) and isinstance(v, str) and v.isalnum()
                          for k, v in _e.get("openblas_coretype", {}).items())),
                      ("compare_with", "compare_with" not in _e or (_e["compare_with"] != _name and conf["experiments"].get(
                          _e["compare_with"], {}).get("analysis") == _e.get("analysis"))),
                      ("equivalence", "equivalence" not in _e or equivalence_ok(_e["equivalence"]))):
        if not _ok:
            fail("run-experiments: %s: /experiments/%s/%s: expected %s, got %r" % (
                conf_path, _name, _key, {"studies": "a list of manifest names", "sweep": "one of /sweeps (%s)" % ", ".join(conf.get("sweeps", {})),
                                         "analysis": ", ".join(ANALYSES), "track": "true or false",
                                         "panel": "an object of rows or tokens (positive integers)",
                                         "openblas_coretype": "an object of OpenBLAS core types (Haswell, SkylakeX) by study of the experiment",
                                         "compare_with": "another experiment of the same analysis",
                                         "equivalence": "an object with stated (when, in words), measure and optional secondary (of %s), "
                                                        "a finite margin > 0, alpha 0.05, seeds (integers >= 0) and studies (manifest names)"
                                                        % ", ".join(EQUIVALENCE_MEASURES)}[_key],
                _e.get(_key)))
runs_root = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_RUNS", "runs"))
store_root = os.path.abspath(os.environ.get("OMN_EXPERIMENTS_STORE", "results"))
threads = os.environ.get("OMN_EXPERIMENT_THREADS", "1")
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
deadline = None
if os.environ.get("OMN_EXPERIMENTS_DEADLINE"):
    try:
        deadline = calendar.timegm(time.strptime(os.environ["OMN_EXPERIMENTS_DEADLINE"], "%Y-%m-%dT%H:%MZ"))
    except ValueError:
        fail("run-experiments: OMN_EXPERIMENTS_DEADLINE=%s: expected a UTC time like 2026-12-02T20:00Z"
             % os.environ["OMN_EXPERIMENTS_DEADLINE"])
os.makedirs(runs_root, exist_ok=True)
os.makedirs(store_root, exist_ok=True)


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def note(msg):
    with open(log_path, "a") as f:
        f.write("%s [%d] %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), os.getpid(), msg))


def account(experiment, step, seconds, build, rc, where=None):
    """One line per step in results/compute.jsonl (tracked): the compute each step took, where. A step
    cut off by a session's end (rc None, "interrupted": true) is accounted by the next lane from its
    segment's marker (cut_segments), with the CPU and time its marker recorded."""
    line = dict({"experiment": experiment, "step": step, "seconds": round(seconds, 1), "rc": rc, "build": build,
                 "threads": int(threads), "cpu": cpu(), "cores": os.cpu_count(),
                 "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, **(where or {}))
    with open(os.path.join(store_root, "compute.jsonl"), "a") as f:  # one write: lanes append whole lines
        f.write(json.dumps(line) + "\n")


# A running step's marker, runs/segments/PID-NS.json: what it is and when it started, locked by its lane
# and touched every HEARTBEAT seconds while the step runs. A lane killed with its session (a machine's
# stop ends every process; runs/ may outlive it) leaves its marker unlocked, and the next lane accounts
# the step from its start to its last heartbeat: every segment of a resumed run is counted.
segments_dir = os.path.join(runs_root, "segments")
try:
    HEARTBEAT = float(os.environ.get("OMN_EXPERIMENTS_HEARTBEAT", "60"))
except ValueError:
    HEARTBEAT = float("nan")
if not 0 < HEARTBEAT <= 3600:  # (NaN too)
    fail("run-experiments: OMN_EXPERIMENTS_HEARTBEAT=%s: expected seconds between a running step's heartbeats, "
         "a number > 0 and <= 3600" % os.environ.get("OMN_EXPERIMENTS_HEARTBEAT"))


def begin_segment(experiment, name, build):
    """The step's marker, written under a temporary name and locked before it is renamed into place (a
    lane sweeping markers never sees it unlocked); returns (path, open file holding the lock)."""
    os.makedirs(segments_dir, exist_ok=True)
    path = os.path.join(segments_dir, "%d-%d.json" % (os.getpid(), time.time_ns()))
    f = open(path + ".tmp", "w")
    fcntl.flock(f, fcntl.LOCK_EX)
    f.write(json.dumps({"experiment": experiment, "step": name, "build": build, "start": time.time(), "threads": int(threads),
                        "cpu": cpu(), "cores": os.cpu_count()}))
    f.flush()
    os.rename(path + ".tmp", path)
    return path, f


def end_segment(seg):
    path, f = seg
    os.unlink(path)
    f.close()


MAX_STEP_SECONDS = 7 * 24 * 3600  # a marker claiming a longer step is no step of a session


def marker_step(m, mtime):
    """(experiment, step, build, seconds, where) of a marker's JSON, or None where it is no step's marker
    (a field of another type, a start after its last heartbeat or a week before it)"""
    if not isinstance(m, dict) or not all(isinstance(m.get(k), str) and m[k] for k in ("experiment", "step", "build")):
        return None
    start = m.get("start")
    if not isinstance(start, (int, float)) or isinstance(start, bool) or not math.isfinite(start):
        return None
    seconds = mtime - start
    if not 0 <= seconds <= MAX_STEP_SECONDS:
        return None
    where = {"interrupted": True, "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))}
    for k in ("cpu", "cores", "threads"):  # the killed lane's machine, not this one
        if isinstance(m.get(k), (str, int)) and not isinstance(m.get(k), bool):
            where[k] = m[k]
    return m["experiment"], m["step"], m["build"], seconds, where


def cut_segments():
    """Account each step a killed lane left: every marker no live lane (nor the step's own process, which
    inherits the lock) holds, from its start to its last heartbeat (the marker's mtime), as an
    interrupted line of results/compute.jsonl. The marker is removed before its line is written: a lane
    killed between the two loses the line rather than doubling it."""
    names = sorted(os.listdir(segments_dir)) if os.path.isdir(segments_dir) else []
    for fn in names:
        path = os.path.join(segments_dir, fn)
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                continue  # a folder, FIFO or link is no marker: left alone (a FIFO would block open)
            if fn.endswith(".tmp") and time.time() - st.st_mtime > 3600:
                os.unlink(path)  # a lane killed between writing and renaming its marker: the step never started
                continue
        except FileNotFoundError:
            continue  # renamed into place, or accounted, by another lane meanwhile
        if not fn.endswith(".json"):
            continue
        try:
            f = open(path)
        except OSError:
            continue  # gone (another lane accounted it) or unreadable: left alone
        with f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live lane's step
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue  # accounted and removed by another lane while this one waited for the lock
            if st.st_ino != os.fstat(f.fileno()).st_ino:
                continue
            try:
                m = json.loads(f.read())
            except (ValueError, UnicodeDecodeError):
                m = None
            got = marker_step(m, st.st_mtime)
            os.unlink(path)
            if got is None:
                note("runs/segments/%s: not a step's marker: removed unaccounted" % fn)
                continue
            experiment, name, build, seconds, where = got
            account(experiment, name, seconds, build, None, where)
            note("%s: %s: cut off after %.0f s (its lane was killed); accounted as interrupted" % (safe(experiment, 200), safe(name, 200), seconds))


def step(experiment, name, build, cmd, env=None):
    """One command of the experiment, niced, its output to the log, its compute accounted; env: variables
    set for it (a study's OpenBLAS kernel pin), logged with the command. The command inherits the
    step's locked marker, so a runner killed alone leaves its step held while the command still runs;
    a runner stopped by an exception (Ctrl-C) stops the command too."""
    note("%s: %s: start %s%s" % (experiment, name, "".join("%s=%s " % kv for kv in sorted((env or {}).items())), " ".join(cmd)))
    start = time.time()
    seg = begin_segment(experiment, name, build)
    with open(log_path, "a") as logf:
        proc = subprocess.Popen(["nice", "-n", "19", *cmd], stdout=logf, stderr=subprocess.STDOUT,
                                env=dict(os.environ, **env) if env else None, pass_fds=(seg[1].fileno(),))
        try:
            while True:
                try:
                    rc = proc.wait(timeout=HEARTBEAT)
                    break
                except subprocess.TimeoutExpired:
                    try:
                        os.utime(seg[0])
                    except OSError:
                        pass  # a missed heartbeat costs at most one interval of accounting
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    end_segment(seg)  # before the line: a kill between the two loses the line rather than doubling it
    account(experiment, name, time.time() - start, build, rc)
    if rc != 0:
        note("%s: %s: exit %d; rerun tools/run-experiments.sh %s to continue" % (experiment, name, rc, experiment))
        fail("run-experiments: %s: %s: exit %d (its output: %s); rerun tools/run-experiments.sh %s to continue"
             % (experiment, name, rc, log_path, experiment), 130 if rc == 130 else 2)
    note("%s: %s: done in %.0f s" % (experiment, name, time.time() - start))


def locked(path):
    """An exclusive lock on `path` (made if absent) or None when another lane holds it."""
    f = open(path, "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def tmp_of(path):
    """This lane's temporary for `path` (NAME.PID.tmp): both lanes publish a study's panel.json and may pin
    its BUILD at once, and a shared NAME.tmp lets one move the other's away (FileNotFoundError) or
    truncate what the other just put in place."""
    return "%s.%d.tmp" % (path, os.getpid())


def write_atomic(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = tmp_of(path)
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def copy_atomic(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    tmp = tmp_of(dst)
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


# --- builds ---------------------------------------------------------------------------------------
def current(required=True):
    """runs/builds/CURRENT: the build new studies take (None where not required and not frozen)."""
    try:
        return open(os.path.join(runs_root, "builds", "CURRENT")).read().strip()
    except FileNotFoundError:
        if not required:
            return None
        fail("run-experiments: no frozen build: tools/run-experiments.sh --freeze")


def build_dir(commit):
    """runs/builds/COMMIT, built from the commit when a new session lacks it (one lane builds, the
    other waits on the lock)."""
    d = os.path.join(runs_root, "builds", commit)
    if os.path.isfile(os.path.join(d, "omn-audit")):
        return d
    if "OMN_EXPERIMENTS_RUNS" in os.environ:  # tests lay out their builds themselves
        fail("run-experiments: %s has no omn-audit: tools/run-experiments.sh --freeze %s" % (d, commit))
    os.makedirs(os.path.dirname(d), exist_ok=True)
    with open(d + ".lock", "a") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if not os.path.isfile(os.path.join(d, "omn-audit")):
            note("build %s: missing in this session; building it from the commit" % commit)
            with open(log_path, "a") as logf:
                rc = subprocess.run(["bash", "tools/run-experiments.sh", "--freeze", commit, "--keep-current"],
                                    stdout=logf, stderr=subprocess.STDOUT).returncode
            if rc != 0 or not os.path.isfile(os.path.join(d, "omn-audit")):
                fail("run-experiments: could not build commit %s into %s (see %s)" % (commit, d, log_path))
    return d


# --- studies and their cells ----------------------------------------------------------------------
class Study:
    def __init__(self, name):
        self.name = name
        self.manifest = os.path.join(os.path.dirname(conf_path), conf.get("manifests", "."), name + ".json")
        if not os.path.isfile(self.manifest):
            fail("run-experiments: %s: no such manifest" % self.manifest)
        m = load_json(self.manifest, "the study manifest")
        need(m, self.manifest, "/grid", dict, "an object (the study's grid)")
        need(m, self.manifest, "/grid/qk_norm", (bool, list), "true, false or a list of them")
        need(m, self.manifest, "/grid/lr", (dict, list, int, float), "a learning rate, a list or {from, to, points}")
        out = need(m, self.manifest, "/output/json", str, "a path (the study document)")
        self.out = os.path.normpath(os.path.join(os.path.dirname(self.manifest), out))
        self.dir = os.path.dirname(self.out)
        rel = os.path.relpath(self.dir, runs_root)
        if rel.startswith(".."):
            fail("run-experiments: %s: /output/json: %s is not under %s, which the store mirrors" % (self.manifest, self.out, runs_root))
        self.store = os.path.join(store_root, rel)
        self.cells = self.expand(m["grid"])

    def expand(self, g):
        """The cells' indices and seeds, in study_manifest.cpp's order: optimizer, depth, QK-norm, LR, seed."""
        lr = g["lr"]
        n_lr = lr["points"] if isinstance(lr, dict) else (len(lr) if isinstance(lr, list) else 1)
        qk = g["qk_norm"] if isinstance(g["qk_norm"], list) else [g["qk_norm"]]
        count = lambda v: len(v) if isinstance(v, list) else 1  # noqa: E731 (an axis may be a scalar, as in C++)
        self.n_seeds = count(g.get("seeds", [None]))
        self.qk, self.n_lr = qk, n_lr
        outer = count(g.get("optimizer", [0])) * count(g.get("n_layers", [0])) * len(qk) * n_lr
        return list(range(outer * self.n_seeds))

    def qk_norm(self, k):
        """Cell k's QK-norm setting (a QK-on cell also runs the post-training sweep: it takes longer)."""
        return self.qk[(k // (self.n_lr * self.n_seeds)) % len(self.qk)]

    def cell_doc(self, k):
        return os.path.join(self.dir, "cell-%03d.json" % k)

    def published(self, k):
        return os.path.exists(os.path.join(self.store, "cell-%03d.json" % k))

    def pin(self):
        """The build the study runs on: results/STUDY/BUILD, or CURRENT, recorded now."""
        pin = os.path.join(self.store, "BUILD")
        if os.path.exists(pin):
            return open(pin).read().strip()
        commit = current()
        build_dir(commit)
        write_atomic(pin, commit + "\n")
        return commit


def shown(path):
    """A path as the commands get it, so their documents record it: relative to the repository (the
    runner's working directory) when inside it, never this machine's checkout path; else as is (a
    test's runs outside the repository)."""
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def kernel_pin(e, s):
    """The OpenBLAS kernel a study's cells must train and be scored on (the experiment's
    /openblas_coretype/STUDY), as the environment its train and after-training steps get; {} where the
    study has no pin (omn-audit then chooses the CPU's best kernels: the environment's is dropped by
    tools/run-experiments.sh). OMN_AUDIT_KEEP_BLAS=1 keeps omn-audit from warning that the pin is
    narrower than the CPU's best: a pin is deliberate (a control rerun on the kernel of the arms it
    pairs with)."""
    core = e.get("openblas_coretype", {}).get(s.name)
    return {"OPENBLAS_CORETYPE": core, "OMN_AUDIT_KEEP_BLAS": "1"} if core else {}


def recorded_kernel(cell):
    """The OpenBLAS kernel a cell's document records (provenance.libraries.openblas: 'OpenBLAS 0.3.21 ...
    Haswell MAX_THREADS=64', the core name second to last), or None."""
    words = str(field(cell, "/provenance/libraries/openblas") or "").split()
    return words[-2] if len(words) >= 2 else None


def run_cell(experiment, e, s, k, commit):
    """Train cell k, run what follows training on it, publish it."""
    omn = os.path.join(build_dir(commit), "omn-audit")
    pin = kernel_pin(e, s)
    n = len(s.cells)
    doc = s.cell_doc(k)
    journal = doc + ".journal"
    os.makedirs(s.dir, exist_ok=True)
    if not os.path.exists(doc) or os.path.exists(journal):
        args = [omn, "study", "--manifest", shown(s.manifest), "--threads", threads, "--shard", "%d/%d" % (k, n), "-o", shown(doc)]
        if os.path.exists(journal):  # killed within this session: the run continues from its last checkpoint
            args.append("--resume")
        step(experiment, "train %s cell %d/%d" % (s.name, k, n), commit, args, pin)
    cell = json.load(open(doc))
    if cell["grid"]["cells"] != n:
        fail("run-experiments: %s: the study has %d cells, the runner counted %d" % (s.manifest, cell["grid"]["cells"], n))
    (r,) = cell["runs"]
    consistent(s, k, cell)
    if pin and (recorded_kernel(cell) or "").lower() != pin["OPENBLAS_CORETYPE"].lower():
        fail("run-experiments: %s: cell %d records OpenBLAS kernel %r (provenance.libraries.openblas), the study is pinned to %s "
             "(configs/experiments.json /experiments/%s/openblas_coretype): not published; delete %s and its run to retrain it"
             % (s.name, k, recorded_kernel(cell), pin["OPENBLAS_CORETYPE"], experiment, shown(doc)))
    step(experiment, "after-training %s cell %d/%d" % (s.name, k, n), commit,
         ["/usr/bin/python3", "tools/experiments/after_training.py", omn, shown(doc), e["sweep"], "1" if e["track"] else "0", threads,
          json.dumps(e.get("panel", {}))], pin)
    publish(s, k, cell, r)


def field(doc, pointer):
    for part in pointer.strip("/").split("/"):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


def corpus_content(base, run):
    """The data a run trained on: the token files' and tokenizer's digests its train.json records
    (corpus.json itself differs between sessions: it records when and by which build it was made)."""
    rec = json.load(open(os.path.join(base, run["dir"], "train.json")))
    return {k: field(rec, "/corpus/" + k) for k in ("train_sha256", "heldout_sha256", "tokenizer_sha256")}


def consistent(s, k, cell):
    """The cells of a study must merge: the same manifest, base config, corpus data and build as the
    cells already published (a corpus rebuilt differently in a new session would only fail at the merge)."""
    for f in sorted(os.listdir(s.store)) if os.path.isdir(s.store) else []:
        if f.startswith("cell-") and f.endswith(".json"):
            ref = json.load(open(os.path.join(s.store, f)))
            for p in ("/manifest/sha256", "/base_config/sha256", "/provenance/git_revision", "/provenance/model_code_fingerprint"):
                if field(ref, p) != field(cell, p):
                    fail("run-experiments: %s: cell %d differs from the published %s at %s (%r, published %r): it cannot be "
                         "merged with them; find what changed (the manifest, the build) before rerunning"
                         % (s.name, k, f, p, field(cell, p), field(ref, p)))
            mine, theirs = corpus_content(s.dir, cell["runs"][0]), corpus_content(s.store, ref["runs"][0])
            for key in mine:
                if mine[key] != theirs[key]:
                    fail("run-experiments: %s: cell %d trained on other data than the published %s: train.json /corpus/%s is %r, "
                         "published %r; rebuild the corpus as configs/corpus/sotu.json says (tools/fetch-corpus.sh) before rerunning"
                         % (s.name, k, f, key, mine[key], theirs[key]))
            return


def publish(s, k, cell, r):
    """Copy what the analysis reads into the store; the cell's document last, as the mark it is done."""
    after, safter = os.path.join(s.dir, "after"), os.path.join(s.store, "after")
    panel = os.path.join(after, "panel.json")
    spanel = os.path.join(safter, "panel.json")
    # (a diverged cell has no model to score: after-training may not have written a panel at all)
    def same_panel(a, b):  # by its digests and rows; where the held-out file lay on disk may differ between sessions
        strip = lambda d: {k: ({kk: vv for kk, vv in v.items() if kk != "path"} if k == "derived_from" else v) for k, v in d.items()}  # noqa: E731
        return strip(json.load(open(a))) == strip(json.load(open(b)))
    if os.path.exists(spanel) and os.path.exists(panel) and not same_panel(spanel, panel):
        fail("run-experiments: %s: cell %d was scored on another panel than the published cells (%s)" % (s.name, k, spanel))
    files = [panel] + [os.path.join(after, r["id"] + x) for x in (".eval.json", ".manifest.json", ".sweep.json", ".track.json")]
    rdir = os.path.join(s.dir, r["dir"])
    files += sorted(os.path.join(d, f) for d, _, fs in os.walk(rdir) for f in fs if not f.endswith((".pt", ".tmp", ".lock")))
    for f in files:
        if os.path.exists(f):
            copy_atomic(f, os.path.join(s.store, os.path.relpath(f, s.dir)))
    copy_atomic(s.cell_doc(k), os.path.join(s.store, os.path.basename(s.cell_doc(k))))
    note("%s: cell %d/%d (%s) published to %s" % (s.name, k, len(s.cells), r["id"], os.path.relpath(s.store, root)))


def merge(experiment, s, commit):
    """Every cell published: the cells' documents → results/STUDY/study.json (one lane does it)."""
    out = os.path.join(s.store, "study.json")
    if os.path.exists(out):
        return
    with open(os.path.join(s.dir, "merge.lock"), "a") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        if not os.path.exists(out) and len(s.cells) == 1:  # its one cell ran the whole grid (--shard 0/1): its document is the study's
            copy_atomic(os.path.join(s.store, "cell-000.json"), out)
            note("%s: one cell: its document is the study's (%s)" % (s.name, shown(out)))
            results_page(experiment)
        if not os.path.exists(out):
            docs = [os.path.join(s.store, "cell-%03d.json" % k) for k in s.cells]
            # the current build merges: it compares the cells' corpus by content, where the study's own
            # build (6c297b5 for the tiny ablation) compared corpus.json's bytes, which a new session changes.
            # A new session has no CURRENT until someone freezes one: then the study's own build merges
            # (it stopped every lane of a completed study at its start on 2026-12-06)
            merger = current(required=False)
            if merger is None:
                note("%s: no CURRENT build in this session: the study's own build %s merges it" % (s.name, commit))
                merger = commit
            step(experiment, "merge " + s.name, commit, [os.path.join(build_dir(merger), "omn-audit"), "merge", "-o", shown(out),
                                                                 *[shown(d) for d in docs]])  # (relative: no checkout path in the store)
            results_page(experiment)


def cell_seconds(experiment, s, k, studies):
    """What cell k of the study will take (training and after-training): the median of the published
    cells of its kind (QK-norm on, whose sweep adds ~15 min to a cell of the small model, or off) in the
    study, else in the experiment's studies (right for a study that widens another's grid with the same
    model and steps, a rough guess where they differ); else the longest cell of the other kind; None
    before the first cell. A cell's time is every segment of it: a resumed cell's interrupted steps
    count with its finished ones, and a cell whose training never finished counts not at all.
    A median, since the times swing with what else shares the cores (the longest stopped lanes with
    40 min left where a cell then took 10); of two cells their mean (the longer one alone, 166 min beside
    a CI, kept a 135-min kind out of every session's deadline)."""
    by_name = {t.name: t for t in studies}
    per, trained = {}, set()  # (study, cell) → seconds; the cells whose training finished
    path = os.path.join(store_root, "compute.jsonl")
    for line in open(path) if os.path.exists(path) else []:
        a = json.loads(line)
        if a["experiment"] != experiment or (a["rc"] != 0 and not a.get("interrupted")):
            continue
        for kind in ("train", "after-training"):
            for name in by_name:
                pre = "%s %s cell " % (kind, name)
                if a["step"].startswith(pre):
                    cell = (name, int(a["step"][len(pre):].split("/")[0]))
                    per[cell] = per.get(cell, 0.0) + a["seconds"]
                    if kind == "train" and a["rc"] == 0:
                        trained.add(cell)
    per = {c: v for c, v in per.items() if c in trained}
    kind = s.qk_norm(k)
    for pick in (lambda c: c[0] == s.name and by_name[c[0]].qk_norm(c[1]) == kind,
                 lambda c: by_name[c[0]].qk_norm(c[1]) == kind):
        times = [v for c, v in per.items() if pick(c)]
        if times:
            return statistics.median(times)
    for pick in (lambda c: c[0] == s.name, lambda c: True):  # only the other kind: its longest, to be safe
        times = [v for c, v in per.items() if pick(c)]
        if times:
            return max(times)
    return None


def results_page(experiment):
    """docs/results.md follows the store: a study merged or an analysis written changes what it says
    (commit it with results/). Not for a test's store (OMN_EXPERIMENTS_STORE)."""
    if "OMN_EXPERIMENTS_STORE" not in os.environ:
        step(experiment, "results page", "-", ["/usr/bin/python3", "tools/experiments/results_page.py"])


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


main()
