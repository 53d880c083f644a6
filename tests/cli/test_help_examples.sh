#!/usr/bin/env bash
# Every command's --help examples, run as a user types them: each line of every Examples: footer
# (taken from `omn-audit --describe-commands`, so a new example is run without editing this test),
# in a scratch directory outside the repository, with omn-audit on PATH. Exit 0 for each, unless the
# example says otherwise in its own comment ("# exit 3 ...").
#
# The scratch directory holds what the examples call the user's files: model.pt (the demo model),
# model.safetensors and config.json, Qwen3-1.7B/ and my-model/ (Qwen3-shaped folders with a
# byte-level tokenizer.json), omn-1.pt (the calibrated OMN-1-shaped fixture), a.pt b.pt c.pt,
# before.json and after.json (two profiles), heldout.bin (the demo's held-out set), text files and
# the tokenizers. The configs the examples name (tiny-demo, qk-lr-tiny, tiny, sotu) come from
# OMN_AUDIT_DATA, pointed at stand-ins of the shipped ones that run in seconds: the same names,
# schema and shape, fewer rows and steps, a corpus of four short texts. Commands run in an order
# where each example's inputs were written by an earlier one (corpus before train before hash,
# intervene and study before merge, plot and report).
#
# usage: test_help_examples.sh OMN_AUDIT FIXTURES SOURCE_DIR
set -u
omn="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" fx="$(cd "$2" && pwd)" src="$(cd "$3" && pwd)"
source "$(dirname "$0")/lib.sh"
work="$tmp/work" data="$tmp/data"
mkdir -p "$work/heldout" "$tmp/bin" "$data/configs/manifests" "$data/configs/studies" "$data/configs/train" "$data/configs/corpus" "$tmp/texts"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$omn" >"$tmp/bin/omn-audit"
chmod +x "$tmp/bin/omn-audit"
export PATH="$tmp/bin:$PATH" OMN_AUDIT_DATA="$data" OMP_NUM_THREADS=1

# --- the user's files -----------------------------------------------------------------------------
/usr/bin/python3 "$src/tests/cli/make_byte_tokenizer.py" "$tmp/tokenizer.json" || { echo "FAIL: tokenizer.json"; exit 1; }
for d in Qwen3-1.7B my-model; do
  /usr/bin/python3 "$src/tests/cli/make_qwen3_folder.py" "$work/$d" 262 1 "$tmp/tokenizer.json" || { echo "FAIL: $d/"; exit 1; }
done
cp "$work/my-model/model.safetensors" "$work/my-model/config.json" "$tmp/tokenizer.json" "$work/"
cp "$src/demo/tiny-sotu/final.pt" "$work/model.pt"
cp "$src/demo/tiny-sotu/heldout.bin" "$src/demo/tiny-sotu/tokenizer.model" "$work/"
cp "$fx/omn1-mini.pt" "$work/omn-1.pt"
cp "$fx/omn1-mini.pt" "$work/a.pt"
cp "$fx/omn1-mini-perturbed.pt" "$work/b.pt"
cp "$fx/omn1-mini.pt" "$work/c.pt"
"$omn" profile "$work/a.pt" -o "$work/before.json" --no-tables >/dev/null
"$omn" profile "$work/b.pt" -o "$work/after.json" --no-tables >/dev/null
cp "$src/LICENSE" "$work/heldout/license.txt"
cp "$src/docs/formats.md" "$work/heldout/formats.txt"
cp "$src/docs/tokenize.md" "$work/speech.txt"
cp "$src/docs/train.md" "$work/a.txt"
cp "$src/docs/track.md" "$work/b.txt"
for f in README.md docs/eval.md docs/profile.md docs/manifest.md docs/study.md docs/quickstart.md; do
  cp "$src/$f" "$tmp/texts/$(basename "$f" .md).txt"
done

# --- the shipped configs' stand-ins (OMN_AUDIT_DATA) ------------------------------------------------
/usr/bin/python3 - "$src/configs" "$data/configs" "$work" "$tmp/texts" <<'PY' || { echo "FAIL: the stand-in configs"; exit 1; }
import json, os, sys
src, dst, work, texts = sys.argv[1:]
def load(p):
    return json.load(open(os.path.join(src, p)))
def save(p, doc):
    json.dump(doc, open(os.path.join(dst, p), "w"), indent=1)
m = load("manifests/tiny-demo.json")  # its own model and held-out set, 8 rows instead of 1,024
for part in ("checkpoint", "tokens"):
    m[part]["path"] = os.path.normpath(os.path.join(src, "manifests", m[part]["path"]))
m["rows"]["num_seqs"] = 8
save("manifests/tiny-demo.json", m)
m["output"] = {"json": "my-sweep.result.json"}
json.dump(m, open(os.path.join(work, "my-sweep.json"), "w"), indent=1)
c = load("corpus/sotu.json")  # four short texts and a small vocabulary instead of 233 addresses
c["inputs"], c["tokenizer"]["vocab_size"] = [texts], 512
save("corpus/sotu.json", c)
t = load("train/tiny.json")  # 6 steps of 2 rows instead of 500 of 16
t["corpus"] = os.path.join(work, "data", "sotu")
t.update({"steps": 6, "batch_size": 2, "eval": {"every": 3, "rows": 2}, "checkpoint_every": 3, "log_every": 1})
t["schedule"]["warmup_steps"] = 2
save("train/tiny.json", t)
s = load("studies/qk-lr-tiny.json")  # one LR of its grid (the one the plot example names) for each arm
s["set"].update({"steps": 4, "eval": {"every": 2, "rows": 2}, "checkpoint_every": 2, "schedule": {"warmup_steps": 1, "decay": "cosine", "min_lr_ratio": 0.1}})
s["grid"]["lr"] = [10 ** (-4 + 4 * 5 / 11)]
save("studies/qk-lr-tiny.json", s)
PY

touch "$tmp/setup-done"

# --- the examples ------------------------------------------------------------------------------------
order="corpus train hash tokenize profile track compare eval intervene study merge plot report"
"$omn" --describe-commands >"$tmp/described.jsonl" || { echo "FAIL: --describe-commands"; exit 1; }
/usr/bin/python3 - "$tmp/described.jsonl" "$order" "$tmp/examples" <<'PY' || { echo "FAIL: reading the examples"; exit 1; }
import json, sys
order = sys.argv[2].split()
cmds = {c["name"]: c for line in open(sys.argv[1]) if line.strip() for c in json.loads(line)["commands"]}
missing = sorted(set(cmds) - set(order))
if missing:
    sys.exit("commands this test does not place in its order: %s (add them to order=)" % " ".join(missing))
with open(sys.argv[3], "w") as f:
    for name in order:
        for line in cmds[name]["footer"].splitlines()[1:]:
            if line.strip():
                f.write(line.strip() + "\n")
PY
ran=0
while IFS= read -r example; do
  want=0
  if [[ "$example" =~ \#\ exit\ ([0-9]+) ]]; then want="${BASH_REMATCH[1]}"; fi
  out="$(cd "$work" && timeout 300 bash -c "$example" 2>&1 </dev/null)" && rc=0 || rc=$?
  ran=$((ran + 1))
  if [ "$rc" != "$want" ]; then
    echo "FAIL: the example \`$example\` -> exit $rc (want $want):"
    echo "$out" | tail -n 12
    fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
done <"$tmp/examples"
check "every example was run ($ran)" -- test "$ran" -ge 30
# a shipped config by name writes its outputs here, not beside the config
mkdir -p "$work/elsewhere"
expect 0 "result: sweep.json" -- bash -c 'cd "$1/elsewhere" && omn-audit -q intervene --manifest tiny-demo' _ "$work"
check "intervene --manifest tiny-demo wrote its default outputs into the current directory" -- test -s "$work/elsewhere/sweep.json" -a -s "$work/elsewhere/sweep.csv"
check "study --manifest qk-lr-tiny wrote its document and runs into the current directory" -- test -s "$work/runs/qk-on_lr-6.579e-03_seed-0/train.json"
find "$data" -newer "$tmp/setup-done" >"$tmp/written"
check "nothing was written beside the stand-in configs ($(head -3 "$tmp/written" | tr '\n' ' '))" -- test ! -s "$tmp/written"
# profile --digests: a list that also pins the files beside the weights (`sha256sum *`) checks them;
# a line naming no file (a misspelt weights file) is still refused
cd "$work" || exit 1
printf '%s  model.safetensor\n' "$(sha256sum model.safetensors | cut -c1-64)" >typo.sums
expect 2 "--digests typo.sums: model.safetensor is not model.safetensors" -- "$omn" profile model.safetensors --digests typo.sums
{ sha256sum model.safetensors; printf '%s  config.json\n' "$(printf x | sha256sum | cut -c1-64)"; } >wrong-config.sums
expect 4 "config.json" -- "$omn" profile model.safetensors --digests wrong-config.sums
# train --resume of a run that finished: nothing to run, said so (its final.pt checked against train.json)
expect 0 "the run finished already; nothing to resume" -- "$omn" train --config tiny -o runs/tiny --resume
cp runs/tiny/final.pt final.pt.bak && printf x >>runs/tiny/final.pt
expect 4 "final.pt" -- "$omn" train --config tiny -o runs/tiny --resume
cp final.pt.bak runs/tiny/final.pt
cd "$tmp" || exit 1
# a name that ships nowhere: exit 2 listing the names that do
expect 2 "--manifest tiny-dem: no such file, and no sweep manifest of that name ships with omn-audit \(.*tiny-demo.*\)" -- \
  "$omn" intervene --manifest tiny-dem --plan
expect 2 "--config tinny: no such file, and no training config of that name ships with omn-audit \(.*tiny.*\)" -- \
  "$omn" train --config tinny -o "$tmp/never"
# without OMN_AUDIT_DATA, the build tree's own configs (share/omn-audit/configs beside the binary)
expect 0 "15 conditions and the control twice" -- env -u OMN_AUDIT_DATA "$omn" intervene --manifest tiny-demo --plan
finish
