#!/usr/bin/python3
"""Every translation unit of ours is compiled the way CMakeLists.txt says (read from the build's
compile_commands.json):

  check_build_flags.py BUILD_DIR SOURCE_DIR

- json_assert.h reaches it before anything else: the first header of its precompiled header, or
  (targets without one: the fuzz targets) its first -include;
- a precompiled header is the first -include, so GCC can use it (a header force-included before it
  makes GCC skip the .gch without a word: omn's ATen header was built and never used);
- -Wall and -Wextra are on.
In a unity build (OMN_UNITY_BUILD) CMake's Unity/unity_N_cxx.cxx units include the sources: each
source is checked under its unit's command.
"""
import json
import os
import re
import shlex
import sys

build, src = (os.path.abspath(a) for a in sys.argv[1:3])
assert_h = os.path.join(src, "include", "omn", "json_assert.h")
unity_include = re.compile(r'^#include "([^"]+)"$')


def sources(c):
    """The sources a compile command compiles: its file, or a unity unit's (CMake's Unity/unity_N_cxx.cxx
    includes its sources by absolute path), each with the command that compiles it."""
    f = os.path.abspath(os.path.join(c["directory"], c["file"]))
    if os.sep + "Unity" + os.sep in f and os.path.basename(f).startswith("unity_"):
        return [m.group(1) for m in map(unity_include.match, open(f).read().splitlines()) if m]
    return [f]


failures, n = [], 0
units = json.load(open(os.path.join(build, "compile_commands.json")))
commands = [(f, c) for c in units for f in sources(c)]
for f, c in commands:
    f = os.path.abspath(f)
    if not f.startswith(src + os.sep) or f.startswith(build + os.sep) or "/googletest/" in f:
        continue  # generated sources and third-party code
    n += 1
    args = shlex.split(c["command"]) if "command" in c else c["arguments"]
    includes = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-include"]
    rel = os.path.relpath(f, src)
    if not includes:
        failures.append("%s: no -include: json_assert.h does not reach it" % rel)
        continue
    first = includes[0]
    if first.endswith("cmake_pch.hxx"):
        pch = os.path.join(c["directory"], first)
        text = open(pch).read() if os.path.exists(pch) else ""
        heads = [line for line in text.splitlines() if line.startswith("#include")]
        if not heads or assert_h not in heads[0]:
            failures.append("%s: its precompiled header %s does not begin with json_assert.h" % (rel, first))
    elif os.path.abspath(first) != assert_h:
        failures.append("%s: the first -include is %s, not json_assert.h" % (rel, first))
    if any(i.endswith("cmake_pch.hxx") for i in includes[1:]):
        failures.append("%s: a header is force-included before its precompiled header, which GCC then ignores" % rel)
    for w in ("-Wall", "-Wextra"):
        if w not in args:
            failures.append("%s: compiled without %s" % (rel, w))
for x in failures:
    print("FAIL", x)
print("%d sources of ours checked (%d translation units), %d problems" % (n, len(units), len(failures)))
sys.exit(1 if failures or n == 0 else 0)
