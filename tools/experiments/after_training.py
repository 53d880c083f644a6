#!/usr/bin/python3
"""What issue 29's experiments run on the models a study trained (configs/experiments.json):

  after_training.py OMN_AUDIT STUDY_JSON SWEEP_KIND TRACK(0|1) THREADS [PANEL_JSON]

PANEL_JSON: the experiment's /panel, over experiments.json's /panel: {"tokens": N} scores N tokens at
the runs' own training length (N / seq_len rows), so runs trained at different lengths see equal text.

Into STUDY_DIR/after/:
  panel.bin            the evaluation panel: the corpus's held-out tokens without the rows every run
                       evaluated during training (the first eval.rows rows of seq_len tokens, which
                       chose the best LR and judged divergence), so nothing selected on it is scored on it
  RUN.eval.json        `omn-audit eval` of each finished run's final.pt on the first `rows` rows of the panel
  RUN.manifest.json    for each finished QK-on run: the post-training sweep (the SWEEP_KIND list of
  RUN.sweep.json         experiments.json: constants, controls), run by `omn-audit intervene --kl`;
                       none where the list is empty (sweep "none")
  RUN.digests, RUN.track.json   `omn-audit track` of the run's checkpoints, verified against the digests its
                       train.json records (TRACK=1)
Each output is written by the tool itself (atomically); one that exists is kept, so the script resumes
after any interruption (an interrupted sweep continues from its journal).

Two lanes run this script at once on cells of one study, and share STUDY_DIR/after/: panel.bin and
panel.json are made and checked under an exclusive lock on that folder, and every file is written
through a temporary of this process's own (NAME.PID.tmp), so neither lane moves or truncates the
other's (a shared NAME.tmp failed one lane's after-training with FileNotFoundError).
"""
import fcntl
import hashlib
import json
import os
import subprocess
import sys

omn, study_json, sweep_kind, track, threads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
here = os.path.dirname(os.path.abspath(__file__))
conf = json.load(open(os.environ.get("OMN_EXPERIMENTS_CONFIG", os.path.join(here, "..", "..", "configs", "experiments.json"))))
panel_conf = dict(conf["panel"])
panel_conf.update(json.loads(sys.argv[6]) if len(sys.argv) > 6 else {})
if os.environ.get("OMN_PANEL_ROWS"):  # a smaller panel, for trying the pipeline on a toy study only
    panel_conf["rows"] = int(os.environ["OMN_PANEL_ROWS"])
study = json.load(open(study_json))


def shown(path):
    """A path as the documents record it: relative to the current directory (the repository, where the
    runner works) when inside it, so no document carries this machine's checkout path; else as is."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


sdir = shown(os.path.dirname(os.path.abspath(study_json)))
out = os.path.join(sdir, "after")
os.makedirs(out, exist_ok=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run(*args):
    print("after-training:", " ".join(args), flush=True)
    subprocess.run([omn, *args], check=True)


def tmp_of(path):
    """This process's temporary for `path`: a lane's own, never another's (see the top)."""
    return "%s.%d.tmp" % (path, os.getpid())


def write_json(path, doc):
    tmp = tmp_of(path)
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


runs = [r for r in study["runs"] if r["status"] == "finished"]
if not runs:  # a diverged run has no model to evaluate; the analysis reports it as diverged
    print("after-training: %s: no run finished, nothing to evaluate" % study_json, flush=True)
    sys.exit(0)
records = {r["id"]: json.load(open(os.path.join(sdir, r["dir"], "train.json"))) for r in runs}
first = next(iter(records.values()))
corpus_json = first["corpus"]["path"]
corpus = json.load(open(corpus_json))
if corpus.get("token_format") != "u16":  # the panel's byte offset below counts 2 bytes per token
    sys.exit("after-training: %s: token_format %r; only u16 corpora are supported" % (corpus_json, corpus.get("token_format")))
heldout = shown(os.path.join(os.path.dirname(corpus_json), corpus["heldout"]["path"]))
if sha256(heldout) != first["corpus"]["heldout_sha256"]:
    sys.exit("after-training: %s is not the held-out set the runs were trained beside" % heldout)
seq_len = {rec["config"]["values"]["seq_len"] for rec in records.values()}
if len(seq_len) != 1:
    sys.exit("after-training: the runs differ in seq_len %s" % sorted(seq_len))
seq_len = seq_len.pop()
if "tokens" in panel_conf:  # equal text at every training length
    if panel_conf["tokens"] % seq_len:
        sys.exit("after-training: the panel's %d tokens are not whole rows of %d" % (panel_conf["tokens"], seq_len))
    panel_conf["rows"] = panel_conf.pop("tokens") // seq_len
skip_rows = max(rec["config"]["values"].get("eval", {}).get("rows", 16) for rec in records.values())
skip_bytes = skip_rows * seq_len * 2  # u16 tokens; packed rows are consecutive seq_len-token pieces
panel = os.path.join(out, "panel.bin")
# the panel is the study's, shared by the lanes: made, checked and recorded by one lane at a time (an
# flock on the folder itself: no lock file beside the outputs); released before the evaluations
panel_lock = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(panel_lock, fcntl.LOCK_EX)
if not os.path.exists(panel):
    data = open(heldout, "rb").read()
    with open(tmp_of(panel), "wb") as f:
        f.write(data[skip_bytes:])
    os.replace(tmp_of(panel), panel)
panel_sha = sha256(panel)
if panel_sha != hashlib.sha256(open(heldout, "rb").read()[skip_bytes:]).hexdigest():
    sys.exit("after-training: %s is not the held-out set without its first %d rows: delete it" % (panel, skip_rows))
tok = corpus["tokenizer"]
revision = "%s sha256:%s" % (corpus.get("name", "corpus"), tok["sha256"])
panel_doc = {"path": "panel.bin", "sha256": panel_sha, "derived_from": {"path": heldout, "sha256": first["corpus"]["heldout_sha256"]},
             "skipped_rows": skip_rows, "seq_len": seq_len, "rows": panel_conf["rows"], "eos": tok["eos_id"], "tokenizer_revision": revision}
pj = os.path.join(out, "panel.json")
def same_panel(a, b):  # by digests and rows: where the held-out file lay (an absolute path in older records) may differ
    strip = lambda d: {k: ({kk: vv for kk, vv in v.items() if kk != "path"} if k == "derived_from" else v) for k, v in d.items()}  # noqa: E731
    return strip(a) == strip(b)


if os.path.exists(pj) and not same_panel(json.load(open(pj)), panel_doc):  # outputs scored on another panel would mix silently
    sys.exit("after-training: %s records another panel than this call's (rows %s, now %s): delete %s to start over"
             % (pj, json.load(open(pj)).get("rows"), panel_conf["rows"], out))
text = json.dumps(panel_doc, indent=1) + "\n"
if not os.path.exists(pj) or open(pj).read() != text:  # (as write_json writes it: unchanged, it is left alone)
    write_json(pj, panel_doc)
os.close(panel_lock)

for r in runs:
    rid, rec = r["id"], records[r["id"]]
    final = os.path.join(sdir, r["dir"], "final.pt")
    ev = os.path.join(out, rid + ".eval.json")
    if not os.path.exists(ev):
        run("eval", final, "--sha256", r["final_checkpoint_sha256"], "--tokens", panel, "--token-format", "u16",
            "--eos", str(tok["eos_id"]), "--tokenizer-revision", revision, "--seq-len", str(seq_len),
            "--num-seqs", str(panel_conf["rows"]), "--dtype", "fp32", "--batch", str(panel_conf["batch"]),
            "--threads", threads, "--groups", str(panel_conf["groups"]),
            "--bootstrap-resamples", str(panel_conf["bootstrap_resamples"]), "--bootstrap-seed", "1", "--json", ev)
    if not r["qk_norm"]:
        continue
    sw = os.path.join(out, rid + ".sweep.json")
    if not os.path.exists(sw) and conf["sweeps"][sweep_kind]:  # (an empty list, sweep "none": eval only)
        manifest = os.path.join(out, rid + ".manifest.json")
        journal = os.path.exists(sw + ".journal")
        if not journal and os.path.exists(os.path.join(out, rid + ".sweep.csv")):
            os.remove(os.path.join(out, rid + ".sweep.csv"))  # ours, from a run whose JSON was removed
        if not journal:  # an interrupted sweep continues with the manifest its journal was written for
            write_json(manifest, {
                "schema": "omn-audit/manifest@1",
                "description": "Issue 29: the post-training sweep (%s) of %s on the held-out panel (docs/results.md)" % (sweep_kind, rid),
                "checkpoint": {"path": os.path.relpath(final, out), "sha256": r["final_checkpoint_sha256"], "preset": "omn"},
                "tokens": {"path": "panel.bin", "sha256": panel_sha, "format": "u16", "eos": tok["eos_id"], "tokenizer_revision": revision},
                "rows": {"seq_len": seq_len, "num_seqs": panel_conf["rows"], "selection": "first", "form": "packed"},
                "groups": panel_conf["groups"],
                "bootstrap": {"resamples": panel_conf["bootstrap_resamples"], "seed": 1, "confidence": 0.95},
                "model": {"attention": "auto", "dtype": "fp32", "device": "cpu", "batch": panel_conf["batch"], "threads": int(threads)},
                "conditions": conf["sweeps"][sweep_kind],
                "output": {"json": rid + ".sweep.json", "csv": rid + ".sweep.csv"}})
        resume = ["--resume"] if journal else []
        run("intervene", "--manifest", manifest, "--kl", *resume)
    if track:
        tr = os.path.join(out, rid + ".track.json")
        if not os.path.exists(tr):
            digests = os.path.join(out, rid + ".digests")
            rdir = os.path.join(sdir, r["dir"])
            with open(digests, "w") as f:
                for c in rec["checkpoints"]:
                    f.write("%s  %s\n" % (c["sha256"], os.path.join(rdir, c["path"])))
                f.write("%s  %s\n" % (r["final_checkpoint_sha256"], final))
            run("track", rdir, "--digests", digests, "--json", tr)
print("after-training: %s done (%d runs)" % (study_json, len(runs)), flush=True)
