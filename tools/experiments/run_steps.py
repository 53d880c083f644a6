"""The experiments runner's steps (tools/experiments/run.py): one command each, niced, logged, its compute
accounted in results/compute.jsonl, and marked in runs/segments/ while it runs so that a step cut off
by a session's end is accounted by the next lane; the locks and atomic writes two lanes share."""
import fcntl
import json
import math
import os
import shutil
import stat
import subprocess
import time

from run_settings import cpu, fail, log_path, note, runs_root, safe, store_root, threads


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
