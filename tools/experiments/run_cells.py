"""The experiments runner's studies and cells (tools/experiments/run.py): the build a study is pinned to,
each cell trained, scored after training and published into the store, the cells merged into the
study, and what a cell of each kind takes."""
import fcntl
import json
import os
import statistics
import subprocess

from run_settings import conf, conf_path, fail, field, load_json, log_path, need, note, root, runs_root, shown, store_root, threads
from run_steps import copy_atomic, step, write_atomic


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
