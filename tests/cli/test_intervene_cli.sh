#!/usr/bin/env bash
# omn-audit intervene / merge from the outside: manifest errors with JSON pointers, refusals,
# kill -9 and --resume, SIGTERM, shards + merge equal to the unsharded run, exit codes, a checkpoint
# rewritten or truncated mid-sweep.
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
cp "$fx/omn1-mini.pt" "$tmp/"
/usr/bin/python3 "$src/tools/fixtures/make_tokens.py" -o "$tmp/mini-tokens.bin" >/dev/null
ck=$(sha256sum "$tmp/omn1-mini.pt" | cut -c1-64)
tk=$(sha256sum "$tmp/mini-tokens.bin" | cut -c1-64)
# manifest NAME [python edits of m]: the demo manifest with this run's digests
mk() {
  /usr/bin/python3 - "$src/configs/manifests/mini-demo.json" "$tmp/$1" "$ck" "$tk" "${2:-}" <<'PY'
import json, sys
src, out, ck, tk, edit = sys.argv[1:6]
m = json.load(open(src))
m["checkpoint"]["sha256"], m["tokens"]["sha256"] = ck, tk
m["rows"]["num_seqs"] = 4
m["conditions"] = m["conditions"][:3] + m["conditions"][4:6]
m["bootstrap"]["multiplicity"] = "holm"  # every sweep here, shards and merge included
exec(edit)
json.dump(m, open(out, "w"), indent=1)
PY
}
strip() {  # what may differ between identical runs: wall times, timestamps, cache/merge bookkeeping
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("started_utc", "finished_utc"): d["provenance"].pop(k)
for k in ("cache", "merged_from", "shard"): d.pop(k, None)
for blk in [d["control"]["open"], d["control"]["close"]] + d["conditions"]: blk.pop("seconds")
print(json.dumps(d, sort_keys=True, indent=1))
PY
}

mk m.json
expect 0 "closing control reproduced the opening one bitwise" -- "$omn" -q intervene --manifest "$tmp/m.json"
check "result JSON valid against docs/schema/intervention.schema.json" -- \
  /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" intervention.schema.json "$tmp/sweep.json"
check "CSV: a row per condition + control + header" -- test "$(wc -l <"$tmp/sweep.csv")" -eq 15
check "CSV tidy for pandas: numeric columns parse as numbers, layers in one form, the control named as everywhere" -- \
  /usr/bin/python3 - "$tmp/sweep.csv" "$tmp/sweep.json" <<'PY'
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert rows[0]["id"] == "control" and rows[0]["label"] == "control (the checkpoint as is)", rows[0]
for r in rows:
    for k in ("perplexity", "ci_low", "ci_high", "ppl_ratio", "ratio_low", "ratio_high", "delta_nll_per_token", "tokens"):
        float(r[k])
    for k in ("value", "seed", "source_layer"):
        if r[k] != "":
            float(r[k])
    assert r["layers"] == "" or r["layers"] == "all" or re.fullmatch(r"[0-9]+(-[0-9]+)?(;[0-9]+(-[0-9]+)?)*", r["layers"]), r["layers"]
    assert not r["target"].startswith('"') and not r["op"].startswith('"')
for r, c in zip(rows[1:], d["conditions"]):
    lay = c["op"].get("layers")
    if isinstance(lay, list):
        got = []
        for part in r["layers"].split(";"):
            a, _, b = part.partition("-")
            got += list(range(int(a), int(b or a) + 1))
        assert got == lay, (r["layers"], lay)
PY
check "multiplicity: Holm's adjusted p-values recompute from the raw ones; simultaneous intervals contain the marginal ones" -- \
  /usr/bin/python3 - "$tmp/sweep.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cs = d["conditions"]
m = len(cs)
p = [c["vs_control"]["p_value"] for c in cs]
order = sorted(range(m), key=lambda i: p[i])
holm, run = [0.0] * m, 0.0
for k, i in enumerate(order):
    run = max(run, min(1.0, p[i] * (m - k)))
    holm[i] = run
ok = d["multiplicity"] == {"method": "holm", "family_size": m, "simultaneous_confidence": 1 - 0.05 / m, "complete": True}
for c, h in zip(cs, holm):
    v = c["vs_control"]
    B = v["resamples"]
    ok = ok and v["p_value_adjusted"] == h and 2 / (1 + B) <= v["p_value"] <= 1  # never 0: (1 + k) / (1 + B)
    s, r = v["simultaneous"]["delta_nll_per_token"], v["delta_nll_per_token"]
    ok = ok and s["low"] <= r["low"] <= r["estimate"] <= r["high"] <= s["high"]
sys.exit(0 if ok else 1)
PY
check "no journal left after success" -- test ! -e "$tmp/sweep.json.journal"
cp "$tmp/sweep.json" "$tmp/full.json"

# outputs are never overwritten without --force; a stale journal is not silently ignored
expect 2 "exists: refusing to overwrite" -- "$omn" -q intervene --manifest "$tmp/m.json"
mk m2.json 'm["output"] = {"json": "two.json"}'
# an empty journal (a run that died before its header) holds nothing to keep: a fresh run replaces it
# (a journal with finished records is refused without --resume: tests/unit Journal.OpenForRun...)
: >"$tmp/two.json.journal"
expect 0 "" -- "$omn" -q intervene --manifest "$tmp/m2.json"
check "the empty journal replaced and removed after success" -- test -e "$tmp/two.json" -a ! -e "$tmp/two.json.journal"

# kill -9 in the middle, resume: the same result as the uninterrupted run
"$omn" -q intervene --manifest "$tmp/m.json" -o "$tmp/killed.json" 2>/dev/null &
pid=$!
for _ in $(seq 1 400); do
  [ -f "$tmp/killed.json.journal" ] && [ "$(wc -l <"$tmp/killed.json.journal")" -ge 4 ] && break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "killed mid-sweep: journal present, no result" -- test -s "$tmp/killed.json.journal" -a ! -e "$tmp/killed.json"
lines=$(wc -l <"$tmp/killed.json.journal")
check "killed mid-sweep: some but not all conditions journaled ($lines lines)" -- test "$lines" -ge 2 -a "$lines" -lt 18
mk k2.json 'm["conditions"][0]["values"] = [3.0]'
expect 2 "cannot resume .*manifest_sha256 was" -- "$omn" -q intervene --manifest "$tmp/k2.json" -o "$tmp/killed.json" --resume
# --resume continues into its own output without --force (here one the interrupted run left), but
# an unrelated existing CSV is still protected
echo stale >"$tmp/killed.json"
echo mine >"$tmp/other.csv"
expect 2 "other.csv exists: refusing to overwrite" -- "$omn" -q intervene --manifest "$tmp/m.json" -o "$tmp/killed.json" --csv "$tmp/other.csv" --resume
expect 0 "resuming: [0-9]+ finished record" -- "$omn" intervene --manifest "$tmp/m.json" -o "$tmp/killed.json" --resume
check "resumed result equals the uninterrupted run's (timestamps aside)" -- diff <(strip "$tmp/full.json") <(strip "$tmp/killed.json")

# SIGTERM: stops at a sequence boundary, exit 130, the journal stays valid
"$omn" -q intervene --manifest "$tmp/m.json" -o "$tmp/term.json" 2>"$tmp/term.err" &
pid=$!
for _ in $(seq 1 400); do
  [ -f "$tmp/term.json.journal" ] && [ "$(wc -l <"$tmp/term.json.journal")" -ge 3 ] && break
  sleep 0.05
done
kill -TERM "$pid"
wait "$pid"
rc=$?
check "SIGTERM: exit 130 (got $rc)" -- test "$rc" -eq 130
check "SIGTERM: message says how to resume" -- grep -q "interrupted .* --resume" "$tmp/term.err"
expect 0 "closing control" -- "$omn" -q intervene --manifest "$tmp/m.json" -o "$tmp/term.json" --resume

# shards + merge: the same document as the unsharded run
for i in 0 1 2; do
  expect 0 "closing control" -- "$omn" -q intervene --manifest "$tmp/m.json" --shard "$i/3" -o "$tmp/shard$i.json"
done
expect 0 "merged 3 shards" -- "$omn" merge -o "$tmp/merged.json" "$tmp/shard0.json" "$tmp/shard1.json" "$tmp/shard2.json"
check "shards merged equal the unsharded run (timestamps aside)" -- diff <(strip "$tmp/full.json") <(strip "$tmp/merged.json")
check "a shard cannot adjust by Holm alone (null), its Bonferroni intervals use the whole family" -- /usr/bin/python3 -c "
import json; d = json.load(open('$tmp/shard1.json')); full = json.load(open('$tmp/full.json'))
assert d['multiplicity']['complete'] is False and d['multiplicity']['family_size'] == len(full['conditions'])
assert all(c['vs_control']['p_value_adjusted'] is None for c in d['conditions'])"
expect 0 "This is shard 1 of 3 \(--shard 1/3\): it holds only its share of the conditions; merge every shard" -- \
  "$omn" report "$tmp/shard1.json" --markdown -o "$tmp/shard1.md"
check "the merged sweep's report says nothing of shards" -- bash -c '"$1" report "$2" --markdown -o "$3" && ! grep -q "This is shard" "$3"' \
  _ "$omn" "$tmp/merged.json" "$tmp/merged.md"
expect 2 "3 shards" -- "$omn" merge -o "$tmp/merge2.json" "$tmp/shard0.json" "$tmp/shard1.json"
expect 2 "duplicate or out of range" -- "$omn" merge -o "$tmp/merge3.json" "$tmp/shard0.json" "$tmp/shard0.json" "$tmp/shard2.json"
expect 2 "not the output of a --shard run" -- "$omn" merge -o "$tmp/merge4.json" "$tmp/full.json" "$tmp/shard1.json"
expect 2 "expected i/N" -- "$omn" -q intervene --manifest "$tmp/m.json" --shard 3 -o "$tmp/x.json"

# manifest errors name the JSON pointer; integrity failures are exit 4
mk e1.json 'm["conditions"][1]["values"][0] = "big"'
expect 2 "e1.json: /conditions/1/values/0: expected a number" -- "$omn" -q intervene --manifest "$tmp/e1.json"
mk e2.json 'm["rows"]["seq_lenght"] = 3'
expect 2 "/rows/seq_lenght: unknown key" -- "$omn" -q intervene --manifest "$tmp/e2.json"
mk e3.json 'm["conditions"][0]["layers"] = "3-1"'
expect 2 "/conditions/0/layers: expected a layer .* start <= end" -- "$omn" -q intervene --manifest "$tmp/e3.json"
mk e4.json 'm["conditions"][0]["layers"] = [40]'
expect 2 "/conditions/0/layers: layer 40 does not exist" -- "$omn" -q intervene --manifest "$tmp/e4.json" -o "$tmp/e4o.json"
check "no output and no journal after a refused condition" -- test ! -e "$tmp/e4o.json" -a ! -e "$tmp/e4o.json.journal"
mk e5.json 'del m["checkpoint"]["sha256"]'
expect 2 "/checkpoint/sha256: required" -- "$omn" -q intervene --manifest "$tmp/e5.json"
expect 0 "closing control" -- "$omn" -q intervene --manifest "$tmp/e5.json" --allow-unverified -o "$tmp/unverified.json"
mk e6.json 'm["tokens"].pop("tokenizer_revision")'
expect 2 "/tokens/tokenizer_revision: required" -- "$omn" -q intervene --manifest "$tmp/e6.json"
mk e7.json 'm["conditions"][0]["op"] = "clamp"'
expect 2 "/conditions/0/op: expected constant, scale, .* or bypass, got \"clamp\"" -- "$omn" -q intervene --manifest "$tmp/e7.json"
mk e8.json 'm["conditions"][2]["seeds"] = [1]'
expect 2 "/conditions/2/seeds: not a parameter of vector_mean" -- "$omn" -q intervene --manifest "$tmp/e8.json"
# every mistake in one run: two sections and a condition, one error naming each
mk e9.json 'm["conditions"][0]["op"] = "clamp"; m["rows"]["num_seqs"] = 0; m["model"]["dtype"] = "fp8"'
expect 2 "manifest .*e9.json: 3 errors:" -- "$omn" -q intervene --manifest "$tmp/e9.json"
expect 2 "^  /conditions/0/op: expected constant" -- "$omn" -q intervene --manifest "$tmp/e9.json"
# a name that carries a line break and an indent (quoted raw in the duplicate's message) cannot forge
# a line of the list: each item is escaped
mk e9b.json 'm["conditions"] = [{"op": "constant", "values": [2], "name": "x\n  /conditions/9: forged"}] * 2; m["rows"]["num_seqs"] = 0'
"$omn" -q intervene --manifest "$tmp/e9b.json" > "$tmp/e9b.out" 2>&1 || true
check "an input's line break stays inside its item (3 lines: the header and 2 items, none forged)" -- /usr/bin/python3 -c "
import sys; t = open(sys.argv[1]).read().splitlines()
sys.exit(0 if len(t) == 3 and t[0].endswith('2 errors:') and not any(l.startswith('  /conditions/9') for l in t) else 1)" "$tmp/e9b.out"
# --plan: the inputs verified and every condition checked, the conditions equal by construction
# named, nothing run and nothing written
mk p1.json 'm["conditions"] = [{"op": "scale", "values": [2], "targets": ["q", "k"]}, {"op": "compensate", "values": [2]}]; m["output"] = {"json": "p1o.json"}'
# --threads: a run setting over the manifest's /model/threads (the busy-machine warning's advice)
expect 0 ", 1 thread, cpu; one pass" -- "$omn" -q intervene --manifest "$tmp/p1.json" --plan --threads 1
expect 2 "threads: Value -2 not in range" -- "$omn" intervene --manifest "$tmp/p1.json" --plan --threads -2
# --dtype and --batch: run settings over /model/dtype and /model/batch, recorded as used
expect 0 "result: " -- "$omn" -q intervene --manifest "$tmp/p1.json" --dtype bf16 --batch 3 --threads 1 -o "$tmp/p1-flags.json" --csv "$tmp/p1-flags.csv"
check "--dtype bf16 --batch 3 --threads 1 are the result's model.dtype, model.batch, model.threads" -- /usr/bin/python3 -c "
import json, sys; m = json.load(open(sys.argv[1]))['model']
sys.exit(0 if (m['dtype'], m['batch'], m['threads']) == ('bf16', 3, 1) else 1)" "$tmp/p1-flags.json"
expect 2 "--dtype: expected auto, bf16, fp16 or fp32, got \"fp8\"" -- "$omn" intervene --manifest "$tmp/p1.json" --plan --dtype fp8
expect 2 "--batch: Value 70000 not in range" -- "$omn" intervene --manifest "$tmp/p1.json" --plan --batch 70000
# --num-seqs: the rows scored, over /rows/num_seqs (4 here), recorded; fewer rows than /groups is refused
mk p2.json 'm["conditions"] = [{"op": "scale", "values": [2], "targets": ["q", "k"]}]; m["groups"] = 2; m["output"] = {"json": "p2o.json"}'
expect 0 "result: " -- "$omn" -q intervene --manifest "$tmp/p2.json" --num-seqs 3 --threads 1 -o "$tmp/p2-rows.json" --csv "$tmp/p2-rows.csv"
check "--num-seqs 3 is the result's selection.num_seqs" -- /usr/bin/python3 -c "
import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))['selection']['num_seqs'] == 3 else 1)" "$tmp/p2-rows.json"
expect 2 "--num-seqs 1: fewer rows than the manifest's /groups \(2\)" -- "$omn" intervene --manifest "$tmp/p2.json" --plan --num-seqs 1
expect 0 "warning: c1 \(scale 2 k all\) equals c0 by construction" -- "$omn" -q intervene --manifest "$tmp/p1.json" --plan
expect 0 "check: c2 \(compensate 2 qk all\) equals the control by construction: compensate is the sanity control" -- \
  "$omn" -q intervene --manifest "$tmp/p1.json" --plan
check "--plan writes no output and no journal" -- test ! -e "$tmp/p1o.json" -a ! -e "$tmp/p1o.json.journal"
# --plan's time estimate: one timed pass, scaled by the rows and passes the plan counts
"$omn" -q intervene --manifest "$tmp/p1.json" --plan > "$tmp/p1.plan" 2>&1 || true
check "--plan's estimate is the timed pass scaled by rows and passes, on the named CPU" -- /usr/bin/python3 - "$tmp/p1.plan" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
p = re.search(r"= (\d+) passes of (\d+) rows", t)
e = re.search(r"estimate: ([0-9.e+-]+) (s|min|h) on this machine \((.+), (\d+) threads?, cpu; one pass of (\d+) rows? took ([0-9.e+-]+) s\)", t)
assert p and e, t
unit = {"s": 1, "min": 60, "h": 3600}[e.group(2)]
want = float(e.group(6)) / int(e.group(5)) * int(p.group(2)) * int(p.group(1))
got = float(e.group(1)) * unit
assert abs(got - want) <= 0.06 * want + 1e-9, (got, want, t)  # printed to 2 significant digits
cpu = ([l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")] + ["unknown CPU"])[0]
assert e.group(3) == cpu, (e.group(3), cpu)
PY
mk p2.json 'm["conditions"] = [{"op": "constant", "values": [1], "coordinates": [100000]}]'
expect 2 "/conditions/0/coordinates: coordinate 100000 does not exist" -- "$omn" -q intervene --manifest "$tmp/p2.json" --plan
# --kl keeps the control's final hidden states: over --cache-budget it is refused before any pass
mk k1.json 'm["output"] = {"json": "k1o.json"}'
expect 2 "--kl keeps the control's final hidden states: .* over the --cache-budget of 0 MiB" -- \
  "$omn" -q intervene --manifest "$tmp/k1.json" --kl --cache-budget 0
check "no output and no journal after a refused --kl" -- test ! -e "$tmp/k1o.json" -a ! -e "$tmp/k1o.json.journal"
# --plan refuses the budget the run would refuse (it used to accept it)
expect 2 "--kl keeps the control's final hidden states: .* over the --cache-budget of 0 MiB" -- \
  "$omn" -q intervene --manifest "$tmp/k1.json" --kl --cache-budget 0 --plan
# the fp32 confirmation arm: conditions below the bf16 noise floor run again in fp32, ids kept
mk f1.json 'm["model"]["dtype"] = "bf16"; m["model"]["confirm_fp32"] = True; m["conditions"] = [{"op": "compensate", "values": [2]}, {"op": "constant", "values": [2.0]}]; m["output"] = {"json": "f1o.json"}'
expect 0 "confirmation in fp32 of the conditions below the noise floor" -- "$omn" -q intervene --manifest "$tmp/f1.json"
check "the confirmation holds the flagged condition only, in fp32, and names the result it confirms" -- /usr/bin/python3 - "$tmp/f1o.json" "$tmp/f1o.fp32.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
flagged = [c["id"] for c in a["conditions"] if c["vs_control"]["below_noise_floor"]]
ok = flagged == ["c0"] and [c["id"] for c in b["conditions"]] == flagged and b["model"]["dtype"] == "fp32"
ok = ok and b["confirms"] == {"path": "f1o.json", "dtype": a["model"]["dtype"]} and a["noise_floor"]["nats_per_token"] == 1e-4
# the hypotheses are still the whole manifest's: the family is not shrunk to the flagged ones
ok = ok and b["multiplicity"]["family_size"] == len(a["conditions"]) and b["multiplicity"]["complete"] is False
ok = ok and b["noise_floor"]["nats_per_token"] == 1e-6
sys.exit(0 if ok else 1)
PY
# the new ops, coordinate subsets and composites: each impossible request names its pointer and
# is refused before any pass (no output, no journal)
mk n1.json 'm["conditions"] = [{"op": "compensate", "values": [0]}]'
expect 2 "/conditions/0/values/0: compensate divides the K gains by it" -- "$omn" -q intervene --manifest "$tmp/n1.json"
mk n2.json 'm["conditions"] = [{"op": "noise", "values": [0.1]}]'
expect 2 "/conditions/0/seeds: required" -- "$omn" -q intervene --manifest "$tmp/n2.json"
mk n3.json 'm["conditions"] = [{"op": "constant", "values": [1], "coordinates": [3, 100000]}]; m["output"] = {"json": "n3o.json"}'
expect 2 "/conditions/0/coordinates: coordinate 100000 does not exist" -- "$omn" -q intervene --manifest "$tmp/n3.json"
check "no output and no journal after a refused coordinate" -- test ! -e "$tmp/n3o.json" -a ! -e "$tmp/n3o.json.journal"
# a gain the stored dtype cannot hold would become inf and every perplexity NaN: exit 2 before any
# pass (--plan included), naming the condition
mk ovf1.json 'm["conditions"] = [{"op": "constant", "values": [1e39], "targets": ["q"]}]; m["output"] = {"json": "ovf1o.json"}'
expect 2 "/conditions/0: constant gives layer 0 Q a gain of magnitude 1e\+39, beyond float32 \(it would become inf\)" -- \
  "$omn" -q intervene --manifest "$tmp/ovf1.json" --plan
/usr/bin/python3 - "$tmp/omn1-mini.pt" "$tmp/half.pt" <<'PY'
import sys, torch
d = torch.load(sys.argv[1])  # the test's own fixture
sd = d["model"] if "model" in d else d
for k, v in sd.items():
    if v.is_floating_point(): sd[k] = v.half()
torch.save(d, sys.argv[2])
PY
hk=$(sha256sum "$tmp/half.pt" | cut -c1-64)
for op in '{"op": "constant", "values": [70000]}' '{"op": "compensate", "values": [1e-30]}' '{"op": "scale", "values": [1e6]}'; do
  mk ovf2.json "m['checkpoint'].update(path='half.pt', sha256='$hk'); m['model']['dtype'] = 'fp32'; m['conditions'] = [$op]; m['output'] = {'json': 'ovf2o.json'}"
  expect 2 "/conditions/0: .* beyond what its stored dtype \(Half\) can hold: it would become inf" -- "$omn" -q intervene --manifest "$tmp/ovf2.json"
  check "no output after a refused fp16 overflow ($op)" -- test ! -e "$tmp/ovf2o.json" -a ! -e "$tmp/ovf2o.json.journal"
done
# checked on what the condition leaves: a step may pass through values a later step scales back
mk ovf4.json "m['checkpoint'].update(path='half.pt', sha256='$hk'); m['model']['dtype'] = 'fp32'; m['conditions'] = [{'steps': [{'op': 'scale', 'values': [1000]}, {'op': 'rescale_pattern', 'values': [1.0]}]}]; m['output'] = {'json': 'ovf4o.json'}"
expect 0 "" -- "$omn" -q intervene --manifest "$tmp/ovf4.json" --plan
mk ovf3.json "m['checkpoint'].update(path='half.pt', sha256='$hk'); m['model']['dtype'] = 'fp32'; m['conditions'] = [{'op': 'constant', 'values': [1.5]}]; m['output'] = {'json': 'ovf3o.json'}"
expect 0 "closing control reproduced" -- "$omn" -q intervene --manifest "$tmp/ovf3.json"
# text from the manifest reaches the log lines and the Markdown report escaped, never as raw ESC/BEL/C1
mk esc1.json 'm["conditions"] = [{"name": "evil\u001b[2J\u0007\r\u009bOK", "op": "constant", "values": [1.0]}]; m["output"] = {"json": "esc1o.json"}'
check "a sweep whose condition name holds control characters runs" -- \
  bash -c '"$1" intervene --manifest "$2" 2>"$3" >"$4"' _ "$omn" "$tmp/esc1.json" "$tmp/esc1.err" "$tmp/esc1.out"
check "log lines carry no raw control character from the manifest" -- bash -c '! LC_ALL=C grep -qaP "[\x1b\x07\r]|\xc2\x9b" "$1" && grep -qF "info: c0 evil\x1b[2J" "$1"' _ "$tmp/esc1.err"
check "the results table carries none either" -- bash -c '! LC_ALL=C grep -qaP "[\x1b\x07\r]|\xc2\x9b" "$1"' _ "$tmp/esc1.out"
expect 0 "esc1.md" -- "$omn" report "$tmp/esc1o.json" --markdown -o "$tmp/esc1.md"
check "the Markdown report carries none either" -- bash -c '! LC_ALL=C grep -qaP "[\x1b\x07\r]|\xc2\x9b" "$1" && grep -qF "evil\x1b[2J" "$1"' _ "$tmp/esc1.md"
# a newline in a name cannot forge a line of the Markdown report; a CRLF manifest keeps its lines
mk esc2.json 'm["conditions"] = [{"name": "x\n\nNo warnings: forged.\n", "op": "constant", "values": [1.0]}]; m["output"] = {"json": "esc2o.json"}'
sed -i 's/$/\r/' "$tmp/esc2.json"
check "a CRLF manifest with a newline in a name runs" -- bash -c '"$1" -q intervene --manifest "$2" >/dev/null' _ "$omn" "$tmp/esc2.json"
expect 0 "esc2.md" -- "$omn" report "$tmp/esc2o.json" --markdown -o "$tmp/esc2.md"
check "no line of the Markdown report starts with the forged text" -- bash -c '! grep -q "^No warnings: forged" "$1" && grep -qF "x\n\nNo warnings: forged." "$1"' _ "$tmp/esc2.md"
check "the CRLF manifest is shown line by line, without \\r" -- bash -c '! grep -qF "\\r" "$1" && grep -q "^ \"schema\": \"omn-audit/manifest@1\",$" "$1"' _ "$tmp/esc2.md"
mk n4.json 'm["conditions"] = [{"op": "constant", "values": [1], "coordinates": {"top_k": 100000}}]; m["output"] = {"json": "n4o.json"}'
expect 2 "/conditions/0/coordinates/top_k: 100000 coordinates, but a gain vector has" -- "$omn" -q intervene --manifest "$tmp/n4.json"
mk n5.json 'm["conditions"] = [{"op": "constant", "values": [1], "coordinates": [2, 2]}]'
expect 2 "/conditions/0/coordinates: a coordinate is listed twice" -- "$omn" -q intervene --manifest "$tmp/n5.json"
mk n6.json 'm["conditions"] = [{"steps": [{"op": "constant", "values": [1, 2]}]}]'
expect 2 "/conditions/0/steps/0: a step is one op: give one value per list" -- "$omn" -q intervene --manifest "$tmp/n6.json"
mk n7.json 'm["conditions"] = [{"op": "scale", "steps": [{"op": "constant", "values": 1}]}]'
expect 2 "/conditions/0/op: a composite condition takes its ops in /steps" -- "$omn" -q intervene --manifest "$tmp/n7.json"
mk n8.json 'm["conditions"] = [{"steps": [{"op": "constant", "values": 0, "targets": "q"}, {"op": "rescale_pattern", "values": 1, "targets": "q", "layers": [1]}]}]; m["output"] = {"json": "n8o.json"}'
expect 2 "/conditions/0/steps/1: rescale_pattern: the gains of layer 1 Q have mean 0" -- "$omn" -q intervene --manifest "$tmp/n8.json"
mk t1.json 'm["conditions"] = [{"op": "transplant", "sources": {"path": "omn1-mini.pt", "sha256": "3" * 64}}]; m["output"] = {"json": "t1o.json"}'
expect 4 "omn1-mini.pt: SHA-256 mismatch" -- "$omn" -q intervene --manifest "$tmp/t1.json"
check "no output and no journal after a transplant source that is not the one named" -- test ! -e "$tmp/t1o.json" -a ! -e "$tmp/t1o.json.journal"
mk t3.json 'm["conditions"] = [{"name": "a", "op": "transplant", "sources": {"path": "omn1-mini.pt", "sha256": "'"$ck"'"}}, {"name": "b", "op": "transplant", "sources": {"path": "omn1-mini.pt", "sha256": "4" * 64}}]; m["output"] = {"json": "t3o.json"}'
expect 4 "omn1-mini.pt: SHA-256 mismatch" -- "$omn" -q intervene --manifest "$tmp/t3.json"
mk t2.json 'm["conditions"] = [{"op": "transplant", "sources": {"path": "mini-tokens.bin", "sha256": "'"$(sha256sum "$tmp/mini-tokens.bin" | cut -c1-64)"'"}}]; m["output"] = {"json": "t2o.json"}'
expect 2 "mini-tokens.bin" -- "$omn" -q intervene --manifest "$tmp/t2.json"
mk n9.json 'm["conditions"] = [{"op": "compensate", "values": [2], "targets": "q"}]'
expect 2 "/conditions/0/targets: compensate acts on Q and K together" -- "$omn" -q intervene --manifest "$tmp/n9.json"
# options parsed once into types; a refusal names the manifest pointer that set the value, not a
# CLI flag, and comes before the checkpoint is hashed (a wrong digest beside it is not reached)
mk o1.json 'm.setdefault("model", {})["dtype"] = "fp16"; m["checkpoint"]["sha256"] = "1" * 64; m["output"] = {"json": "o1o.json"}'
expect 2 "o1.json: /model/dtype fp16 on the CPU" -- "$omn" -q intervene --manifest "$tmp/o1.json"
mk o2.json 'm.setdefault("model", {})["attention"] = "flash"; m["checkpoint"]["sha256"] = "1" * 64; m["output"] = {"json": "o2o.json"}'
expect 2 "o2.json: /model/attention flash" -- "$omn" -q intervene --manifest "$tmp/o2.json"
mk o3.json 'm["rows"]["form"] = "packd"'
expect 2 "o3.json: /rows/form: expected packed, per-document or historical, got \"packd\"" -- "$omn" -q intervene --manifest "$tmp/o3.json"
mk e9.json 'm["checkpoint"]["sha256"] = "1" * 64; m["output"] = {"json": "e9o.json"}'
expect 4 "SHA-256 mismatch" -- "$omn" -q intervene --manifest "$tmp/e9.json"
mk e10.json 'm["tokens"]["sha256"] = "2" * 64; m["output"] = {"json": "e10o.json"}'
expect 4 "mini-tokens.bin: SHA-256 mismatch" -- "$omn" -q intervene --manifest "$tmp/e10.json"
# outputs are checked before the checkpoint is hashed: a wrong digest would be exit 4, the missing
# directory is reported first
mk e11.json 'm["checkpoint"]["sha256"] = "1" * 64; m["output"] = {"json": "e11o.json"}'
expect 2 "output $tmp/missing/x.csv: directory $tmp/missing does not exist" -- \
  "$omn" -q intervene --manifest "$tmp/e11.json" --csv "$tmp/missing/x.csv"
# numbers that would wrap when narrowed are refused on the JSON value, naming the pointer
mk e12.json 'm["groups"] = 2**32 + 2'
expect 2 "/groups: expected an integer <= 2147483647" -- "$omn" -q intervene --manifest "$tmp/e12.json"
mk e13.json 'm["bootstrap"] = {"resamples": 2**32}'
expect 2 "/bootstrap/resamples: expected an integer <= 100000000" -- "$omn" -q intervene --manifest "$tmp/e13.json"
mk e14.json 'm["conditions"][0]["layers"] = [4294967323]'
expect 2 "/conditions/0/layers.*expected an integer <= 2147483647" -- "$omn" -q intervene --manifest "$tmp/e14.json"
mk e15.json 'm["model"] = {"batch": 2**32 + 1}'
expect 2 "/model/batch: expected an integer <= 65536" -- "$omn" -q intervene --manifest "$tmp/e15.json"
mkfifo "$tmp/mfifo"
expect 2 "manifest .*mfifo: not a regular file" -- timeout 20 "$omn" -q intervene --manifest "$tmp/mfifo"
expect 2 "must be a file \(a journal is kept beside it" -- "$omn" -q intervene --manifest "$tmp/e5.json" --allow-unverified -o -
echo '{"schema": "omn-audit/manifest@1",' >"$tmp/broken.json"
expect 2 "broken.json: not valid JSON" -- "$omn" -q intervene --manifest "$tmp/broken.json"
# the ready-made manifests: valid against the schema once their token sets are filled in
for f in omn1-historical omn1-reproduction; do
  /usr/bin/python3 - "$src/configs/manifests/$f.json" "$tmp/$f.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["tokens"]["sha256"] = "3" * 64
json.dump(m, open(sys.argv[2], "w"))
PY
  check "$f.json valid against docs/schema/manifest.schema.json" -- \
    /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" manifest.schema.json "$tmp/$f.json"
  expect 2 "my-model/model.pt: cannot open" -- "$omn" -q intervene --manifest "$tmp/$f.json"
  expect 2 "/tokens/sha256: expected a SHA-256" -- "$omn" -q intervene --manifest "$src/configs/manifests/$f.json"
done
check "mini-demo.json valid against the manifest schema" -- \
  /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" manifest.schema.json "$src/configs/manifests/mini-demo.json"
# silently wrong science: an integer-typed gain would take "constant 1.5" as 1 -- refused, naming it
/usr/bin/python3 - "$tmp/omn1-mini.pt" "$tmp/int-gain.pt" <<'PY'
import sys, torch
ck = torch.load(sys.argv[1])  # our own fixture
sd = ck["model"]
sd["layers.0.attention.q_norm.weight"] = sd["layers.0.attention.q_norm.weight"].round().to(torch.int64)
torch.save(ck, sys.argv[2])
PY
intck=$(sha256sum "$tmp/int-gain.pt" | cut -c1-64)
mk int.json "m['checkpoint']['path'] = 'int-gain.pt'; m['checkpoint']['sha256'] = '$intck'; m['output']['json'] = 'int.json.out'; m['output'].pop('csv', None)"
expect 2 "int-gain.pt: tensor '.*q_norm.weight': expected a floating-point tensor, got I64" -- "$omn" -q intervene --manifest "$tmp/int.json"
check "nothing written after the integer-gain refusal" -- test ! -e "$tmp/int.json.out"

# the checkpoint changing under a run (issue #9, class 4). A long sweep on a copy of the fixture is
# stopped (SIGSTOP) once its journal holds the control and a finished condition, the copy is
# changed, the sweep continued: a real race, made deterministic. Exit 4 naming the file and the
# change (never "not deterministic", never a signal death); the journal keeps what was finished.
long='m["checkpoint"]["path"] = "long.pt"; m["output"] = {"json": "long-unused.json"}; m["groups"] = 2; m["rows"]["num_seqs"] = 2
m["conditions"] = [{"op": "constant", "values": [1 + i / 64 for i in range(64)], "targets": ["qk"], "layers": "all"}]'
mk long.json "$long"
mk long-unpinned.json "$long"$'\ndel m["checkpoint"]["sha256"]'
mid_sweep() {  # mid_sweep OUT CHANGE...: the long sweep ($sweep) into $tmp/OUT, CHANGE run while it is stopped
  local out="$tmp/$1" pid
  shift
  cp "$tmp/omn1-mini.pt" "$tmp/long.pt"
  "$omn" -q intervene $sweep -o "$out" 2>"$out.err" &
  pid=$!
  for _ in $(seq 1 3000); do  # header, control, one condition
    [ -f "$out.journal" ] && [ "$(wc -l <"$out.journal")" -ge 3 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  kill -STOP "$pid"
  stopped_early="no journal"
  [ -f "$out.journal" ] && stopped_early=$(grep -c '"control_close"' "$out.journal")
  "$@"
  kill -CONT "$pid"
  wait "$pid"
  rc=$?
  kept=$(($(cat "$out.journal" 2>/dev/null | wc -l) - 1))
}
rewrite() {  # other bytes, same size and inode, inside the largest tensor's data (read zero-copy)
  /usr/bin/python3 - "$tmp/long.pt" <<'PY'
import struct, sys, zipfile
path = sys.argv[1]
e = max(zipfile.ZipFile(path).infolist(), key=lambda i: i.file_size)
with open(path, "r+b") as f:
    f.seek(e.header_offset + 26)
    n, m = struct.unpack("<HH", f.read(4))
    start = e.header_offset + 30 + n + m + e.file_size // 2
    f.seek(start)
    b = f.read(4096)
    f.seek(start)
    f.write(bytes(x ^ 0x55 for x in b))
PY
}
sweep="--manifest $tmp/long-unpinned.json --allow-unverified"
mid_sweep rewritten.json rewrite
check "rewritten mid-sweep: stopped while conditions were left ($stopped_early)" -- test "$stopped_early" = 0
check "rewritten mid-sweep: exit 4 (got $rc)" -- test "$rc" -eq 4
check "rewritten mid-sweep: the message names the file and the change" -- \
  grep -qE "checkpoint $tmp/long.pt changed during the run \(noticed after (condition c[0-9]+|the control pass).*\): modified \(mtime" "$tmp/rewritten.json.err"
check "rewritten mid-sweep: not reported as non-determinism" -- bash -c "! grep -q 'not deterministic' '$tmp/rewritten.json.err'"
check "rewritten mid-sweep: the journal kept the control and >= 1 condition ($kept records), no result" -- \
  test "$kept" -ge 2 -a "$kept" -lt 66 -a ! -e "$tmp/rewritten.json"
# --resume on the still-changed file: refused, its digest is not the journal's
expect 2 "cannot resume .*checkpoint_sha256 was" -- "$omn" -q intervene $sweep -o "$tmp/rewritten.json" --resume
cp "$tmp/omn1-mini.pt" "$tmp/long.pt"  # the file restored: the resume continues from the journal
expect 0 "resuming: $kept finished record" -- "$omn" intervene $sweep -o "$tmp/rewritten.json" --resume
check "rewritten then restored: the resumed sweep has every condition" -- /usr/bin/python3 -c \
  "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(len(d['conditions']) != 64)" "$tmp/rewritten.json"

sweep="--manifest $tmp/long.json"  # the checkpoint's digest pinned
mid_sweep truncated.json truncate -s 1000000 "$tmp/long.pt"
check "truncated mid-sweep: stopped while conditions were left ($stopped_early)" -- test "$stopped_early" = 0
check "truncated mid-sweep: exit 4, not a signal death (got $rc)" -- test "$rc" -eq 4
check "truncated mid-sweep: the message names the file and the truncation" -- grep -qE \
  "$tmp/long.pt changed during the run \((truncated while mapped: byte [0-9]+|noticed .*\): size [0-9]+ -> 1000000 bytes \(truncated\?\))" \
  "$tmp/truncated.json.err"
check "truncated mid-sweep: the journal kept the control and >= 1 condition ($kept records)" -- test "$kept" -ge 2
expect 4 "long.pt: SHA-256 mismatch" -- "$omn" -q intervene $sweep -o "$tmp/truncated.json" --resume

finish
