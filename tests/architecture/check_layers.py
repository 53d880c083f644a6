#!/usr/bin/python3
"""Every include points down (docs/ARCHITECTURE.md): a file in src/<folder>/ or include/omn/<folder>/
includes only omn headers of its own folder or of folders below it.

  check_layers.py SOURCE_DIR
"""
import glob
import os
import re
import sys

# bottom to top; the root headers (errors.h, embedded.h, ...) sit below everything
ORDER = ["io", "output", "model", "data", "audit", "eval", "intervene", "train", "study", "report"]
RANK = {d: i for i, d in enumerate(ORDER)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"omn/([a-z_]+)/[^"]+"', re.M)


def folder_of(path):
    parts = path.replace(os.sep, "/").split("/")
    if parts[0] == "src":
        return parts[1]
    return parts[2]  # include/omn/<folder>/...


def violations(files):
    """files: {relative path: text}. Returns the upward or unknown includes."""
    bad = []
    for path, text in files.items():
        here = folder_of(path)
        if here not in RANK:
            bad.append("%s: folder '%s' is not in the layer order (docs/ARCHITECTURE.md)" % (path, here))
            continue
        for m in INCLUDE.finditer(text):
            there = m.group(1)
            if there not in RANK:
                bad.append("%s: includes omn/%s/, a folder not in the layer order" % (path, there))
            elif RANK[there] > RANK[here]:
                bad.append("%s: %s/ includes %s/, which is above it" % (path, here, there))
    return bad


def main():
    root = sys.argv[1]
    files = {}
    for pattern in ("src/*/*.cpp", "src/*/*.h", "include/omn/*/*.h"):
        for p in glob.glob(os.path.join(root, pattern)):
            files[os.path.relpath(p, root)] = open(p, encoding="utf-8").read()
    # the check itself can fail: an upward include and an unknown folder are caught
    probe = violations({"src/io/x.cpp": '#include "omn/report/html.h"\n', "src/newplace/y.cpp": ""})
    assert len(probe) == 2, probe
    assert len(files) > 100, "found only %d files under %s" % (len(files), root)
    bad = violations(files)
    for b in bad:
        print("FAIL:", b)
    print("%d files, %d upward includes" % (len(files), len(bad)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
