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
source is checked under its unit's command. And since a unity unit merges up to 8 sources of one
target (which 8 shifts as files are added), no two sources of a target may define a file-local
function, type or alias (in an anonymous namespace, or `static`) of the same name: in one unit they
would collide, or worse, one file's call would pick the other's overload. Identical aliases
(`using K = PyValue::Kind;`) may repeat. The scan reads definitions that start a line (this code's
style), so a file-local variable, or a signature that starts with an attribute, is not seen; for
those the compiler still stops on a pair with one signature ("redefinition of").
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


def ours(f):
    """A source of this project's (not a generated one, nor third-party code)."""
    return f.startswith(src + os.sep) and not f.startswith(build + os.sep) and "/googletest/" not in f


failures, n = [], 0
units = json.load(open(os.path.join(build, "compile_commands.json")))
commands = [(f, c) for c in units for f in sources(c)]
for f, c in commands:
    f = os.path.abspath(f)
    if not ours(f):
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
# --- file-local names, per target --------------------------------------------------------------
target_of = re.compile(r"(?:^|/)CMakeFiles/([^/]+)\.dir/")
local_fn = re.compile(r"^(?:template <[^>]*>\s*)?(?:static\s+)?(?:inline\s+|constexpr\s+)*[A-Za-z_][\w:<>,\s*&]*?[\s*&]([A-Za-z_]\w*)\s*\(")
static_fn = re.compile(r"^static\s+(?:inline\s+|constexpr\s+)*[A-Za-z_][\w:<>,\s*&]*?[\s*&]([A-Za-z_]\w*)\s*\(")
local_type = re.compile(r"^(?:struct|class|enum class|enum)\s+([A-Za-z_]\w*)")
local_alias = re.compile(r"^using ([A-Za-z_]\w*) = ")


def file_locals(path):
    """{name: the declaring line} of what a source defines at the top of an anonymous namespace
    (column 0, this code's style) or as a file-scope `static` function."""
    names, anon = {}, 0
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("namespace {"):
            anon += 1
            continue
        if anon and re.match(r"^\}\s*// namespace\s*$", line):
            anon -= 1
            continue
        m = (local_fn.match(line) or local_type.match(line) or local_alias.match(line)) if anon else static_fn.match(line)
        if m and m.group(1) not in ("if", "for", "while", "switch", "return", "operator"):
            names.setdefault(m.group(1), line.strip() if line.startswith("using ") else "")
    return names


by_target = {}
for f, c in commands:
    f = os.path.abspath(f)
    if not ours(f):
        continue
    args = shlex.split(c["command"]) if "command" in c else c["arguments"]
    out = args[args.index("-o") + 1] if "-o" in args else ""
    m = target_of.search(out)
    by_target.setdefault(m.group(1) if m else "?", set()).add(f)
for target, files in sorted(by_target.items()):
    seen = {}
    for f in sorted(files):
        for name, alias in file_locals(f).items():
            if name in seen and not (alias and alias == seen[name][1]):
                failures.append("%s and %s (target %s) both define a file-local %s: a unity unit holding both would "
                                "collide; name one for what it does" % (os.path.relpath(seen[name][0], src),
                                                                         os.path.relpath(f, src), target, name))
            seen.setdefault(name, (f, alias))
for x in failures:
    print("FAIL", x)
print("%d sources of ours checked (%d translation units), %d problems" % (n, len(units), len(failures)))
sys.exit(1 if failures or n == 0 else 0)
