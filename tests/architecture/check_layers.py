#!/usr/bin/python3
"""Every include points down (docs/ARCHITECTURE.md): a file in src/<folder>/ or include/omn/<folder>/
includes only omn headers of its own folder or of folders below it. And the torch line: no source
outside OMN_TORCH_SOURCES (CMakeLists.txt) -- the core, the CLI, the text plugin -- reaches a libtorch
header (<ATen/...>, <c10/...>, <torch/...>), directly or through the omn headers it includes. The
build's #error stand-ins (tools/cmake/no-torch) catch the headers in use; this catches every one.

  check_layers.py SOURCE_DIR
"""
import glob
import os
import re
import sys

# bottom to top; the root headers (errors.h, embedded.h, ...) sit below everything
ORDER = ["io", "documents", "output", "model", "data", "audit", "eval", "intervene", "train", "study", "report"]
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


TORCH = re.compile(r'^\s*#\s*include\s+<(ATen|c10|torch)/', re.M)
OMN_HEADER = re.compile(r'^\s*#\s*include\s+"(omn/[^"]+)"', re.M)


def torch_sources(cmake_text):
    m = re.search(r"set\(OMN_TORCH_SOURCES(.*?)\)", cmake_text, re.S)
    return set(m.group(1).split())


def reaches_torch(path, read, seen=None):
    """The chain of includes by which `path` reaches a libtorch header, or None."""
    seen = set() if seen is None else seen
    if path in seen:
        return None
    seen.add(path)
    text = read(path)
    if text is None:
        return None
    if TORCH.search(text):
        return [path]
    for m in OMN_HEADER.finditer(text):
        chain = reaches_torch("include/" + m.group(1), read, seen)
        if chain:
            return [path] + chain
    return None


def torch_line(root):
    def read(rel):
        p = os.path.join(root, rel)
        return open(p, encoding="utf-8").read() if os.path.exists(p) else None
    torch = torch_sources(read("CMakeLists.txt"))
    assert len(torch) > 5, "OMN_TORCH_SOURCES not found in CMakeLists.txt"
    free = [os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "src/*/*.cpp"))
            + glob.glob(os.path.join(root, "tools/omn-audit/*.cpp")) + glob.glob(os.path.join(root, "tools/omn-audit/text/*.cpp"))]
    free = [f for f in free if f not in torch]
    bad = []
    for f in sorted(free):
        chain = reaches_torch(f, read)
        if chain:
            bad.append("%s reaches libtorch: %s" % (f, " -> ".join(chain)))
    return free, bad


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
    free, torch_bad = torch_line(root)
    # the torch check can fail too: a file that includes session.h reaches ATen
    assert reaches_torch("x.cpp", lambda p: '#include "omn/eval/session.h"\n' if p == "x.cpp" else
                         (open(os.path.join(root, p), encoding="utf-8").read() if os.path.exists(os.path.join(root, p)) else None))
    for b in bad + torch_bad:
        print("FAIL:", b)
    print("%d files, %d upward includes; %d torch-free sources, %d reaching libtorch" % (len(files), len(bad), len(free), len(torch_bad)))
    sys.exit(1 if bad or torch_bad else 0)


if __name__ == "__main__":
    main()
