#!/usr/bin/env bash
# intervene --resume reuses only the records of this sweep (issue 50): a record spliced from another
# manifest's journal, one of a sweep over other rows, one that is no pass of this sweep and one
# re-signed with a negative NLL sum or other token counts are refused, exit 2 naming the journal, its
# line and the key; the sweep's own journal resumes to the uninterrupted result.
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
mini_manifest 3  # $tmp/m.json: 3 conditions, 4 rows
# variant NAME EDIT: $tmp/m.json with a python edit of m
variant() {
  /usr/bin/python3 - "$tmp/m.json" "$tmp/$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"))
PY
}
# a sweep that ran every pass but could not write its CSV (/dev/full, exit 5) keeps its journal whole
journaled() {  # journaled MANIFEST OUT [FLAG...]
  "$omn" -q intervene --manifest "$1" -o "$2" --csv /dev/full "${@:3}" >/dev/null 2>&1
  [ -s "$2.journal" ] || echo "FAIL: no journal left at $2.journal"
}
variant other.json 'm["bootstrap"]["seed"] = 99'          # another manifest, the same conditions and rows
variant rows.json 'm["rows"]["num_seqs"] = 3; m["groups"] = 3'  # another manifest over other rows
variant more.json 'm["conditions"].append({"op": "scale", "values": [0.25, 0.75], "targets": ["qk"], "layers": "all"})'  # c11, c12: no pass of m.json's
journaled "$tmp/m.json" "$tmp/a.json"
journaled "$tmp/other.json" "$tmp/o.json"
journaled "$tmp/rows.json" "$tmp/r.json"
journaled "$tmp/more.json" "$tmp/x.json"
journaled "$tmp/m.json" "$tmp/mk.json" --mechanism --kl
cp "$tmp/a.json.journal" "$tmp/a.keep"

# splice JOURNAL LINE_NO FROM_JOURNAL FROM_LINE_NO: line LINE_NO of JOURNAL replaced by FROM's line
splice() { /usr/bin/python3 - "$@" <<'PY'
import sys
j, n, f, m = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
lines = open(j).read().splitlines(True)
lines[n - 1] = open(f).read().splitlines(True)[m - 1]
open(j, "w").write("".join(lines))
PY
}
# resign JOURNAL LINE_NO EDIT: a python edit of record r on that line (load(line) reads another), its
# journal_sha256 made anew as the tool makes it (the record's compact JSON, keys sorted; each number
# read keeps the tool's digits, which are not always Python's: 1.9999771118164063 for its ...62)
resign() { /usr/bin/python3 - "$@" <<'PY'
import hashlib, json, re, sys
j, n, edit = sys.argv[1], int(sys.argv[2]), sys.argv[3]
raw = []
def keep(text):
    raw.append(text)
    return "\0F%d\0" % (len(raw) - 1)
load = lambda text: json.loads(text, parse_float=keep)
dump = lambda r: re.sub(r'"\\u0000F(\d+)\\u0000"', lambda m: raw[int(m.group(1))],
                        json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
lines = open(j).read().splitlines(True)
r = load(lines[n - 1])
r.pop("journal_sha256")
exec(edit)
r["journal_sha256"] = hashlib.sha256(dump(r).encode()).hexdigest()
lines[n - 1] = dump(r) + "\n"
open(j, "w").write("".join(lines))
PY
}
resume() { "$omn" -q intervene --manifest "$tmp/m.json" -o "$tmp/a.json" --resume; }
jn="$tmp/a.json.journal"
line_of() { grep -n "\"id\":\"$2\"" "$1" | cut -d: -f1; }
c0=$(line_of "$jn" c0)

# the checksum the tests below make is the tool's own: re-signing an unedited record changes nothing
resign "$jn" "$c0" 'pass'
check "re-signing an unedited record reproduces the tool's journal_sha256" -- cmp -s "$jn" "$tmp/a.keep"

splice "$jn" "$c0" "$tmp/o.json.journal" "$(line_of "$tmp/o.json.journal" c0)"
expect 2 "journal $tmp/a.json.journal: line $c0 record c0: /sweep_sha256: the record is another sweep's" -- resume
cp "$tmp/a.keep" "$jn"
splice "$jn" "$c0" "$tmp/r.json.journal" "$(line_of "$tmp/r.json.journal" c0)"
expect 2 "journal $tmp/a.json.journal: line $c0 record c0: /sweep_sha256" -- resume
cp "$tmp/a.keep" "$jn"
splice "$jn" "$c0" "$tmp/x.json.journal" "$(line_of "$tmp/x.json.journal" c12)"
expect 2 "journal $tmp/a.json.journal: line $c0: record c12 is no pass of this sweep" -- resume
# re-signed records: the checksum holds, the numbers are no pass's
cp "$tmp/a.keep" "$jn"
resign "$jn" "$c0" 'r["scores"]["nll_sum"][1] = -3.5'
expect 2 "line $c0 record c0: /scores/nll_sum/1: expected an NLL sum >= 0, got -3.5" -- resume
cp "$tmp/a.keep" "$jn"
resign "$jn" "$c0" 'r["scores"]["nll_sum"].pop(); r["scores"]["tokens"].pop()'
expect 2 "line $c0 record c0: /scores/tokens: expected one count per row of this sweep \(4\), got 3" -- resume
cp "$tmp/a.keep" "$jn"
resign "$jn" "$c0" 'r["scores"]["tokens"][2] += 1'
expect 2 "line $c0 record c0: /scores/tokens/2: expected the [0-9]+ tokens row 2 scores, got [0-9]+" -- resume
cp "$tmp/a.keep" "$jn"
resign "$jn" 2 'r["scores"]["nll_sum"][0] = -1.0'
expect 2 "line 2 record control_open: /scores/nll_sum/0: expected an NLL sum >= 0" -- resume
check "a refused journal is kept as it was found, for the user to look at" -- test -s "$jn"

# the sweep's own journal resumes every record to the uninterrupted result
cp "$tmp/a.keep" "$jn"
cp "$tmp/a.json" "$tmp/a.first.json"
expect 0 "" -- resume
check "no journal left after the resume" -- test ! -e "$jn"
check "the resumed result holds the journaled numbers" -- /usr/bin/python3 - "$tmp/a.first.json" "$tmp/a.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
seq = lambda d: [d["control"]["open"]["result"]["sequences"]] + [c["result"]["sequences"] for c in d["conditions"]]
sys.exit(0 if seq(a) == seq(b) else 1)
PY
# with --mechanism and --kl, every pass's table and (but the opening control's) sums are journaled and
# reused; a record re-signed without them is refused at the part, not resumed into a result with a
# null row (the opening control is --kl's reference: it has no sums)
jk="$tmp/mk.json.journal"
cp "$jk" "$tmp/mk.keep"
cp "$tmp/mk.json" "$tmp/mk.first.json"
resume_mk() { "$omn" -q intervene --manifest "$tmp/m.json" -o "$tmp/mk.json" --mechanism --kl --resume; }
c0=$(line_of "$jk" c0)
resign "$jk" "$c0" 'pass'
check "re-signing an unedited record with --mechanism's table reproduces the tool's journal_sha256" -- cmp -s "$jk" "$tmp/mk.keep"
resign "$jk" "$c0" 'r["mechanism"] = None'
expect 2 "line $c0 record c0: /mechanism: expected one row per layer \([0-9]+\): this sweep runs with --mechanism" -- resume_mk
cp "$tmp/mk.keep" "$jk"
resign "$jk" "$c0" 'r["mechanism"].pop()'
expect 2 "line $c0 record c0: /mechanism: expected one row per layer \(([0-9]+)\), got" -- resume_mk
cp "$tmp/mk.keep" "$jk"
resign "$jk" "$(line_of "$jk" control_close)" 'r["divergence"] = None'
expect 2 "record control_close: /divergence: expected --kl's sums: this sweep runs with --kl" -- resume_mk
cp "$tmp/mk.keep" "$jk"
resign "$jk" 2 'r["divergence"] = load(lines['"$((c0 - 1))"'])["divergence"]'
expect 2 "line 2 record control_open: /divergence: expected null: this sweep runs without --kl \(or the record is the opening control" -- resume_mk
cp "$tmp/mk.keep" "$jk"
expect 0 "" -- resume_mk
check "with --mechanism --kl the resumed result holds the journaled tables and sums" -- /usr/bin/python3 - "$tmp/mk.first.json" "$tmp/mk.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
parts = lambda d: [(p["mechanism"], p.get("divergence")) for p in [d["control"]["open"], d["control"]["close"]] + d["conditions"]]
sys.exit(0 if parts(a) == parts(b) and all(m for m, _ in parts(a)) and parts(a)[1][1] else 1)
PY
finish
