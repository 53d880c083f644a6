#!/usr/bin/python3
"""Rewrites the documents under results/ that record a machine's absolute checkout path (documents
published before the runner gave the commands relative paths) so that they record the same paths
relative to the repository, and keeps every digest that pins a store file valid: a file whose bytes
change (a run's train.json) has its digest replaced wherever the store records it (the cell and study
documents' /runs/*/train_json_sha256), repeated until nothing changes. Idempotent: a store without
absolute paths is left byte for byte.

  relativize_store.py [STORE [PREFIX]]    (default: results/ and this repository's absolute path)

Prints what it rewrote. Then `tests/parity/check_store.py` checks the store: no absolute path, every
pin valid.
"""
import hashlib
import os
import sys

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
store = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(root, "results")
prefix = sys.argv[2] if len(sys.argv) > 2 else root
prefix = prefix.rstrip("/")
TEXT = (".json", ".jsonl", ".csv", ".md")


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


files = sorted(os.path.join(d, f) for d, _, fs in os.walk(store) for f in fs if f.endswith(TEXT))
original = {f: sha(f) for f in files}
rewritten = 0
for f in files:
    text = open(f, encoding="utf-8").read()
    new = text.replace('"' + prefix + '/', '"').replace(prefix + "/", "").replace('"' + prefix + '"', '"."')
    if new != text:
        with open(f + ".tmp", "w", encoding="utf-8") as out:
            out.write(new)
        os.replace(f + ".tmp", f)
        rewritten += 1
# the digests of changed files, wherever the store records them, until a pass changes nothing
current = dict(original)
while True:
    moved = {}
    for f in files:
        now = sha(f)
        if now != current[f]:
            moved[current[f]] = now
            current[f] = now
    if not moved:
        break
    for f in files:
        text = open(f, encoding="utf-8").read()
        new = text
        for old, now in moved.items():
            new = new.replace(old, now)
        if new != text:
            with open(f + ".tmp", "w", encoding="utf-8") as out:
                out.write(new)
            os.replace(f + ".tmp", f)
repinned = sum(1 for f in files if current[f] != original[f])
print("relativize_store: %s: %d of %d files held %s; %d files changed in all (digests re-pinned where recorded)"
      % (os.path.relpath(store, root), rewritten, len(files), prefix, repinned))
