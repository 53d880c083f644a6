#!/usr/bin/env bash
# Inputs checked before anything costly, and refusals that name the place (issue 50): a missing
# input file with --threads 500 is refused before the thread pool is built; --eos -1, a manifest's
# /model/batch past --batch's limit, /rows/num_seqs past --num-seqs's and more /groups than rows each
# name their flag or pointer; a re-zipped (deflated) checkpoint names its compression; track reads a
# run's config.json once.
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
mini="$fx/omn1-mini.pt"
mini_manifest 1  # $tmp/m.json: the first condition, 4 rows
variant() {  # variant NAME EDIT: $tmp/m.json with a python edit of m
  /usr/bin/python3 - "$tmp/m.json" "$tmp/$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"))
PY
}

# a missing input is refused before the thread pool (500 threads on a small machine took seconds) and
# before the machine's hints, which come with the pool: the error is the only line
out="$("$omn" eval "$mini" --tokens "$tmp/no-such.bin" --threads 500 2>&1)"
rc=$?
check "eval --threads 500 with a missing --tokens: exit 2 naming the flag (got $rc: $out)" -- \
  grep -qE "^omn-audit: error: --tokens $tmp/no-such.bin: cannot open for reading" <<<"$out"
check "... and nothing before it: refused before the pool and the machine hints" -- test "$(wc -l <<<"$out")" -eq 1 -a "$rc" -eq 2
expect 2 "checkpoint $tmp/no-such.pt: cannot open for reading" -- "$omn" eval "$tmp/no-such.pt" --tokens "$tmp/mini-tokens.bin" --threads 500
expect 2 "--offsets $tmp/no-such.txt: cannot open for reading" -- \
  "$omn" eval "$mini" --tokens "$tmp/mini-tokens.bin" --offsets "$tmp/no-such.txt" --threads 500
variant gone.json 'm["tokens"]["path"] = "no-such.bin"'
expect 2 "manifest $tmp/gone.json: /tokens/path $tmp/no-such.bin: cannot open for reading" -- \
  "$omn" -q intervene --manifest "$tmp/gone.json" --threads 500

# the inputs a command names are checked before its plugin is loaded: with the plugin pointed at a
# file that does not exist, a missing input is still the error (exit 2, the plugin's own words), and
# only with every input there is the plugin's absence the error
nope="$tmp/no-such-plugin.so"
out="$(OMN_AUDIT_TORCH_PLUGIN="$nope" "$omn" eval "$tmp/no-such.pt" --tokens "$tmp/mini-tokens.bin" 2>&1)"
rc=$?
check "no plugin and a missing checkpoint: exit 2 naming the checkpoint, not the plugin (got $rc: $out)" -- \
  bash -c '[ "$1" -eq 2 ] && grep -qE "^omn-audit: error: checkpoint $2/no-such.pt: cannot open for reading" <<<"$3" && ! grep -q plugin <<<"$3"' \
  _ "$rc" "$tmp" "$out"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "^omn-audit: error: --tokens $tmp/no-such.bin: cannot open for reading" -- \
  "$omn" eval --up-to "$mini" --seq-len 8 --tokens "$tmp/no-such.bin"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "^omn-audit: error: --offsets $tmp/no-such.txt: cannot open for reading" -- \
  "$omn" -q eval "$mini" --tokens="$tmp/mini-tokens.bin" --offsets "$tmp/no-such.txt"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "^omn-audit: error: manifest $tmp/no-such.json: cannot open for reading" -- \
  "$omn" intervene --plan --manifest "$tmp/no-such.json"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "^omn-audit: error: training config $tmp/no-such.json: cannot open for reading" -- \
  "$omn" train --resume --config "$tmp/no-such.json" -o "$tmp/no-run"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "^omn-audit: error: --corpus $tmp/no-such: cannot open for reading" -- \
  "$omn" train --config tiny --corpus "$tmp/no-such" -o "$tmp/no-run"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "^omn-audit: error: study manifest $tmp/no-such.json: cannot open for reading" -- \
  "$omn" study --manifest "$tmp/no-such.json"
OMN_AUDIT_TEXT_PLUGIN="$nope" expect 2 "^omn-audit: error: corpus config $tmp/no-such.json: cannot open for reading" -- \
  "$omn" corpus --config "$tmp/no-such.json" -o "$tmp/no-corpus"
check "nothing written by the refused train and corpus" -- test ! -e "$tmp/no-run" -a ! -e "$tmp/no-corpus"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "needs the plugin omn-audit-torch.so, which could not be loaded from $nope" -- \
  "$omn" eval "$mini" --tokens "$tmp/mini-tokens.bin"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "needs the plugin omn-audit-torch.so" -- "$omn" train --config tiny -o "$tmp/no-run"
OMN_AUDIT_TORCH_PLUGIN="$nope" expect 2 "needs the plugin omn-audit-torch.so" -- "$omn" eval "$tmp/no-such.pt" --help

# each refusal names its flag or pointer
expect 2 "--eos: expected a token id >= 0, got -1" -- "$omn" eval "$mini" --tokens "$tmp/mini-tokens.bin" --eos -1
variant batch.json 'm["model"]["batch"] = 2147483647'
expect 2 "manifest $tmp/batch.json: /model/batch: expected an integer <= 65536, got 2147483647" -- \
  "$omn" -q intervene --manifest "$tmp/batch.json"
expect 2 "--batch: Value 65537 not in range" -- "$omn" eval "$mini" --tokens "$tmp/mini-tokens.bin" --batch 65537
variant seqs.json 'm["rows"]["num_seqs"] = 3000000000'
out="$("$omn" -q intervene --manifest "$tmp/seqs.json" 2>&1)"
check "/rows/num_seqs 3e9: exit 2 naming /rows/num_seqs, not /groups ($out)" -- \
  bash -c 'grep -q "/rows/num_seqs: expected an integer <= 1000000000, got 3000000000" <<<"$1" && ! grep -q "/groups" <<<"$1"' _ "$out"
variant groups.json 'm["groups"] = 5'
expect 2 "/groups: more groups \(5\) than /rows/num_seqs \(4\)" -- "$omn" -q intervene --manifest "$tmp/groups.json"
# /rows/up_to: fewer rows than asked for, and fewer than /groups: refused before any pass, naming /groups
variant upto.json 'm["rows"].update(num_seqs=1000, up_to=True, seq_len=4096); m["groups"] = 50; m["output"] = {"json": "upto-out.json"}'
expect 2 "manifest $tmp/upto.json: /groups must be between 1 and the number of sequences \([0-9]+\), got 50" -- \
  "$omn" -q intervene --manifest "$tmp/upto.json"
check "no journal and no result after the refused /groups" -- test ! -e "$tmp/upto-out.json.journal" -a ! -e "$tmp/upto-out.json"
expect 2 "manifest $tmp/upto.json: /groups must be between 1 and the number of sequences \([0-9]+\), got 50" -- \
  "$omn" -q intervene --manifest "$tmp/upto.json" --plan
# --num-seqs over /rows/num_seqs: too few rows names the flag, not the manifest's pointer
expect 2 "error: --num-seqs 100000: the token set yields only [0-9]+ rows" -- "$omn" -q intervene --manifest "$tmp/m.json" --num-seqs 100000
# /groups absent: the default 5, or every row /rows/up_to leaves (it was refused after --plan had passed)
variant upto-default.json 'm.pop("groups", None); m["rows"].update(num_seqs=1000, up_to=True, seq_len=16384); m["output"] = {"json": "upto-default-out.json"}'
expect 0 "" -- "$omn" -q intervene --manifest "$tmp/upto-default.json"
check "/rows/up_to without /groups: one group per row left" -- /usr/bin/python3 -c \
  'import json, sys; r = json.load(open(sys.argv[1]))["control"]["open"]["result"]; sys.exit(0 if 1 <= len(r["groups"]) == len(r["sequences"]["tokens"]) < 5 else 1)' \
  "$tmp/upto-default-out.json"
# /tokens/offsets_sha256 pins the offsets file: a mismatch is exit 4 naming it; a pin without offsets is exit 2
printf '0\n' >"$tmp/offs.txt"
variant offs-pin.json 'm["tokens"].pop("eos", None); m["tokens"].update(offsets="offs.txt", offsets_sha256="0" * 64); m["output"] = {"json": "offs-out.json"}'
expect 4 "offs.txt: SHA-256 mismatch" -- "$omn" -q intervene --manifest "$tmp/offs-pin.json"
variant offs-none.json 'm["tokens"]["offsets_sha256"] = "0" * 64'
expect 2 "manifest $tmp/offs-none.json: /tokens/offsets_sha256: pins an offsets file, and /tokens/offsets gives none" -- \
  "$omn" -q intervene --manifest "$tmp/offs-none.json"

# a torch.save file re-zipped with compression: the method is named
/usr/bin/python3 - "$mini" "$tmp/deflated.pt" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as out:
    for i in z.infolist():
        out.writestr(i.filename, z.read(i.filename))
PY
expect 2 "deflated.pt: entry '.*' is compressed \(deflate, zip method 8\)" -- "$omn" profile "$tmp/deflated.pt"

# track reads a run directory's config.json once (it was read four times); strace counts the opens
run="$tmp/run"
mkdir -p "$run/checkpoints"
cp "$mini" "$run/checkpoints/step-000001.pt"
cp "$mini" "$run/final.pt"
echo '{"schema": "omn-audit/train-config@1"}' >"$run/config.json"
if strace -f -o /dev/null true 2>/dev/null; then
  strace -f -e trace=open,openat -o "$tmp/trace" "$omn" track "$run" --order given >/dev/null 2>&1
  check "track RUN opens RUN/config.json once ($(grep -c "$run/config.json" "$tmp/trace") times)" -- \
    test "$(grep -c "$run/config.json\"" "$tmp/trace")" -eq 1
else
  echo "skip: no strace here (track's reads of config.json not counted)"
fi
finish
