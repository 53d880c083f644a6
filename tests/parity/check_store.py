#!/usr/bin/env python3
"""The published store (results/) as evidence anyone can recompute from on another machine: no
document records a machine's absolute path (a checkout, a home or a temporary folder), and every
digest by which a cell or study document pins a file of the store (a run's train.json and its config)
is that file's SHA-256.

usage: check_store.py SOURCE_DIR    (tools/experiments/relativize_store.py repairs the first kind)
"""
import hashlib
import json
import os
import re
import sys

src = os.path.abspath(sys.argv[1])
store = os.path.join(src, "results")
ABSOLUTE = re.compile(r'(^|[\s"\'=(,])(/(home|work|tmp|root|Users|mnt|var|opt|srv|scratch)/[^\s"\',)]*)')
failures, files, pins = [], 0, 0


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


for d, _, fs in os.walk(store):
    for f in sorted(fs):
        if not f.endswith((".json", ".jsonl", ".csv", ".md")):
            continue
        path = os.path.join(d, f)
        files += 1
        m = ABSOLUTE.search(open(path, encoding="utf-8").read())
        if m:
            failures.append("%s records the absolute path %s (tools/experiments/relativize_store.py rewrites it)"
                            % (os.path.relpath(path, src), m.group(2)[:120]))
        if not (f == "study.json" or (f.startswith("cell-") and f.endswith(".json"))):
            continue
        doc = json.load(open(path))
        for run in doc.get("runs", []):
            for key, rel in (("train_json_sha256", os.path.join(run["dir"], "train.json")),
                             ("config_sha256", run["dir"] + ".config.json")):
                target = os.path.join(d, rel)
                if key in run and os.path.isfile(target):
                    pins += 1
                    if sha(target) != run[key]:
                        failures.append("%s: /runs/%s/%s is %s, but %s hashes to %s" % (
                            os.path.relpath(path, src), run["id"], key, run[key], os.path.relpath(target, src), sha(target)))
for f in failures[:20]:
    print("FAIL:", f)
print("%d files of the store read, %d pins checked, %d failures" % (files, pins, len(failures)))
sys.exit(1 if failures or pins == 0 else 0)
