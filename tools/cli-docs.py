#!/usr/bin/python3
"""The man page and the bash and zsh completions of omn-audit, generated from the CLI's own definitions.

  cli-docs.py OMN_AUDIT OUT_DIR      writes OUT_DIR/omn-audit.1, OUT_DIR/omn-audit.bash, OUT_DIR/_omn-audit

OMN_AUDIT --describe-commands prints one JSON line for the built-in commands and one per plugin
(tools/omn-audit/describe.h): each command's options, positionals, choices and examples, read from the
same CLI11 definitions that parse the command line, so neither the page nor the completions can offer
an option the tool does not take. The build runs this after the binary and its plugins
(CMakeLists.txt, target omn_cli_docs); `cmake --install` puts the page in share/man/man1 and the
completions where bash-completion and zsh look for them.
"""
import json
import os
import subprocess
import sys

# README.md, "Exit codes": the one table users read; the page repeats it
EXIT_CODES = [
    ("0", "success"),
    ("1", "anything unexpected (a bug: please report it)"),
    ("2", "invalid usage or invalid input (a file's format, a preset, a baseline, a tolerance file; an output that exists without --force)"),
    ("3", "regression: the profile (or a tracked checkpoint) drifted from its --baseline"),
    ("4", "integrity failure: SHA-256 mismatch, a gain restore that is not bitwise, a closing control that does not reproduce the opening one"),
    ("5", "the system failed a read or write (disk full, a read error, a refused rename)"),
    ("130", "interrupted by Ctrl-C / SIGTERM: the journal is valid, --resume continues"),
]


def describe(omn):
    out = subprocess.run([omn, "--describe-commands"], check=True, capture_output=True, text=True).stdout
    docs = [json.loads(line) for line in out.splitlines() if line.strip()]
    title = docs[0]["title"]
    if title.startswith("omn-audit: "):
        title = title[len("omn-audit: "):]
    global_opts = docs[0]["global"]
    commands = [c for d in docs for c in d["commands"]]
    return title, global_opts, commands


def takes_value(o):
    return o["takes_value"]  # a switch (--force) takes none


def flags(o):
    return [n for n in o["names"] if n not in ("-h", "--help")] if o["names"] else []


# --- the man page -------------------------------------------------------------------------------
def roff(text):
    text = text.replace("\\", "\\\\").replace("-", "\\-")
    return "\n".join(("\\&" + l) if l.startswith((".", "'")) else l for l in text.split("\n"))


def option_line(o):
    names = ", ".join("\\fB%s\\fR" % roff(n) for n in o["names"])
    if takes_value(o):
        names += " \\fI%s\\fR" % roff(o["type"])
    return names


def man_page(title, global_opts, commands):
    out = ['.TH OMN\\-AUDIT 1 "" "omn-audit" "User Commands"',
           ".SH NAME", "omn\\-audit \\- " + roff(title),
           ".SH SYNOPSIS", "\\fBomn\\-audit\\fR [\\fIglobal options\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]",
           ".br", "\\fBomn\\-audit help\\fR \\fICOMMAND\\fR",
           ".SH DESCRIPTION",
           "Each command writes JSON documents that record what they were computed from (the inputs' SHA\\-256, "
           "the options, the code's revision). \\fBomn\\-audit\\fR \\fICOMMAND\\fR "
           "\\fB\\-\\-help\\fR prints what is below for one command.",
           ".SH GLOBAL OPTIONS"]
    for o in global_opts:
        out += [".TP", option_line(o), roff(o["description"])]
    out.append(".SH COMMANDS")
    for c in commands:
        out += [".SS " + roff(c["name"]), roff(c["description"])]
        positionals = [o for o in c["options"] if o["positional"]]
        if positionals:
            out += [".PP", "Arguments: " + ", ".join("\\fI%s\\fR%s" % (roff(o["positional"]), " ..." if o["repeatable"] else "")
                                                     for o in positionals)]
            for o in positionals:
                out += [".TP", "\\fI%s\\fR" % roff(o["positional"]), roff(o["description"])]
        for o in c["options"]:
            if not flags(o):  # a positional alone (one with a flag too, like eval's --checkpoint, is listed here as well)
                continue
            desc = o["description"]
            if o["default"]:
                desc += " (default: %s)" % o["default"]
            if o["required"]:
                desc += " (required)"
            out += [".TP", option_line(o), roff(desc)]
        examples = [l.strip() for l in c["footer"].splitlines()[1:] if l.strip()] if c["footer"].startswith("Examples:") else []
        if examples:
            out += [".PP", "Examples:", ".RS", ".nf"] + [roff(e) for e in examples] + [".fi", ".RE"]
    out.append(".SH EXIT STATUS")
    for code, meaning in EXIT_CODES:
        out += [".TP", "\\fB%s\\fR" % code, roff(meaning)]
    out += [".SH ENVIRONMENT", ".TP", "\\fBNO_COLOR\\fR", "set: no colour in messages.",
            ".TP", "\\fBOMP_NUM_THREADS\\fR", "the CPU threads a model command uses when \\-\\-threads is 0 (its default).",
            ".SH SEE ALSO", "\\fBsha256sum\\fR(1); the README and docs/ of the omn\\-audit source."]
    return "\n".join(out) + "\n"


# --- bash ---------------------------------------------------------------------------------------
def sh_words(words):
    return " ".join(words).replace("'", "")


def bash_completion(global_opts, commands):
    names = [c["name"] for c in commands] + ["help"]
    g_flags = [n for o in global_opts for n in o["names"]]
    g_values = [n for o in global_opts if takes_value(o) for n in o["names"]]
    lines = ["# bash completion for omn-audit: generated by tools/cli-docs.py from omn-audit --describe-commands; do not edit",
             "_omn_audit() {",
             "  local cur prev cmd i",
             "  cur=\"${COMP_WORDS[COMP_CWORD]}\"",
             "  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
             "  cmd=\"\"",
             "  for ((i = 1; i < COMP_CWORD; i++)); do",
             "    case \"${COMP_WORDS[i]}\" in",
             "      %s) ;;" % "|".join(g_values) if g_values else "      --*) ;;",
             "      -*) ;;",
             "      *) if [ -z \"$cmd\" ]; then case \"${COMP_WORDS[i-1]}\" in %s) ;; *) cmd=\"${COMP_WORDS[i]}\" ;; esac; fi ;;"
             % ("|".join(g_values) if g_values else "--no-such-option"),
             "    esac",
             "  done",
             "  if [ -z \"$cmd\" ] || [ \"$cmd\" = help ]; then",
             "    if [[ \"$cur\" == -* ]] && [ -z \"$cmd\" ]; then COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return; fi" % sh_words(g_flags),
             "    COMPREPLY=($(compgen -W '%s' -- \"$cur\"))" % sh_words(names),
             "    return",
             "  fi",
             "  case \"$cmd\" in"]
    for c in commands:
        opts = [n for o in c["options"] for n in flags(o)] + g_flags
        lines.append("    %s)" % c["name"])
        lines.append("      case \"$prev\" in")
        for o in c["options"]:
            if not flags(o) or not takes_value(o):
                continue
            if o["choices"]:
                lines.append("        %s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;" % ("|".join(flags(o)), sh_words(o["choices"])))
        value_opts = [n for o in c["options"] if flags(o) and takes_value(o) and not o["choices"] for n in flags(o)]
        if value_opts:
            lines.append("        %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;" % "|".join(value_opts))
        lines.append("      esac")
        lines.append("      if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return; fi" % sh_words(opts))
        lines.append("      COMPREPLY=($(compgen -f -- \"$cur\")) ;;")
    lines += ["  esac", "}", "complete -o filenames -o bashdefault -F _omn_audit omn-audit", ""]
    return "\n".join(lines)


# --- zsh ----------------------------------------------------------------------------------------
def zq(text):
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh_spec(o):
    desc = zq(o["description"].split(";")[0][:80])
    names = flags(o)
    if not names:
        return []
    value = ""
    if takes_value(o):
        value = ":%s:%s" % (zq(o["type"].split(":")[0].split("=")[0] or "value"),
                            "(%s)" % " ".join(o["choices"]) if o["choices"] else "_files")
    rep = "*" if o["repeatable"] else ""
    if len(names) == 1:
        return ["'%s%s[%s]%s'" % (rep, names[0], desc, value)]
    prefix = rep or "(%s)" % " ".join(names)  # a one-shot option's names exclude each other
    return ["'%s'{%s}'[%s]%s'" % (prefix, ",".join(names), desc, value)]


def zsh_completion(global_opts, commands):
    lines = ["#compdef omn-audit",
             "# zsh completion for omn-audit: generated by tools/cli-docs.py from omn-audit --describe-commands; do not edit",
             "_omn_audit() {",
             "  local -a commands",
             "  commands=("]
    for c in commands:
        lines.append("    '%s:%s'" % (c["name"], zq(c["description"][:90])))
    lines += ["    'help:print a command'\\''s help'", "  )",
              "  local curcontext=\"$curcontext\" state line",
              "  _arguments -C \\"]
    for o in global_opts:
        for spec in zsh_spec(o):
            lines.append("    %s \\" % spec)
    lines += ["    '1:command:->command' \\", "    '*::arg:->args'",
              "  case $state in",
              "    command) _describe -t commands 'omn-audit command' commands ;;",
              "    args)",
              "      case $line[1] in"]
    for c in commands:
        specs = [s for o in c["options"] for s in zsh_spec(o)]
        lines.append("        %s)" % c["name"])
        lines.append("          _arguments \\")
        for s in specs:
            lines.append("            %s \\" % s)
        lines.append("            '*:file:_files' ;;")
    lines += ["        help) _describe -t commands 'omn-audit command' commands ;;",
              "      esac ;;", "  esac", "}", "_omn_audit \"$@\"", ""]
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    omn, out_dir = sys.argv[1], sys.argv[2]
    title, global_opts, commands = describe(omn)
    os.makedirs(out_dir, exist_ok=True)
    for name, text in (("omn-audit.1", man_page(title, global_opts, commands)),
                       ("omn-audit.bash", bash_completion(global_opts, commands)),
                       ("_omn-audit", zsh_completion(global_opts, commands))):
        path = os.path.join(out_dir, name)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)


if __name__ == "__main__":
    main()
