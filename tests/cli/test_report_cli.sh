#!/usr/bin/env bash
# omn-audit plot / report: well-formed SVG and HTML (xmllint), one plotted point per layer and per
# condition, byte-identical output for the same JSON, and the report looked at in a real browser.
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
mini_manifest
"$omn" -q intervene --manifest "$tmp/m.json" --mechanism --kl >/dev/null 2>&1
"$omn" profile "$tmp/omn1-mini.pt" --json "$tmp/profile.json" --no-tables >/dev/null
# a plotted point is any marker (circle, square, triangle, diamond) of class "point"
count() { xmllint --xpath "count(//*[contains(concat(' ', @class, ' '), ' point ')])" "$1"; }

expect 0 "profile-layer-means.svg" -- "$omn" plot "$tmp/profile.json" -o "$tmp/p"
expect 0 "sweep-ppl-vs-constant.svg" -- "$omn" plot "$tmp/sweep.json" -o "$tmp/s"
expect 2 "-o -: plot writes a directory of figures, not a stream" -- "$omn" plot "$tmp/sweep.json" -o -
check "plot -o - made no directory named -" -- bash -c 'cd "$1" && "$2" plot "$3" -o - 2>/dev/null; test ! -e -' _ "$tmp" "$omn" "$tmp/sweep.json"
for f in "$tmp"/p/*.svg "$tmp"/s/*.svg; do check "$(basename "$f") is well-formed XML" -- xmllint --noout "$f"; done
# every figure names the CPU its numbers were computed on (the document's provenance host)
cpu=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/sweep.json'))['provenance']['host']['cpu'])")
caption() { /usr/bin/python3 -c "import sys, xml.dom.minidom as m; print(' '.join(t.firstChild.data for t in m.parse(sys.argv[1]).getElementsByTagName('text') if t.getAttribute('class') == 'caption' and t.firstChild))" "$1"; }
for f in "$tmp"/p/*.svg "$tmp"/s/*.svg; do check "$(basename "$f")'s caption names the CPU ($cpu)" -- bash -c 'case "$1" in *"$2"*) ;; *) exit 1;; esac' _ "$(caption "$f")" "$cpu"; done
layers=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$tmp/profile.json'))['layers']))")
conds=$(/usr/bin/python3 -c "import json; print(len(json.load(open('$tmp/sweep.json'))['conditions']))")
consts=$(/usr/bin/python3 -c "import json; print(sum(1 for c in json.load(open('$tmp/sweep.json'))['conditions'] if c['op']['op'] == 'constant' and c['op']['layers'] == 'all'))")
selective=$(/usr/bin/python3 -c "import json; print(sum(len(c['touched']) for c in json.load(open('$tmp/sweep.json'))['conditions'] if c['op']['layers'] != 'all'))")
check "layer means: one Q and one K point per layer ($((2 * layers)))" -- test "$(count "$tmp/p/profile-layer-means.svg")" -eq $((2 * layers))
check "RoPE asymmetry: two points per layer" -- test "$(count "$tmp/p/profile-rope-asymmetry.svg")" -eq $((2 * layers))
check "histogram: a bar per non-empty bin of the data's own bins (/distribution)" -- test "$(xmllint --xpath "count(//*[@class='bar'])" "$tmp/p/profile-histogram.svg")" -eq \
  "$(/usr/bin/python3 -c "import json; print(sum(1 for b in json.load(open('$tmp/profile.json'))['distribution']['bins'] if b['count']))")"
check "layer means: OMN-1's preset gets the 'layers 0–1' shading" -- test \
  "$(xmllint --xpath "count(//*[@class='layers-0-1'])" "$tmp/p/profile-layer-means.svg")" -eq 1
"$omn" profile "$src/demo/tiny-sotu/final.pt" --json "$tmp/demo-profile.json" --no-tables >/dev/null 2>&1
"$omn" plot "$tmp/demo-profile.json" -o "$tmp/pd" >/dev/null
check "layer means: a model of another preset (the demo's, omn) gets no 'layers 0–1' shading" -- test \
  "$(xmllint --xpath "count(//*[@class='layers-0-1'])" "$tmp/pd/profile-layer-means.svg")" -eq 0
check "threshold line drawn (OMN-1's preset: the audit's 1.43)" -- test "$(xmllint --xpath "count(//*[@class='threshold'])" "$tmp/p/profile-histogram.svg")" -eq 1
check "no threshold on another preset's model (the demo's) unless --threshold is given" -- \
  test "$(xmllint --xpath "count(//*[@class='threshold'])" "$tmp/pd/profile-histogram.svg")" -eq 0
check "--kl: one KL point per condition with a finite KL, the document's values in its CSV" -- /usr/bin/python3 - "$tmp/sweep.json" "$tmp/s" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
want = sorted(c["vs_control"]["divergence"]["kl_per_token"] for c in d["conditions"])
got = sorted(float(r["y"]) for r in csv.DictReader(open(sys.argv[2] + "/sweep-kl.csv")))
assert d["kl"] and want and got == want, (got, want)
PY
check "ratio plot: one point per condition ($conds)" -- test "$(count "$tmp/s/sweep-ratio.svg")" -eq "$conds"
check "ppl-vs-constant: one point per constant condition ($consts)" -- test "$(count "$tmp/s/sweep-ppl-vs-constant.svg")" -eq "$consts"
check "heatmap: one cell per touched tensor of layer-selective conditions ($selective)" -- \
  test "$(xmllint --xpath "count(//*[@class='cell'])" "$tmp/s/sweep-heatmap.svg")" -eq "$selective"
check "heatmap: each row's one paired ΔNLL and its CI written once, the document's" -- /usr/bin/python3 - "$tmp/s/sweep-heatmap.svg" "$tmp/sweep.json" <<'PY'
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[2]))
sel = [c for c in d["conditions"] if isinstance(c["op"], dict) and c["op"].get("layers") not in (None, "all")]
vals = [e.text for e in ET.parse(sys.argv[1]).getroot().iter() if e.get("class") == "row-value"]
assert len(vals) == len(sel), (vals, len(sel))
for v, c in zip(vals, sel):
    q = c["vs_control"]["delta_nll_per_token"]
    assert v == "ΔNLL %+.4f [%.4f, %.4f]" % (q["estimate"], q["low"], q["high"]), (v, q)
PY
check "mechanism figures with --mechanism data" -- test -s "$tmp/s/sweep-mechanism-entropy.svg" -a -s "$tmp/s/sweep-mechanism-max-logit.svg"
check "mechanism grid: a cell per condition and layer, a labelled row each (no tangle of lines)" -- /usr/bin/python3 - "$tmp/s" "$tmp/sweep.json" <<'PY'
import csv, json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[2]))
L = len(d["control"]["open"]["mechanism"])
conds = [c for c in d["conditions"] if isinstance(c.get("mechanism"), list) and len(c["mechanism"]) == L]
ns = "{http://www.w3.org/2000/svg}"
for name, key in (("sweep-mechanism-max-logit", "max_attention_logit"), ("sweep-mechanism-entropy", "attention_entropy")):
    root = ET.parse("%s/%s.svg" % (sys.argv[1], name)).getroot()
    classes = [e.get("class", "") for e in root.iter()]
    assert classes.count("cell") == L * len(conds) and classes.count("control-cell") == L, (name, classes.count("cell"))
    labels = [e.text for e in root.iter(ns + "text") if e.get("class") == "row-label"]
    assert labels == ["control"] + [c["id"] + "  " + c["label"] for c in conds], labels
    rows = list(csv.DictReader(open("%s/%s.csv" % (sys.argv[1], name))))
    got = {(r["series"], int(float(r["x"]))): float(r["y"]) for r in rows}
    for c in conds:
        for l in range(L):
            assert abs(got[(c["id"] + "  " + c["label"], l)] - c["mechanism"][l][key]) <= 1e-12 * max(1, abs(c["mechanism"][l][key]))
PY
check "captions carry the checkpoint hash prefix" -- grep -q "checkpoint sha256 $(sha256sum "$tmp/omn1-mini.pt" | cut -c1-12)" "$tmp/s/sweep-ratio.svg"
expect 0 "" -- "$omn" plot "$tmp/sweep.json" -o "$tmp/s2"
for f in "$tmp"/s/*.svg; do check "$(basename "$f"): same JSON, same bytes" -- cmp -s "$f" "$tmp/s2/$(basename "$f")"; done
expect 2 "exists: refusing to overwrite" -- "$omn" plot "$tmp/sweep.json" -o "$tmp/s"
# each figure's data beside it: a tidy CSV whose rows are the values drawn
for f in "$tmp"/s/*.svg "$tmp"/p/*.svg; do check "$(basename "$f"): its CSV beside it" -- test -s "${f%.svg}.csv"; done
check "ratio CSV: one row per condition, the change in % with its CI" -- /usr/bin/python3 - "$tmp/s/sweep-ratio.csv" "$tmp/sweep.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert list(rows[0]) == ["series", "x", "x_label", "y", "y_low", "y_high"], rows[0]
assert len(rows) == len(d["conditions"])
for r, c in zip(rows, d["conditions"]):
    q = c["vs_control"]["ppl_ratio"]
    assert abs(float(r["y"]) - (q["estimate"] - 1) * 100) < 1e-9 and abs(float(r["y_low"]) - (q["low"] - 1) * 100) < 1e-9, (r, q)
PY
check "ppl-vs-constant CSV: the whiskers are the paired ratio CI placed on the control (not the unpaired CI)" -- /usr/bin/python3 - "$tmp/s/sweep-ppl-vs-constant.csv" "$tmp/sweep.json" <<'PY'
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["series"] != "control"]
d = json.load(open(sys.argv[2]))
base = d["control"]["open"]["result"]["perplexity"]
by_label = {c["label"]: c for c in d["conditions"]}
assert rows, "no condition rows"
for r in rows:
    c = by_label[r["x_label"]]
    q = c["vs_control"]["ppl_ratio"]
    assert abs(float(r["y"]) - c["result"]["perplexity"]) <= 1e-9 * base, (r, c["result"]["perplexity"])
    assert abs(float(r["y_low"]) - base * q["low"]) <= 1e-9 * base and abs(float(r["y_high"]) - base * q["high"]) <= 1e-9 * base, (r, q)
PY
check "ppl-vs-constant: no control band (the unpaired CI is not the comparison's)" -- \
  test "$(xmllint --xpath "count(//*[@class='control-band'])" "$tmp/s/sweep-ppl-vs-constant.svg")" -eq 0
check "layer-means CSV: Q and K mean per layer, exact" -- /usr/bin/python3 - "$tmp/p/profile-layer-means.csv" "$tmp/profile.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
p = json.load(open(sys.argv[2]))
got = {(r["series"], int(float(r["x"]))): float(r["y"]) for r in rows}
for l in p["layers"]:
    assert got[("Q mean", l["layer"])] == l["q"]["mean"] and got[("K mean", l["layer"])] == l["k"]["mean"]
PY
expect 2 "/schema: expected" -- "$omn" plot "$tmp/m.json" -o "$tmp/x"

# the report: one self-contained file, well-formed, deterministic, with the warnings it must show
expect 0 "report.html" -- "$omn" report "$tmp/sweep.json" "$tmp/profile.json" -o "$tmp/report.html"
check "report.html is well-formed XML" -- xmllint --noout "$tmp/report.html"
check "report: contents, and a summary whose count of resolved conditions is the document's" -- /usr/bin/python3 - "$tmp/report.html" "$tmp/sweep.json" <<'PY'
import json, re, sys
h = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
assert '<nav><a href="#summary">Summary</a>' in h and 'id="summary"' in h and 'id="sweep"' in h and 'id="profile"' in h
n = sum(1 for c in d["conditions"] if c["vs_control"]["ppl_ratio"]["estimate"] is not None)
k = sum(1 for c in d["conditions"] if c["vs_control"]["ppl_ratio"]["low"] is not None and
        (c["vs_control"]["ppl_ratio"]["low"] > 1 or c["vs_control"]["ppl_ratio"]["high"] < 1))
m = re.search(r"excludes 1</td><td[^>]*>(\d+) of (\d+)</td>", h)
assert m and (int(m.group(1)), int(m.group(2))) == (k, n), (m and m.groups(), k, n)
assert "figure svg{max-width:100%;height:auto}" in h and 'name="viewport"' in h
PY
check "report embeds every figure inline" -- test "$(grep -o '<svg ' "$tmp/report.html" | wc -l)" -eq "$(($(ls "$tmp"/s/*.svg | wc -l) + 4))"
check "report fetches nothing from the network" -- bash -c "! grep -qE '(src|href)=\"(https?:)?//' '$tmp/report.html'"
check "report shows the manifest and the hashes" -- grep -q "$(sha256sum "$tmp/m.json" | cut -c1-64)" "$tmp/report.html"
expect 0 "" -- "$omn" report "$tmp/profile.json" "$tmp/sweep.json" -o "$tmp/report2.html"
check "report: same JSON, same bytes" -- cmp -s "$tmp/report.html" "$tmp/report2.html"
expect 0 "report.md" -- "$omn" report "$tmp/sweep.json" "$tmp/profile.json" -o "$tmp/report.md" --markdown
check "markdown report links its figures, written beside it" -- test -s "$tmp/report.md.figures/sweep-ratio.svg" -a \
  "$(grep -c '](report.md.figures/' "$tmp/report.md")" -ge 5
/usr/bin/python3 - "$tmp/sweep.json" "$tmp/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["provenance"]["inputs"][1]["verified"] = False
d["conditions"][0]["result"]["perplexity"] = None
d["conditions"][0]["result"]["non_finite"] = True
d["control"]["reproduced_bitwise"] = False
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "was not verified.*non-finite.*closing control differs|not verified" -- "$omn" report "$tmp/bad.json" -o "$tmp/bad.html"
check "report warns: unverified, NaN condition, non-reproducing control" -- bash -c \
  "grep -q 'was not verified' '$tmp/bad.html' && grep -q 'non-finite perplexity' '$tmp/bad.html' && grep -q 'closing control differs' '$tmp/bad.html'"
expect 2 "two documents of the same kind" -- "$omn" report "$tmp/sweep.json" "$tmp/bad.json" -o "$tmp/x.html"
# "No warnings: inputs verified" only where they are: a sharded checkpoint verified in part, an
# offsets file read without a pin (the report once said "inputs verified" of both)
expect 0 "" -- "$omn" report "$tmp/sweep.json" -o "$tmp/own.html"
check "the sweep's own report has no warnings" -- grep -q "No warnings: inputs verified" "$tmp/own.html"
/usr/bin/python3 - "$tmp/sweep.json" "$tmp/partial.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["checkpoint"]["verified"] = "partial"
d["provenance"]["inputs"].append({"role": "offsets", "path": "held.offsets.npy", "sha256": "0" * 64, "verified": False})
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "" -- "$omn" report "$tmp/partial.json" -o "$tmp/partial.html"
check "report warns: shards verified in part, an offsets file not verified; never 'No warnings'" -- bash -c \
  'grep -q "shards were not all verified (checkpoint.verified: partial)" "$1" && grep -q "offsets file held.offsets.npy was not verified" "$1" && ! grep -q "No warnings" "$1"' \
  _ "$tmp/partial.html"

# reported values (the historical record) beside the measured ones, each labelled as what it is
/usr/bin/python3 - "$tmp/m.json" "$tmp/mr.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["conditions"] = [{"op": "constant", "values": [2.0, 1.5, 1.0], "targets": ["qk"], "layers": "all",
                    "reported_perplexity": [24.08, 70.63, 692.08]}]
m["reported"] = {"source": "the historical OMN record", "control_perplexity": 12.97}
m["output"] = {"json": "reported.json"}
json.dump(m, open(sys.argv[2], "w"))
PY
expect 0 "closing control" -- "$omn" -q intervene --manifest "$tmp/mr.json"
expect 0 "report-reported.html" -- "$omn" report "$tmp/reported.json" -o "$tmp/report-reported.html"
check "reported against measured: the table, the source, both ratio columns (53.36x reported for 1.0)" -- bash -c \
  "grep -q 'Reported against measured' '$tmp/report-reported.html' && grep -q 'quoted from the historical OMN record' '$tmp/report-reported.html' \
   && grep -q '53.36×' '$tmp/report-reported.html' && grep -q '5.45×' '$tmp/report-reported.html' && grep -q '1.86×' '$tmp/report-reported.html'"
check "the result records the reported ratio beside the measured one" -- /usr/bin/python3 - "$tmp/reported.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["conditions"][2]
sys.exit(0 if abs(c["reported"]["ratio_to_reported_control"] - 692.08 / 12.97) < 1e-12 and "ppl_ratio" in c["vs_control"] else 1)
PY

# a real browser: headless Chromium renders the report to a non-blank screenshot
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
  echo "SKIP: browser check: chromium is not installed here (tools/deps.sh could not install it)"
else
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$tmp/chrome-profile" --window-size=1200,1600 \
    --screenshot="$tmp/report.png" "file://$tmp/report.html" >/dev/null 2>&1
  check "chromium screenshot of the report exists" -- test -s "$tmp/report.png"
  check "chromium screenshot is not blank" -- /usr/bin/python3 "$src/tests/cli/png_nonblank.py" "$tmp/report.png"
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$tmp/chrome-profile" --window-size=1200,1600 \
    --screenshot="$tmp/report-reported.png" "file://$tmp/report-reported.html" >/dev/null 2>&1
  check "chromium renders the reported-against-measured report (not blank)" -- \
    /usr/bin/python3 "$src/tests/cli/png_nonblank.py" "$tmp/report-reported.png"
  [ -n "${OMN_KEEP_SCREENSHOT:-}" ] && cp "$tmp/report.png" "$OMN_KEEP_SCREENSHOT"
  # what a reader needs, checked on the rendered figures (tests/cli/check_figures.js): no overlapping
  # labels, every series in a legend, enough ticks, a colour bar on a heatmap, numbers right-aligned
  check "figures as rendered: profile and sweep" -- /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" \
    "$tmp"/p/*.svg "$tmp"/s/*.svg
  check "figures as rendered: the report" -- /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" "$tmp/report.html"
  # the checker can fail: overlapping labels, a series without a legend entry, a bare axis, a
  # heatmap without a colour bar, a number left-aligned
  cat >"$tmp/bad.svg" <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200" viewBox="0 0 300 200"><title>bad</title>
<rect class="cell" x="200" y="100" width="10" height="10"/><text x="150" y="150" class="tick-x">1</text><text x="190" y="150" class="tick-x">1</text>
<text x="20" y="50" class="tick-y">overlapping</text><text x="30" y="52">overlapping</text>
<g class="series" data-series="orphan"><line x1="0" y1="0" x2="10" y2="10" style="stroke:#000"/></g></svg>
SVG
  /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" "$tmp/bad.svg" >"$tmp/bad.txt" 2>&1
  check "checker: reports overlap, orphan series, bare axes, missing colour bar" -- bash -c \
    "grep -q 'labels overlap' '$tmp/bad.txt' && grep -q 'orphan' '$tmp/bad.txt' && grep -q 'fewer than 3' '$tmp/bad.txt' && grep -q 'without a colour bar' '$tmp/bad.txt' && grep -q 'repeated tick-x' '$tmp/bad.txt'"
  printf '<!DOCTYPE html><html><body><table><tr><td style="text-align:left">[1.5, 2.5]</td></tr></table><svg xmlns="http://www.w3.org/2000/svg"></svg></body></html>' >"$tmp/bad.html"
  /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" "$tmp/bad.html" >"$tmp/bad2.txt" 2>&1
  check "checker: reports a left-aligned number" -- grep -q 'is not right-aligned' "$tmp/bad2.txt"
fi
# -o -: the HTML alone on standard output; --markdown needs a file (its figures go beside it)
check "report -o - writes the HTML alone" -- bash -c '"$1" report "$2" -o - 2>/dev/null | tail -n 1 | grep -q "</html>"' _ "$omn" "$tmp/sweep.json"
expect 2 "--markdown writes its figures beside the report" -- "$omn" report "$tmp/sweep.json" -o - --markdown
expect 0 "" -- "$omn" plot "$tmp/profile.json" -o "$tmp/deep/er/figs"
# a study's figures and report: the micro study parity.study leaves (a ctest fixture), and the same
# document as a study written before lr_sensitivity_note existed still reads
expect 0 "study-loss-vs-lr.svg" -- "$omn" plot "$fx/study/a/study.json" -o "$tmp/study-figs"
expect 0 "" -- "$omn" report "$fx/study/a/study.json" -o "$tmp/study.html"
/usr/bin/python3 - "$fx/study/a/study.json" "$tmp/old-study.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arms"]:
    a.pop("lr_sensitivity_note", None)
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "study-loss-vs-lr.svg" -- "$omn" plot "$tmp/old-study.json" -o "$tmp/old-study-figs"
# one training run (issue 28): its directory or its train.json, the log beside it read to its last
# whole line; the values drawn are the log's (recomputed here from log.jsonl)
run="$fx/study/a/runs/$(ls "$fx/study/a/runs" | grep '^qk-on' | grep -v config.json | head -1)"
expect 0 "run-loss.svg" -- "$omn" plot "$run" -o "$tmp/run-figs"
for f in run-loss run-lr run-grad-norm run-max-logit run-qk-gains; do
  check "plot RUN: $f.svg is well-formed SVG" -- xmllint --noout "$tmp/run-figs/$f.svg"
done
check "plot RUN: the loss, LR, logit and gain figures are drawn from train.json's log" -- /usr/bin/python3 - "$run" "$tmp/run-figs" <<'PY'
import csv, json, sys
run, figs = sys.argv[1], sys.argv[2]
log = [json.loads(x) for x in open(run + "/log.jsonl")]
rows = list(csv.DictReader(open(figs + "/run-loss.csv")))
held = [(float(r["x"]), float(r["y"])) for r in rows if r["series"] == "held-out"]
want = [(float(x["step"]), x["eval"]["heldout_loss"]) for x in log if "eval" in x]
assert held == want and len(held) >= 2, (held, want)
batch = [(float(r["x"]), float(r["y"])) for r in rows if r["series"] == "training batch"]
assert batch == [(float(x["step"]), x["train_loss"]) for x in log if x.get("train_loss") is not None]
lr = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(open(figs + "/run-lr.csv")) if r["series"] == "AdamW learning rate"]
assert lr == [(float(x["step"]), x["lr"]) for x in log if "lr" in x] and lr
q0 = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(open(figs + "/run-qk-gains.csv")) if r["series"] == "layer 0 Q"]
assert q0 == [(float(x["step"]), x["eval"]["layers"][0]["q_gain"]["mean"]) for x in log if "eval" in x]
g = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(open(figs + "/run-grad-norm.csv")) if r["series"] == "gradient norm"]
assert g == [(float(x["step"]), x["grad_norm"]) for x in log if x.get("grad_norm") is not None] and g
PY
expect 0 "run-loss.svg" -- "$omn" plot "$run/train.json" -o "$tmp/run-figs-json"
check "plot RUN and plot RUN/train.json draw the same figures" -- cmp "$tmp/run-figs/run-loss.svg" "$tmp/run-figs-json/run-loss.svg"
cp -r "$run" "$tmp/run-live"
printf '{"step": 999999, "train_l' >>"$tmp/run-live/log.jsonl"
expect 0 "run-loss.svg" -- "$omn" plot "$tmp/run-live" -o "$tmp/run-live-figs"
check "a log line still in flight is left out" -- cmp "$tmp/run-figs/run-loss.csv" "$tmp/run-live-figs/run-loss.csv"
cp -r "$run" "$tmp/run-bad"
printf 'not json\n' >>"$tmp/run-bad/log.jsonl"
expect 4 "run-bad/log.jsonl: line" -- "$omn" plot "$tmp/run-bad" -o "$tmp/run-bad-figs"
rm "$tmp/run-bad/log.jsonl"
expect 2 "run-bad/log.jsonl: cannot be read" -- "$omn" plot "$tmp/run-bad" -o "$tmp/run-bad-figs"
expect 2 "--runs: only for a study document" -- "$omn" plot "$run" --runs x -o "$tmp/run-bad-figs"
# the track figures: two checkpoints of one model (the calibrated fixture and its perturbed copy)
expect 0 "" -- "$omn" track "$tmp/omn1-mini.pt" "$fx/omn1-mini-perturbed.pt" --order given --json "$tmp/track.json"
expect 0 "track-heatmap-q.svg" -- "$omn" plot "$tmp/track.json" -o "$tmp/track-figs"
# a run of a few layers: a colour and a legend entry per layer, a marker at every checkpoint
expect 0 "" -- "$omn" track "$run" --json "$tmp/track-run.json"
expect 0 "track-layer-means.svg" -- "$omn" plot "$tmp/track-run.json" -o "$tmp/track-run-figs"
check "track of a few layers: a legend entry per layer, a marker per layer, role and checkpoint" -- /usr/bin/python3 - \
  "$tmp/track-run.json" "$tmp/track-run-figs/track-layer-means.svg" <<'PY'
import json, sys, xml.etree.ElementTree as ET
t = json.load(open(sys.argv[1]))
n, L = len(t["checkpoints"]), len(t["checkpoints"][0]["layers"])
root = ET.parse(sys.argv[2]).getroot()
texts = [e.text for e in root.iter() if e.get("class") == "legend-text"]
points = sum(1 for e in root.iter() if "point" in (e.get("class") or "").split())
assert L <= 10 and all("layer %d" % l in texts for l in range(L)), texts
assert points == 2 * L * n, (points, L, n)
PY
# report takes what plot takes: a run (its directory) and its track, in one report
cp -r "$run" "$tmp/run-rep"
expect 0 "run-report.html" -- "$omn" report "$tmp/run-rep" "$tmp/track-run.json" -o "$tmp/run-report.html"
check "report RUN TRACK: the run's and the track's sections and figures, the run's numbers as train.json has them" -- /usr/bin/python3 - \
  "$tmp/run-report.html" "$tmp/run-rep/train.json" "$tmp/track-run.json" <<'PY'
import json, sys
html, rec, t = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
for anchor in ('id="track"', 'id="run"', "Loss over training", "Q/K gain mean of every layer over training"):
    assert anchor in html, anchor
assert "%.4f" % rec["final_heldout_loss"] in html, rec["final_heldout_loss"]
assert "%d checkpoints tracked" % 0 not in html
assert "<td>checkpoints tracked</td><td>%d (%d verified by SHA-256)</td>" % (t["summary"]["checkpoints"], t["summary"]["verified"]) in html
PY
expect 0 "run-report.md" -- "$omn" report "$tmp/run-rep/train.json" -o "$tmp/run-report.md" --markdown
check "report RUN --markdown: the run's figures beside it" -- test -s "$tmp/run-report.md.figures/run-loss.svg"
expect 2 "two documents of the same kind" -- "$omn" report "$tmp/run-rep" "$tmp/run-rep/train.json" -o "$tmp/twice.html"
sum_before=$(sha256sum "$tmp/run-rep/log.jsonl")
expect 2 "is the input" -- "$omn" report "$tmp/run-rep" -o "$tmp/run-rep/log.jsonl" --force
check "report RUN -o RUN/log.jsonl --force left the run's log alone" -- test "$(sha256sum "$tmp/run-rep/log.jsonl")" = "$sum_before"
if [ -n "$chrome" ]; then
  check "figures as rendered: a study and a track" -- /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" \
    "$tmp"/study-figs/*.svg "$tmp"/track-figs/*.svg "$tmp"/track-run-figs/*.svg
  check "figures as rendered: the study report" -- /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" "$tmp/study.html"
  check "figures as rendered: the report of a run and its track" -- /usr/bin/python3 "$src/tests/cli/check_figures.py" "$chrome" "$tmp/fc" "$tmp/run-report.html"
fi
# a label cut for a figure never splits a UTF-8 character (the SVG stays well-formed)
/usr/bin/python3 - "$tmp/sweep.json" "$tmp/utf8.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["conditions"]:
    c["label"] = "transplant from ckpt/abcé.pt qk all é"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "" -- "$omn" plot "$tmp/utf8.json" -o "$tmp/utf8-figs"
for f in "$tmp"/utf8-figs/*.svg; do check "$(basename "$f") with cut UTF-8 labels is well-formed" -- xmllint --noout "$f"; done
finish
