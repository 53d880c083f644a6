"""What the trainer's and the study's checks share: a clean work directory, `check` (records a pass
or a failure), `run` (the CLI, with an expected exit code), the summary, and a small generated corpus
(documents with learnable structure from a fixed word list, seeded) for `omn-audit corpus`."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

WORDS = ["the", "union", "state", "people", "congress", "nation", "law", "peace", "trade", "war", "year",
         "public", "great", "our", "we", "have", "shall", "must", "and", "of", "to", "in", "a", "is"]


class Harness:
    def __init__(self, omn, work):
        self.omn, self.work = omn, work
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        self.env = dict(os.environ, OMP_NUM_THREADS="1")
        self.passes, self.failures = [], []

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        (self.passes if ok else self.failures).append(what)

    def run(self, *args, expect=0):
        p = subprocess.run([self.omn, *args], capture_output=True, text=True, env=self.env)
        if p.returncode != expect:
            print(p.stdout, p.stderr)
            raise SystemExit("%s: exit %d, expected %d" % (" ".join(args), p.returncode, expect))
        return p

    def finish(self):
        print("%d passed, %d failed" % (len(self.passes), len(self.failures)))
        sys.exit(1 if self.failures else 0)


def write_corpus_config(work, docs=40, vocab_size=320, seed=0):
    """Writes WORK/text/docNN.txt and WORK/corpus-config.json; returns the config's path."""
    rng = np.random.default_rng(seed)
    textdir = os.path.join(work, "text")
    os.makedirs(textdir)
    for i in range(docs):
        sents = []
        for _ in range(int(rng.integers(4, 12))):
            sents.append(" ".join(WORDS[int(j)] for j in rng.integers(0, len(WORDS), size=int(rng.integers(5, 14)))) + ".")
        open(os.path.join(textdir, "doc%02d.txt" % i), "w").write("\n".join(sents) + "\n")
    cconf = os.path.join(work, "corpus-config.json")
    json.dump({"schema": "omn-audit/corpus-config@1", "name": "gen", "inputs": ["text"], "heldout_fraction": 0.25,
               "tokenizer": {"vocab_size": vocab_size}}, open(cconf, "w"))
    return cconf
