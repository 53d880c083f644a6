#!/usr/bin/python3
"""No source file over 450 lines (docs/ARCHITECTURE.md, "The shape of a function"): a file that long
holds two ideas, and each gets a file of its own named for it. Every file omn-audit is made of or runs
is counted -- the C++ in src/, include/ and tools/omn-audit/, the experiments' Python and the shell
tools in tools/ -- and one over the limit fails the test with its path and length. Tests are not
counted (a test file follows the code it checks).

  check_file_length.py SOURCE_DIR [--limit N] [--list M]   (--list M: print every file over M lines)
"""
import os
import sys

LIMIT = 450
ROOTS = ("src", "include", "tools")
EXTENSIONS = (".cpp", ".cc", ".c", ".h", ".hpp", ".py", ".sh", ".js")
SKIP = ("node_modules",)


def lengths(source_dir):
    """[(relative path, lines)] of every counted file, sorted by path"""
    out = []
    for top in ROOTS:
        for d, dirs, files in os.walk(os.path.join(source_dir, top)):
            dirs[:] = sorted(x for x in dirs if x not in SKIP)
            for f in sorted(files):
                if f.endswith(EXTENSIONS):
                    p = os.path.join(d, f)
                    with open(p, "rb") as fh:
                        out.append((os.path.relpath(p, source_dir), fh.read().count(b"\n")))
    return out


def main(argv):
    args = argv[1:]
    limit, show = LIMIT, None
    if "--limit" in args:
        limit = int(args[args.index("--limit") + 1])
    if "--list" in args:
        show = int(args[args.index("--list") + 1])
    if not args or args[0].startswith("--"):
        print(__doc__, file=sys.stderr)
        return 2
    files = lengths(args[0])
    if len(files) < 100:  # the walk found the tree (a wrong SOURCE_DIR must not pass with nothing counted)
        print("check_file_length: %s: only %d files under %s: not omn-audit's source tree" % (args[0], len(files), ", ".join(ROOTS)),
              file=sys.stderr)
        return 1
    if show is not None:
        for p, n in sorted(files, key=lambda x: -x[1]):
            if n > show:
                print("%5d  %s" % (n, p))
    over = [(p, n) for p, n in files if n > limit]
    for p, n in over:
        print("%s: %d lines, over the limit of %d: it holds two ideas; give the second a file of its own" % (p, n, limit))
    print("%d files counted, the longest %d lines (%s); %d over %d" % (
        len(files), max(n for _, n in files), max(files, key=lambda x: x[1])[0], len(over), limit))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
