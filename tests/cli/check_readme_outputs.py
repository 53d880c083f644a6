#!/usr/bin/env python3
"""The README's quoted outputs are the tool's: each ```-block that starts with `$ omn-audit ...` is run
(in a scratch directory holding the test fixtures the block names) and every line the README shows must
appear in the output, in order. A README line holding `...` is abridged: it matches an output line that
starts with the text before the `...`; a line that is only `...` skips lines. The README's numbers about
the demo are generated from committed records (tools/docs_numbers.py --check).

usage: check_readme_outputs.py OMN_AUDIT FIXTURES SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile


def blocks(readme):
    """(command, shown lines) for each fenced block whose first line is `$ omn-audit ...`."""
    block = None
    for line in readme.split("\n"):
        if line.startswith("```"):
            if block is not None and block and block[0].startswith("$ omn-audit "):
                yield block[0][2:], block[1:]
            block = [] if block is None else None
        elif block is not None:
            block.append(line)


def matches(shown, line):
    if "..." in shown:
        return line.rstrip().startswith(shown.split("...")[0].rstrip())
    return line.rstrip() == shown.rstrip()


def check(command, shown, output):
    """The first shown line that does not appear in order in the output, or None."""
    lines = output.split("\n")
    at = 0
    for s in shown:
        if s.strip() in ("", "..."):
            continue
        while at < len(lines) and not matches(s, lines[at]):
            at += 1
        if at == len(lines):
            return s
        at += 1
    return None


def main():
    omn, fixtures, src = (os.path.abspath(a) for a in sys.argv[1:4])
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    failures = 0
    count = 0
    with tempfile.TemporaryDirectory() as scratch:
        for name in os.listdir(fixtures):
            if name.endswith(".pt"):
                shutil.copyfile(os.path.join(fixtures, name), os.path.join(scratch, name))
        for command, shown in blocks(readme):
            count += 1
            args = command.split()
            run = subprocess.run([omn] + args[1:], cwd=scratch, capture_output=True, text=True,
                                 env=dict(os.environ, OMN_AUDIT_DATA=src))
            missing = check(command, shown, run.stdout)
            if run.returncode != 0 or missing is not None:
                failures += 1
                print("FAIL: README's `%s` (exit %d): the README shows %r, the output does not (in order):\n%s%s"
                      % (command, run.returncode, missing, run.stdout, run.stderr))
    if count == 0:
        print("FAIL: README.md quotes no `$ omn-audit` output: the check would test nothing")
        return 1
    numbers = subprocess.run([sys.executable, os.path.join(src, "tools", "docs_numbers.py"), "--check"])
    if numbers.returncode != 0:
        failures += 1
    if failures:
        return 1
    print("README: %d quoted output(s) are the tool's; the demo's numbers are the committed records'" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
