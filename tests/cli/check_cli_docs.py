#!/usr/bin/python3
"""The man page and the completions are the CLI's definitions, whole: tools/cli-docs.py's bash
completion, run in bash, offers every command, every option of each command (also after a global
flag) and exactly the choices of each option with a closed set; the zsh completion names the same
options and choices; the man page lists every command and option and renders with man(1).

usage: check_cli_docs.py OMN_AUDIT SOURCE_DIR WORK_DIR
"""
import json
import re
import os
import shlex
import shutil
import subprocess
import sys

omn, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
subprocess.run(["/usr/bin/python3", os.path.join(src, "tools", "cli-docs.py"), omn, work], check=True)
docs = [json.loads(l) for l in subprocess.run([omn, "--describe-commands"], check=True, capture_output=True, text=True).stdout.splitlines() if l.strip()]
commands = [c for d in docs for c in d["commands"]]
global_flags = [n for o in docs[0]["global"] for n in o["names"]]
failures = []

# one bash process answers every query: each prints its words on one line
queries = [("commands", ["omn-audit", ""]), ("commands after -q", ["omn-audit", "-q", ""])]
for c in commands:
    queries.append(("%s options" % c["name"], ["omn-audit", c["name"], "-"]))
    queries.append(("%s options after -v" % c["name"], ["omn-audit", "-v", c["name"], "-"]))
    for o in c["options"]:
        if o["choices"]:
            for n in o["names"]:
                queries.append(("%s %s" % (c["name"], n), ["omn-audit", c["name"], n, ""]))
script = ["source %s" % shlex.quote(os.path.join(work, "omn-audit.bash"))]
for _, words in queries:
    script.append("COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _omn_audit; echo \"${COMPREPLY[*]}\""
                  % (" ".join(shlex.quote(w) for w in words), len(words) - 1))
answers = subprocess.run(["bash", "-c", "\n".join(script)], check=True, capture_output=True, text=True, cwd=work).stdout.split("\n")
got = {name: set(answers[i].split()) for i, (name, _) in enumerate(queries)}

names = {c["name"] for c in commands} | {"help"}
for q in ("commands", "commands after -q"):
    if got[q] != names:
        failures.append("bash: %s: offered %s, expected %s" % (q, sorted(got[q]), sorted(names)))
for c in commands:
    want = {n for o in c["options"] for n in o["names"] if n not in ("-h", "--help") and n.startswith("-")}
    for q in ("%s options" % c["name"], "%s options after -v" % c["name"]):
        missing = want - got[q]
        if missing:
            failures.append("bash: %s: does not offer %s" % (q, sorted(missing)))
    for o in c["options"]:
        if o["choices"]:
            for n in o["names"]:
                if got["%s %s" % (c["name"], n)] != set(o["choices"]):
                    failures.append("bash: %s %s: offered %s, expected the choices %s" % (c["name"], n, sorted(got["%s %s" % (c["name"], n)]), o["choices"]))

# --describe-commands says truthfully which options take a value: a switch takes none (issue 50:
# all 46 said they did); CLI11 names no type for a switch
for c in commands:
    for o in c["options"]:
        if o["takes_value"] != (o["type"] != ""):
            failures.append("describe: %s %s: takes_value %s, but its type is %r" % (c["name"], o["names"] or o["positional"], o["takes_value"], o["type"]))
switches = {(c["name"], n) for c in commands for o in c["options"] if not o["takes_value"] for n in o["names"]}
for want in [("profile", "--force"), ("profile", "--help"), ("profile", "--no-tables"), ("hash", "--quiet"), ("track", "--force")]:
    if want not in switches:
        failures.append("describe: %s %s is a switch, described as taking a value" % want)
if ("profile", "--threshold") in switches:
    failures.append("describe: profile --threshold takes a value, described as a switch")

zsh = open(os.path.join(work, "_omn-audit")).read()
if not zsh.startswith("#compdef omn-audit"):
    failures.append("zsh: the file does not start with #compdef omn-audit")
for c in commands:
    if "        %s)" % c["name"] not in zsh:
        failures.append("zsh: no case for %s" % c["name"])
    for o in c["options"]:
        for n in o["names"]:
            if n not in ("-h", "--help") and n not in zsh:
                failures.append("zsh: %s %s missing" % (c["name"], n))
        if o["choices"] and "(%s)" % " ".join(o["choices"]) not in zsh:
            failures.append("zsh: %s: the choices of %s missing" % (c["name"], o["names"]))
if shutil.which("zsh"):
    r = subprocess.run(["zsh", "-n", os.path.join(work, "_omn-audit")], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append("zsh -n: " + r.stderr.strip())

page = subprocess.run(["man", "-l", os.path.join(work, "omn-audit.1")], capture_output=True, text=True, env=dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0"))
if page.returncode != 0:
    failures.append("man -l: exit %d: %s" % (page.returncode, page.stderr.strip()))
text = re.sub(".\x08", "", page.stdout).replace("\u2010", "-").replace("\u2212", "-")  # overstrike bold, hyphens
for c in commands:
    if "   %s\n" % c["name"] not in text:
        failures.append("man: no section for %s" % c["name"])
    for o in c["options"]:
        for n in o["names"]:
            if n not in ("-h", "--help") and n not in text:
                failures.append("man: %s %s missing" % (c["name"], n))
for code in ("0", "2", "3", "4", "130"):
    if not re.search(r"^\s+%s\s" % code, text[text.find("EXIT STATUS"):], re.M):
        failures.append("man: exit status %s missing" % code)
for f in failures:
    print("FAIL", f)
if failures:
    sys.exit(1)
print("ok: %d commands; bash offered %d option and choice sets; zsh and the man page name every option" % (len(commands), len(queries)))
