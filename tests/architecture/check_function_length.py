#!/usr/bin/python3
"""No function over 100 lines (docs/ARCHITECTURE.md, "The shape of a function"): every function
defined in src/ and tools/omn-audit/ -- free functions, member functions, constructors, in .cpp and
.h files -- is measured from the first line of its signature to its closing brace, and one over the
limit fails the test with its file:line, name and length.

A small brace-aware scanner, not a parser: it blanks comments, string literals (raw ones too),
character literals and preprocessor lines, then walks the braces. A brace opened where declarations
live (a file, a namespace, a class body) is a function's body when what precedes it reads like a
signature (parentheses, no `=`), a scope to look inside when it follows namespace / class / struct /
union / extern "C", and anything else (an initializer, an enum) is skipped whole. Lambdas and local
classes count as part of the function that holds them.

  check_function_length.py SOURCE_DIR [--limit N] [--list M]   (--list M: print every function over M lines)
"""
import os
import re
import sys

LIMIT = 100
ROOTS = ("src", "tools/omn-audit")
EXTENSIONS = (".cpp", ".cc", ".c", ".h", ".hpp")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces (newlines kept,
    so offsets and line numbers still point into the original)."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only whitespace since the last newline: a '#' here starts a directive

    def wipe(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its backslash continuations
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                if text.startswith("//", j):
                    j = text.find("\n", j)
                    j = n if j < 0 else j
                    break
                if text.startswith("/*", j):
                    e = text.find("*/", j + 2)
                    j = n if e < 0 else e + 2
                    continue
                j += 1
            wipe(i, j)
            i = j
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
            continue
        if text.startswith("/*", i):
            e = text.find("*/", i + 2)
            j = n if e < 0 else e + 2
            wipe(i, j)
            i = j
            continue
        raw = re.match(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(', text[i:i + 40])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i + raw.end())
            j = n if end < 0 else end + len(raw.group(1)) + 2
            wipe(i, j)
            i = j
            continue
        if c == '"' or (c == "'" and not digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            wipe(i + 1, min(j, n))  # keep the quotes: `extern "C"` still reads as extern
            i = j + 1
            continue
        i += 1
    return "".join(out)


def digit_separator(text, i):
    """Whether the ' at i separates digits (1'000'000) rather than opening a character literal."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_."):
        j -= 1
    return j < i and text[j].isdigit()


SCOPE = re.compile(r'^(?:template\s*<.*>\s*)?(?:inline\s+)?(?:namespace\b|extern\s*"\s*"\s*$|'
                   r"(?:class|struct|union)\b(?![^{]*\)\s*(?:const\s*)?$))", re.S)
ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
CONTROL = re.compile(r"^(?:if|for|while|switch|catch|do|else|try)\b")


def top_level_has(header, chars):
    depth = 0
    for k, ch in enumerate(header):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch in chars:
            if ch == "=" and re.search(r"operator\s*\S{0,2}$", header[:k + 1][:-1] + " ") is not None:
                continue
            if ch == "=" and (header[k - 1:k] in "=!<>" and k > 0 or header[k + 1:k + 2] == "="):
                continue
            return True
    return False


def is_signature(header):
    """Whether the text before a '{' at declaration level is a function's signature."""
    h = header.strip()
    if "(" not in h or CONTROL.match(h):
        return False
    if re.search(r"\boperator\b", h):
        return True
    return not top_level_has(h, "=")


def name_of(header):
    h = re.sub(r"\s+", " ", header.strip())
    h = re.sub(r"__attribute__ ?\(\(.*?\)\)|\[\[.*?\]\]", " ", h)
    m = re.search(r"([\w:~]*operator ?(?:\(\)|[^\w\s(]+|new|delete)|~?[A-Za-z_][\w:~]*) ?\(", h)
    return m.group(1) if m else h[:40]


def matching(text, i):
    """The index of the '}' closing the '{' at i."""
    depth = 0
    for k in range(i, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(text) - 1


def functions(text):
    """(name, first line, length in lines) of every function defined in `text` (C++ source)."""
    code = blank(text)
    line_at = []
    line = 1
    for ch in code:
        line_at.append(line)
        if ch == "\n":
            line += 1
    line_at.append(line)
    found = []

    def scan(begin, end):
        start = begin  # where the current declaration's text begins
        i = begin
        while i < end:
            ch = code[i]
            if ch == ";" or ch == "}":
                start = i + 1
            elif ch == "{":
                header = code[start:i]
                access = ACCESS.match(header)
                skip = access.end() if access else 0
                header = header[skip:]
                close = matching(code, i)
                lead = len(header) - len(header.lstrip())
                first = start + skip + lead
                if SCOPE.match(header.strip()):
                    scan(i + 1, close)
                    start = close + 1
                elif is_signature(header):
                    after = code[close + 1:close + 80].lstrip()
                    if after[:1] in (",", "{") and re.search(r"\)\s*(?:noexcept\s*)?:", header):
                        i = close + 1  # a member's brace initializer in a constructor's list
                        continue
                    found.append((name_of(header), line_at[first], line_at[close] - line_at[first] + 1))
                    start = close + 1
                else:
                    start = close + 1  # an initializer, an enum's list: nothing to measure inside
                i = close + 1
                continue
            i += 1

    scan(0, len(code))
    return found


def self_test():
    """The scanner can fail: a long function is caught and measured as a reader counts it, and
    braces in comments, strings, characters, raw strings and initializers mislead nothing."""
    body = "\n".join("  x += %d'000;  // }" % k for k in range(101))
    sample = ('#include <x>\n#define OPEN {\nnamespace a {\nstruct S {\n  int v{3};\n'
              '  S(int x) : v{x}, w_{"}"} {\n  }\n  public:\n  int get() const { return v; }\n};\n'
              'const char* r = R"d(})d";\nconst int table[] = {1, 2};\nenum class E { X, Y };\n'
              'int\nlong_one(int x) {\n' + body + '\n  char c = \'}\';\n  return x;\n}\n}  // namespace a\n')
    got = {name: (line, length) for name, line, length in functions(sample)}
    assert set(got) == {"S", "get", "long_one"}, got
    assert got["S"] == (6, 2) and got["get"] == (9, 1), got
    assert got["long_one"] == (14, 106), got  # from `int` to the closing brace


def main():
    args = sys.argv[1:]
    limit = int(args[args.index("--limit") + 1]) if "--limit" in args else LIMIT
    listed = int(args[args.index("--list") + 1]) if "--list" in args else None
    root = args[0]
    self_test()
    measured = []
    for sub in ROOTS:
        for folder, _, names in os.walk(os.path.join(root, sub)):
            for f in sorted(names):
                if f.endswith(EXTENSIONS):
                    path = os.path.join(folder, f)
                    rel = os.path.relpath(path, root)
                    with open(path, encoding="utf-8") as fh:
                        for name, line, length in functions(fh.read()):
                            measured.append((length, rel, line, name))
    assert len(measured) > 500, "found only %d functions under %s" % (len(measured), root)
    measured.sort(key=lambda m: (-m[0], m[1], m[2]))
    if listed is not None:
        for length, rel, line, name in measured:
            if length > listed:
                print("%s:%d: %s, %d lines" % (rel, line, name, length))
    over = [m for m in measured if m[0] > limit]
    for length, rel, line, name in over:
        print("FAIL: %s:%d: %s is %d lines (limit %d): split it into named steps" % (rel, line, name, length, limit))
    print("%d functions in %s; the longest %d lines; %d over %d" % (len(measured), " and ".join(ROOTS),
                                                                    measured[0][0], len(over), limit))
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
