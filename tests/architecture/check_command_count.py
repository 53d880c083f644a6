#!/usr/bin/env python3
"""docs/ARCHITECTURE.md's count for adding a command, counted: every command is one row and one
cmd_<name>.cpp whose adder its declaring header names, and nothing else names commands.

  - the CLI's own: a row {"name", omn::cli::addXCommand} in kOwnCommands (tools/omn-audit/main.cpp),
    addXCommand declared in tools/omn-audit/commands.h and defined in tools/omn-audit/cmd_<name>.cpp
    (three files);
  - a plugin's: a row {"name", PluginId::P, ...} in kPluginCommands (tools/omn-audit/plugin_commands.h),
    its adder declared in that plugin's model_commands.h (torch) or defined in its folder, defined in
    tools/omn-audit/<plugin>/cmd_<name>.cpp and registered by the plugin's plugin_main.cpp (four);
  - no cmd_*.cpp without a row, no row without its cmd_*.cpp, no name in two tables; and the count
    ARCHITECTURE.md states ("three files, four for a plugin's") is the one this check applies.

usage: check_command_count.py SOURCE_DIR
"""
import os
import re
import sys

FAILURES = []


def fail(msg):
    FAILURES.append(msg)


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def adder(name):
    return "add" + name[:1].upper() + name[1:] + "Command"


def main():
    root = sys.argv[1]
    cli = "tools/omn-audit"
    main_cpp = read(root, cli + "/main.cpp")
    table = re.search(r"kOwnCommands\[\]\s*=\s*\{(.*?)\n\};", main_cpp, re.S)
    own = re.findall(r'\{"([a-z-]+)",\s*omn::cli::(add\w+Command)\}', table.group(1)) if table else []
    if not own:
        fail("tools/omn-audit/main.cpp: no kOwnCommands rows found")
    plugin_h = read(root, cli + "/plugin_commands.h")
    ptable = re.search(r"kPluginCommands\[\]\s*=\s*\{(.*?)\n\};", plugin_h, re.S)
    plugin = re.findall(r'\{"([a-z-]+)",\s*PluginId::(\w+)', ptable.group(1)) if ptable else []
    if not plugin:
        fail("tools/omn-audit/plugin_commands.h: no kPluginCommands rows found")
    names = [n for n, _ in own] + [n for n, _ in plugin]
    for n in set(names):
        if names.count(n) > 1:
            fail("command %s has %d rows" % (n, names.count(n)))

    commands_h = read(root, cli + "/commands.h")
    for name, fn in own:
        if fn != adder(name):
            fail("kOwnCommands: %s's adder is %s, expected %s" % (name, fn, adder(name)))
        path = "%s/cmd_%s.cpp" % (cli, name)
        if not os.path.exists(os.path.join(root, path)):
            fail("%s: missing (the CLI's command %s)" % (path, name))
        elif not re.search(r"\b%s\s*\(" % fn, read(root, path)):
            fail("%s does not define %s" % (path, fn))
        if not re.search(r"\b%s\s*\(" % fn, commands_h):
            fail("tools/omn-audit/commands.h does not declare %s" % fn)

    for name, pid in plugin:
        folder = {"Torch": "torch", "Text": "text"}.get(pid)
        if folder is None:
            fail("kPluginCommands: %s names an unknown plugin %s" % (name, pid))
            continue
        path = "%s/%s/cmd_%s.cpp" % (cli, folder, name)
        if not os.path.exists(os.path.join(root, path)):
            fail("%s: missing (the %s plugin's command %s)" % (path, folder, name))
            continue
        fn = adder(name)
        if not re.search(r"\b%s\s*\(" % fn, read(root, path)):
            fail("%s does not define %s" % (path, fn))
        if folder == "torch" and not re.search(r"\b%s\s*\(" % fn, read(root, cli + "/torch/model_commands.h")):
            fail("tools/omn-audit/torch/model_commands.h does not declare %s" % fn)
        entry = read(root, "%s/%s/plugin_main.cpp" % (cli, folder))
        if not re.search(r"\b%s\b" % fn, entry):
            fail("%s/%s/plugin_main.cpp does not register %s" % (cli, folder, fn))

    for folder in ("", "torch", "text"):
        d = os.path.join(root, cli, folder)
        for f in os.listdir(d):
            m = re.fullmatch(r"cmd_([a-z_-]+)\.cpp", f)
            if m and m.group(1) not in names:
                fail("%s: a command file with no row in kOwnCommands or kPluginCommands" % os.path.join(cli, folder, f))

    arch = read(root, "docs/ARCHITECTURE.md")
    if "three files, four for a plugin's" not in arch:
        fail("docs/ARCHITECTURE.md no longer states the count this check applies (\"three files, four for a plugin's\")")

    for f in FAILURES:
        print("FAIL: " + f)
    if FAILURES:
        return 1
    print("commands: %d of the CLI's own and %d in plugins, each one row and one cmd_<name>.cpp with its adder declared "
          "where ARCHITECTURE.md says" % (len(own), len(plugin)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
