"""The experiments runner's settings (tools/experiments/run.py): configs/experiments.json read and checked
before anything runs, the environment (runs/, the store, threads, the deadline), the log, and how a
failure ends the runner: one line on stderr, exit 2."""
import calendar
import json
import math
import os
import platform
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


# --- read and checked once, on import, before anything runs ---
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


def shown(path):
    """A path as the commands get it, so their documents record it: relative to the repository (the
    runner's working directory) when inside it, never this machine's checkout path; else as is (a
    test's runs outside the repository)."""
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def field(doc, pointer):
    for part in pointer.strip("/").split("/"):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc
