"""A small corpus for the trainer's tests: generated documents with learnable structure (a fixed
word list, seeded), written as text files plus a corpus config for `omn-audit corpus`."""
import json
import os

import numpy as np

WORDS = ["the", "union", "state", "people", "congress", "nation", "law", "peace", "trade", "war", "year",
         "public", "great", "our", "we", "have", "shall", "must", "and", "of", "to", "in", "a", "is"]


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
