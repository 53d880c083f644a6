#!/usr/bin/env python3
"""Every command's --help ends with examples, and every example can be typed as shown: it runs the
command it is listed under, each flag it uses is one of that command's options (or a global one),
and it names no repository path (configs/..., demo/...: a shipped config goes by its name, so the
example runs from any directory; tests/cli/test_help_examples.sh runs them all); and the help marks no option
REQUIRED under both its spellings. Reads the CLI's own definitions
(`omn-audit --describe-commands`), so a renamed or removed flag fails here, not in a user's shell.

usage: check_help_examples.py OMN_AUDIT SOURCE_DIR
"""
import json
import os
import shlex
import subprocess
import sys

omn, src = sys.argv[1], sys.argv[2]
described = [json.loads(line) for line in
             subprocess.run([omn, "--describe-commands"], check=True, capture_output=True, text=True).stdout.splitlines() if line.strip()]
failures = []
seen = 0
for doc in described:
    global_names = {n for o in doc["global"] for n in o["names"]}
    for cmd in doc["commands"]:
        name, footer = cmd["name"], cmd["footer"]
        seen += 1
        if not footer.startswith("Examples:\n"):
            failures.append("%s: --help has no Examples: footer" % name)
            continue
        names = global_names | {n for o in cmd["options"] for n in o["names"]}
        lines = [l.strip() for l in footer.splitlines()[1:] if l.strip()]
        if not lines:
            failures.append("%s: an Examples: footer with no example" % name)
        for line in lines:
            words = shlex.split(line, comments=True)  # "# exit 3 on drift": what the example ends in
            if "|" in words and words[0] != "omn-audit":  # `cat model.pt | omn-audit hash`: the command after the pipe
                words = words[words.index("|") + 1:]
            if words[:2] != ["omn-audit", name]:
                failures.append("%s: example %r does not run omn-audit %s" % (name, line, name))
                continue
            for w in words[2:]:
                if w in ("|", ">", "<") or w.startswith(">"):
                    break
                if w.startswith("-") and w != "-":
                    flag = w.split("=", 1)[0]
                    if flag not in names:
                        failures.append("%s: example %r uses %s, which is not an option of %s" % (name, line, flag, name))
                elif w.split("/", 1)[0] in ("configs", "demo"):
                    failures.append("%s: example %r names the repository path %s: it fails outside the repository (name a "
                                    "shipped config by its name, or a user's file)" % (name, line, w))
        helped = subprocess.run([omn, name, "--help"], capture_output=True, text=True)
        if helped.returncode != 0 or lines and lines[-1] not in helped.stdout:
            failures.append("%s: --help (exit %d) does not print the examples" % (name, helped.returncode))
        # the help says each thing once and truly: no REQUIRED on both spellings of one option (the
        # positional and its --flag), no "(1x)" on a positional that takes one or two
        required = [l.split()[0] for l in helped.stdout.splitlines() if " REQUIRED" in l and l.startswith("  ")]
        for spelled in required:
            if "--" + spelled in required:
                failures.append("%s: --help marks both %s and --%s REQUIRED (one of them is)" % (name, spelled, spelled))
        usage = next((l for l in helped.stdout.splitlines() if l.startswith("Usage:")), "")
        if "x)" in usage:
            failures.append("%s: usage line %r counts a positional as '(Nx)'" % (name, usage))

if seen < 6:
    failures.append("only %d commands described: expected the built-in ones at least" % seen)
for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("ok: %d commands, each --help with examples that name only their own options and existing paths" % seen)
