#!/usr/bin/python3
"""The report layer reads no JSON (docs/ARCHITECTURE.md, "report/"): every document reaches it as its
struct (include/omn/documents/<kind>_document.h), read once at the edge. No file in src/report/ or
include/omn/report/ names nlohmann or a json type, or looks a member up by a string key
(x["key"], .value("key", ...), .contains("key"), .at("key"), .find("key"), .count("key")).

A small scanner, not a parser: comments are dropped and each string literal (raw ones too) becomes
one token (a character literal another), so "[" + x + "]" is text, never a lookup.

  check_report_json.py SOURCE_DIR [--self-test]
"""
import glob
import os
import re
import sys

LITERAL = re.compile(r'R"([^(\s]*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
COMMENT = re.compile(r"//[^\n]*|/\*(?:.|\n)*?\*/")
RULES = [
    (re.compile(r"\bnlohmann\b"), "names nlohmann"),
    (re.compile(r"\bjson\b"), "names a json type"),
    (re.compile(r"\[\s*STR\s*\]"), "looks a member up by key: [\"key\"]"),
    (re.compile(r"\.\s*(value|contains|at|find|count)\s*\(\s*STR"), "looks a member up by key: .%s(\"key\")"),
]


def code_of(text):
    """The text with string literals as STR and comments dropped (one pass, so neither hides the other)."""
    def sub(m):
        s = m.group(0)
        if s.startswith("//") or s.startswith("/*"):
            return "\n" * s.count("\n")
        return ("CHR" if s.startswith("'") else "STR") + "\n" * s.count("\n")
    return re.sub(COMMENT.pattern + "|" + LITERAL.pattern, sub, text)


def problems(path, text):
    out = []
    code = code_of(text)
    for rule, what in RULES:
        for m in rule.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            out.append("%s:%d: %s" % (path, line, what % m.group(1) if "%s" in what else what))
    return out


def self_test():
    bad = {'x["k"]': 1, 'x.value("k", 1)': 1, "nlohmann::json j;": 2, 'f(x).contains( "k")': 1}
    good = ['std::string s = "[" + a + "]";', '// x["k"] in a comment', 'o << "nlohmann json";', 'documents::jsonText(x);',
            'm.find(key)', 'auto r = R"(x["k"])";', "t.find('\\n', at)"]
    for text, n in bad.items():
        assert len(problems("t", text)) == n, (text, problems("t", text))
    for text in good:
        assert not problems("t", text), (text, problems("t", text))


def main():
    root = sys.argv[1]
    self_test()
    files = sorted(glob.glob(os.path.join(root, "src/report/*")) + glob.glob(os.path.join(root, "include/omn/report/*")))
    found = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            found += problems(os.path.relpath(f, root), fh.read())
    for p in found:
        print("FAIL " + p)
    print("%d report files checked, %d JSON reads" % (len(files), len(found)))
    return 1 if found or not files else 0


if __name__ == "__main__":
    sys.exit(main())
