#!/usr/bin/env bash
# omn-audit eval from the outside: results, JSON, determinism, and every documented error.
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
mini="$fx/omn1-mini.pt"
sha="$(sha256sum "$mini" | cut -d' ' -f1)"
/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(3)
t = rng.integers(1, 512, size=20000).astype(np.uint16)
t[rng.integers(0, 20000, size=150)] = 0
t.tofile(d + "/tok.bin")
np.save(d + "/tok.npy", t.astype(np.int32))
starts = np.flatnonzero(t == 0) + 1
np.savetxt(d + "/offsets.txt", np.concatenate([[0], starts[starts < len(t)]]).astype(np.int64), fmt="%d")
big = t.copy(); big[777] = 600
big.tofile(d + "/oov.bin")
open(d + "/empty.bin", "wb").close()
rng.integers(1, 512, size=3 * 8192).astype(np.uint16).tofile(d + "/long.bin")  # one document, no EOS
PY
base=(eval --checkpoint "$mini" --tokens "$tmp/tok.bin" --eos 0 --tokenizer-revision test-r1 --seq-len 128 --num-seqs 6
      --groups 3 --bootstrap-resamples 500)

expect 0 "perplexity [0-9.]+  \[95% CI" -- "$omn" "${base[@]}" --json "$tmp/e.json" --sha256 "$sha"
check "eval JSON valid against docs/schema/eval.schema.json" -- \
  /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" eval.schema.json "$tmp/e.json"
check "perplexity recomputes from the raw per-sequence numbers" -- /usr/bin/python3 - "$tmp/e.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))["result"]
s = r["sequences"]
ppl = math.exp(sum(s["nll_sum"]) / sum(s["tokens"]))
sys.exit(0 if abs(ppl - r["perplexity"]) <= 1e-9 * ppl and r["perplexity_ci"]["low"] <= ppl <= r["perplexity_ci"]["high"] else 1)
PY
# no --batch: 2,048 tokens a pass (16 rows of 128, but only 6 rows here), recorded as resolved; the
# row sums equal a pass of one row at a time to rounding
check "the default batch is resolved and recorded (6 rows of 128 tokens: 6)" -- \
  /usr/bin/python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['model']['batch'] == 6 else 1)" "$tmp/e.json"
"$omn" "${base[@]}" --batch 1 --json "$tmp/e1.json" --sha256 "$sha" >/dev/null
# how close the two passes' sums are is bounded from the arithmetic in parity.eval_vs_reference
# (a pass of 1 row and of 3, bf16 under both kernels, each within the derived bound of the exact
# value); here: the same rows, the same tokens scored
check "a batch of 6 and a batch of 1 score the same rows and tokens" -- /usr/bin/python3 - "$tmp/e.json" "$tmp/e1.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
same = lambda k: a["result"]["sequences"][k] == b["result"]["sequences"][k]
sys.exit(0 if same("tokens") and a["selection"]["row_indices"] == b["selection"]["row_indices"] and b["model"]["batch"] == 1 else 1)
PY
"$omn" "${base[@]}" --json "$tmp/e2.json" --sha256 "$sha" >/dev/null
strip() { grep -vE '"(started|finished)_utc"|"seconds"|"tokens_per_second"' "$1"; }
check "same inputs, same JSON except timestamps and timing" -- diff <(strip "$tmp/e.json") <(strip "$tmp/e2.json")
expect 0 "per-document attention" -- "$omn" "${base[@]}"
# the trace file is an output like the others: never over an input, replaced only with --force
cp "$mini" "$tmp/ck.pt"
before="$(sha256sum <"$tmp/ck.pt")"
OMN_AUDIT_PROFILE="$tmp/ck.pt" expect 2 "is the input" -- "$omn" "${base[@]/$mini/$tmp/ck.pt}" --force
check "OMN_AUDIT_PROFILE=<checkpoint> left the checkpoint whole" -- test "$(sha256sum <"$tmp/ck.pt")" = "$before"
# every file eval reads is an input, never an output, even with --force: the offsets (written over
# with exit 0 until the review of 2026-12-07), the record beside the tokens, a preset file, a digest list
cp "$tmp/offsets.txt" "$tmp/offsets.keep"
cp "$src/configs/presets/omn-1.json" "$tmp/preset.json"
echo '{"tokens": {"sha256": "none", "format": "u16"}}' >"$tmp/tok.tokens.json"
sha256sum "$mini" >"$tmp/sums.txt"
cp "$tmp/tok.tokens.json" "$tmp/record.keep"; cp "$tmp/preset.json" "$tmp/preset.keep"; cp "$tmp/sums.txt" "$tmp/sums.keep"
ev=(eval --checkpoint "$mini" --tokens "$tmp/tok.bin" --token-format u16 --seq-len 128 --num-seqs 2 --groups 2 --bootstrap-resamples 50)
expect 2 "output .*offsets.txt is the input" -- "$omn" "${ev[@]}" --offsets "$tmp/offsets.txt" -o "$tmp/offsets.txt" --force
expect 2 "offsets.txt is the input" -- "$omn" "${ev[@]}" --offsets "$tmp/offsets.txt" -o "$tmp/x.json" --dump-logits "$tmp/offsets.txt" --force
expect 2 "tok.tokens.json is the input" -- "$omn" "${ev[@]}" --eos 0 -o "$tmp/tok.tokens.json" --force
expect 2 "preset.json is the input" -- "$omn" "${ev[@]}" --eos 0 --preset "$tmp/preset.json" -o "$tmp/preset.json" --force
expect 2 "sums.txt is the input" -- "$omn" "${ev[@]}" --eos 0 --digests "$tmp/sums.txt" -o "$tmp/sums.txt" --force
check "no input eval refused to write over was changed" -- bash -c 'cmp -s "$1/offsets.txt" "$1/offsets.keep" && cmp -s "$1/tok.tokens.json" "$1/record.keep" &&
  cmp -s "$1/preset.json" "$1/preset.keep" && cmp -s "$1/sums.txt" "$1/sums.keep"' _ "$tmp"
rm "$tmp/tok.tokens.json"
# --digests on a single file: the list's line pins it as --sha256 does; a wrong line is exit 4, a line
# naming a file that is not there exit 2, a list and --sha256 that disagree exit 2
expect 0 "perplexity" -- "$omn" "${ev[@]}" --eos 0 --digests "$tmp/sums.txt" -o "$tmp/dg.json"
check "eval --digests: the checkpoint recorded verified" -- /usr/bin/python3 -c \
  "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['checkpoint']['sha256_verified'] else 1)" "$tmp/dg.json"
echo "$(printf '0%.0s' {1..64})  $mini" >"$tmp/wrong.txt"
expect 4 "SHA-256 mismatch" -- "$omn" "${ev[@]}" --eos 0 --digests "$tmp/wrong.txt"
echo "$(printf '0%.0s' {1..64})  $tmp/absent.pt" >"$tmp/absent.txt"
expect 2 "--digests .*absent.txt: .*absent.pt is not" -- "$omn" "${ev[@]}" --eos 0 --digests "$tmp/absent.txt"
expect 2 "--sha256 .* and --digests .* disagree" -- "$omn" "${ev[@]}" --eos 0 --digests "$tmp/sums.txt" --sha256 "$(printf 'a%.0s' {1..64})"
expect 2 "--digests .*: line 1: expected" -- "$omn" "${ev[@]}" --eos 0 --digests "$tmp/offsets.txt"
# the list may pin the run's other inputs too (`sha256sum model tokens offsets`): the tokens and the
# offsets it pins are verified as by --tokens-sha256 and --offsets-sha256, a differing one exit 4
sha256sum "$mini" "$tmp/tok.bin" "$tmp/offsets.txt" >"$tmp/run.sha256"
expect 0 "perplexity" -- "$omn" "${ev[@]}" --offsets "$tmp/offsets.txt" --digests "$tmp/run.sha256" -o "$tmp/dg-run.json"
check "eval --digests naming the tokens and offsets: both recorded verified" -- /usr/bin/python3 -c \
  "import json,sys; i={x['role']: x['verified'] for x in json.load(open(sys.argv[1]))['provenance']['inputs']}; sys.exit(0 if i['tokens'] and i['offsets'] else 1)" "$tmp/dg-run.json"
sed "s|^[0-9a-f]*\(  $tmp/tok.bin\)|$(printf '1%.0s' {1..64})\1|" "$tmp/run.sha256" >"$tmp/run-bad.sha256"
expect 4 "tok.bin: SHA-256 mismatch" -- "$omn" "${ev[@]}" --offsets "$tmp/offsets.txt" --digests "$tmp/run-bad.sha256"
expect 2 "--tokens-sha256 .* and --digests .* disagree about .*tok.bin" -- "$omn" "${ev[@]}" --offsets "$tmp/offsets.txt" \
  --digests "$tmp/run.sha256" --tokens-sha256 "$(printf 'b%.0s' {1..64})"
# a pinned token file that no longer parses (a byte appended: not a whole number of u16) is exit 4
# naming it, not the format error it caused, whether --tokens-sha256 or the list pins it
cp "$tmp/tok.bin" "$tmp/tok-odd.bin"; printf x >>"$tmp/tok-odd.bin"
evo=("${ev[@]/$tmp\/tok.bin/$tmp/tok-odd.bin}")
expect 4 "tok-odd.bin: SHA-256 mismatch" -- "$omn" "${evo[@]}" --eos 0 --tokens-sha256 "$(sha256sum <"$tmp/tok.bin" | cut -c1-64)"
echo "$(sha256sum <"$tmp/tok.bin" | cut -c1-64)  $tmp/tok-odd.bin" >"$tmp/odd.sha256"
expect 4 "tok-odd.bin: SHA-256 mismatch" -- "$omn" "${evo[@]}" --eos 0 --digests "$tmp/odd.sha256"
# every file the list names is an input no output may be (it read: exit 0, a listed file replaced),
# in eval, profile and track alike; a pin for a token record that is not there names the list
mkdir -p "$tmp/m"; cp "$mini" "$tmp/m/ck.pt"; echo notes >"$tmp/m/notes.txt"
sha256sum "$tmp/m/ck.pt" "$tmp/m/notes.txt" >"$tmp/m.sha256"
evm=("${ev[@]/$mini/$tmp/m/ck.pt}")
expect 2 "notes.txt is the input" -- "$omn" "${evm[@]}" --eos 0 --digests "$tmp/m.sha256" -o "$tmp/m/notes.txt" --force
expect 2 "notes.txt is the input" -- "$omn" profile "$tmp/m/ck.pt" --digests "$tmp/m.sha256" -o "$tmp/m/notes.txt" --force
expect 2 "notes.txt is the input" -- "$omn" track "$tmp/m/ck.pt" --order given --digests "$tmp/m.sha256" -o "$tmp/m/notes.txt" --force
check "the listed file no command wrote over is whole" -- test "$(cat "$tmp/m/notes.txt")" = notes
echo "$(printf 'b%.0s' {1..64})  $tmp/tok.tokens.json" >"$tmp/norecord.sha256"
expect 2 "--digests .*norecord.sha256 pins .*tok.tokens.json \(the token record beside .*tok.bin\), which does not exist" -- \
  "$omn" "${ev[@]}" --eos 0 --digests "$tmp/norecord.sha256"
# a listed path is read as sha256sum -c opens it, links before "..": lnk/../tok.bin is the file beside
# lnk's target, not ./tok.bin (it read the other file: exit 4 for a list sha256sum -c accepts)
mkdir -p "$tmp/far/inner"; ln -sfn "$tmp/far/inner" "$tmp/lnk"
/usr/bin/python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d[2:] + d[:2])" "$tmp/tok.bin" "$tmp/far/tok.bin"
(cd "$tmp" && sha256sum far/tok.bin | sed 's|far/tok.bin|lnk/../tok.bin|' >dotdot.sha256 && sha256sum -c --quiet dotdot.sha256)
evd=("${ev[@]/$tmp\/tok.bin/lnk/../tok.bin}")
expect 0 "perplexity" -- bash -c 'cd "$1" && shift && "$@"' _ "$tmp" "$omn" "${evd[@]}" --eos 0 --digests dotdot.sha256 -o dotdot.json
check "eval --digests lnk/../tok.bin: the file sha256sum -c reads is the one verified" -- /usr/bin/python3 -c \
  "import json,sys; i=[x for x in json.load(open(sys.argv[1]))['provenance']['inputs'] if x['role']=='tokens'][0]; sys.exit(0 if i['verified'] else 1)" "$tmp/dotdot.json"
# an output is never a program or a library (an ELF file: the plugins, omn-audit itself), even with --force
cp "$omn" "$tmp/omn-copy"
cp "$tmp/omn-copy" "$tmp/omn-copy.keep"
expect 2 "omn-copy is a program or a shared library" -- "$omn" "${ev[@]}" --eos 0 -o "$tmp/omn-copy" --force
expect 2 "omn-copy is a program or a shared library" -- "$omn" profile "$mini" -o "$tmp/omn-copy" --force
# ... by its whole ELF identification, not the magic alone: a u16 token file may begin 7f 45 4c 46
/usr/bin/python3 -c "import numpy as np, sys; np.array([17791, 17996, 2, 1], '<u2').tofile(sys.argv[1])" "$tmp/elf-like.bin"
expect 0 "perplexity" -- "$omn" "${ev[@]}" --eos 0 -o "$tmp/elf-like.bin" --force
ln -sf "$tmp/omn-copy" "$tmp/omn-link"
expect 2 "omn-link \(a link to .*omn-copy\) is a program or a shared library" -- "$omn" profile "$mini" -o "$tmp/omn-link" --force
check "the program file eval and profile refused to write over is whole" -- cmp -s "$tmp/omn-copy" "$tmp/omn-copy.keep"
echo keep >"$tmp/trace.json"
OMN_AUDIT_PROFILE="$tmp/trace.json" expect 2 "trace.json exists: refusing" -- "$omn" "${base[@]}"
# ... and written like one: a failed write is exit 5, a written trace is whole JSON
OMN_AUDIT_PROFILE=/dev/full expect 5 "cannot write /dev/full" -- "$omn" "${base[@]}" --num-seqs 3
OMN_AUDIT_PROFILE="$tmp/trace2.json" expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 3
check "the trace is a whole Chrome trace (JSON array)" -- /usr/bin/python3 -c "import json,sys; assert json.load(open(sys.argv[1]))" "$tmp/trace2.json"
# the environment is input like a flag: OMP_NUM_THREADS range-checked, a wrong plugin is exit 2
OMP_NUM_THREADS=99999999999 expect 2 "OMP_NUM_THREADS=99999999999 .*expected whole numbers from 1 to 4096" -- "$omn" "${base[@]}"
OMP_NUM_THREADS=abc expect 2 "OMP_NUM_THREADS=abc" -- "$omn" "${base[@]}"
OMP_NUM_THREADS="4,abc" expect 2 "OMP_NUM_THREADS=4,abc" -- "$omn" "${base[@]}"
OMP_NUM_THREADS=" 1 " expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 3
OMP_NUM_THREADS="+1,2" expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 3
OMP_NUM_THREADS=1 expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 3
OMP_NUM_THREADS=99999999999 expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 3 --threads 1
OMN_AUDIT_TORCH_PLUGIN="$(dirname "$omn")/omn-audit-text.so" expect 2 "omn-audit-text.so \(from OMN_AUDIT_TORCH_PLUGIN\) is not the plugin omn-audit-torch.so: it has no entry point" -- "$omn" "${base[@]}"
OMN_AUDIT_TORCH_PLUGIN= expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 3
# one checkpoint: the positional and --checkpoint together are an error, not a silent choice
expect 2 "--checkpoint: At Most 1 required but received 2" -- "$omn" eval "$tmp/ck.pt" "${base[@]:1}"
expect 2 "not expected: .*ck.pt" -- "$omn" "${base[@]}" "$tmp/ck.pt"
check "eval --json - is the document alone" -- bash -c '"$@" --json - 2>/dev/null | /usr/bin/python3 -m json.tool >/dev/null' _ "$omn" "${base[@]}"
# who chose the OpenBLAS kernels reaches the record through the plugin's entry, not the environment
check "a user's OPENBLAS_CORETYPE is recorded as the environment's choice" -- \
  bash -c '[ "$(env -u OMN_AUDIT_KEEP_BLAS OPENBLAS_CORETYPE=Haswell "$@" --json - 2>/dev/null | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[\"model\"][\"blas\"][\"chosen_by\"])")" = environment ]' _ "$omn" "${base[@]}"
check "OMN_AUDIT_KEEP_BLAS leaves the choice to OpenBLAS" -- \
  bash -c '[ "$(env -u OPENBLAS_CORETYPE OMN_AUDIT_KEEP_BLAS=1 "$@" --json - 2>/dev/null | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[\"model\"][\"blas\"][\"chosen_by\"])")" = openblas ]' _ "$omn" "${base[@]}"
# kernels narrower than the CPU's, set by the environment: kept (and recorded) but warned about, once;
# OMN_AUDIT_KEEP_BLAS=1 keeps them quietly; the CPU's own kernels and a name OpenBLAS lacks draw no warning
if grep -qE "avx2" /proc/cpuinfo && grep -qE " fma( |$)" /proc/cpuinfo; then
  narrow="holds fp32 matrix products to kernels narrower than this CPU's .*unset OPENBLAS_CORETYPE.*OMN_AUDIT_KEEP_BLAS=1"
  expect 0 "OPENBLAS_CORETYPE=prescott \(from the environment\) $narrow" -- \
    env -u OMN_AUDIT_KEEP_BLAS OPENBLAS_CORETYPE=prescott "$omn" "${base[@]}"
  check "the narrow-kernels warning is printed once and the choice recorded as the environment's" -- \
    bash -c 'out=$(env -u OMN_AUDIT_KEEP_BLAS OPENBLAS_CORETYPE=Prescott "$@" --json - 2>"$0.err") &&
      [ "$(grep -c "narrower than this CPU" "$0.err")" = 1 ] &&
      [ "$(/usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[\"model\"][\"blas\"][\"openblas_coretype\"])" <<<"$out")" = Prescott ]' \
    "$tmp/narrow" "$omn" "${base[@]}"
  check "OMN_AUDIT_KEEP_BLAS=1 keeps narrow kernels without the warning" -- \
    bash -c '! env OMN_AUDIT_KEEP_BLAS=1 OPENBLAS_CORETYPE=Prescott "$@" 2>&1 | grep -q "narrower than this CPU"' _ "$omn" "${base[@]}"
  best=$(grep -qE "avx512f" /proc/cpuinfo && grep -qE "avx512bw" /proc/cpuinfo && grep -qE "avx512dq" /proc/cpuinfo &&
    grep -qE "avx512vl" /proc/cpuinfo && echo SkylakeX || echo Haswell)
  for c in "$best" NoSuchCore; do
    check "OPENBLAS_CORETYPE=$c draws no narrow-kernels warning" -- \
      bash -c '! env -u OMN_AUDIT_KEEP_BLAS OPENBLAS_CORETYPE="$0" "$@" 2>&1 | grep -q "narrower than this CPU"' "$c" "$omn" "${base[@]}"
  done
  if [ "$best" = SkylakeX ]; then
    expect 0 "OPENBLAS_CORETYPE=Haswell \(from the environment\) holds .*\(SkylakeX\)" -- \
      env -u OMN_AUDIT_KEEP_BLAS OPENBLAS_CORETYPE=Haswell "$omn" "${base[@]}"
  fi
fi
if grep -qE "avx2|avx512f" /proc/cpuinfo; then
  check "omn-audit's own kernel choice is recorded as omn-audit's" -- \
    bash -c '[ "$(env -u OPENBLAS_CORETYPE -u OMN_AUDIT_KEEP_BLAS "$@" --json - 2>/dev/null | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)[\"model\"][\"blas\"][\"chosen_by\"])")" = omn-audit ]' _ "$omn" "${base[@]}"
fi
expect 0 "masked attention" -- "$omn" "${base[@]}" --row-form historical
expect 0 "masked attention" -- "$omn" "${base[@]}" --attention masked
expect 0 "perplexity" -- "$omn" "${base[@]}" --row-form per-document --selection seeded --selection-seed 7
expect 0 "perplexity" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/tok.npy" --offsets "$tmp/offsets.txt" \
  --tokenizer-revision r --seq-len 64 --num-seqs 2 --dtype fp32 --batch 2 --groups 2
expect 0 "fp32" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/tok.npy" --offsets "$tmp/offsets.txt" \
  --tokenizer-revision r --seq-len 64 --num-seqs 2 --dtype fp32 --groups 1

# errors: exit 2 (usage/input) or 4 (integrity), with the place named
# numbers in files that std::stoull threw on (exit 1) or wrapped: a shape and an offset
/usr/bin/python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
raw = open(d + "/tok.npy", "rb").read()
for name, shape in (("shape-text", b"(abc,)"), ("shape-negative", b"(-1,)")):
    open(d + "/" + name + ".npy", "wb").write(raw.replace(b"(20000,)", shape.ljust(8)))
open(d + "/offsets-huge.txt", "w").write("0\n99999999999999999999999\n")
open(d + "/offsets-order.txt", "w").write("0\n40\n30\n")
PY
for f in shape-text shape-negative; do
  expect 2 "$f.npy: .npy shape .* is not a dimension" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/$f.npy" --eos 0 \
    --tokenizer-revision r --seq-len 64 --num-seqs 2 --groups 1
done
expect 2 "offsets-huge.txt: entry 2 .* is beyond any token offset" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/tok.npy" \
  --offsets "$tmp/offsets-huge.txt" --tokenizer-revision r --seq-len 64 --num-seqs 2 --groups 1
# the text and .npy paths number entries alike, from 1 (the third line of the file is entry 3)
expect 2 "offsets-order.txt: entry 3 \(counting from 1: 30\) is not an increasing offset below [0-9]+, after entry 2's 40" -- \
  "$omn" eval --checkpoint "$mini" --tokens "$tmp/tok.npy" --offsets "$tmp/offsets-order.txt" --tokenizer-revision r --seq-len 64 --num-seqs 2 --groups 1
expect 4 "SHA-256 mismatch" -- "$omn" "${base[@]}" --sha256 "$(printf '%064d' 0)"
expect 4 "truncated.pt: SHA-256 mismatch" -- "$omn" "${base[@]/$mini/$fx/interop/truncated.pt}" --sha256 "$(printf '%064d' 0)"
expect 2 "truncated.pt: no zip end" -- "$omn" "${base[@]/$mini/$fx/interop/truncated.pt}"
# a quick look without --tokenizer-revision: run, warned, recorded as unknown (null), flagged in
# the report; the checkpoint positional as profile takes it
expect 0 "recorded as unknown" -- "$omn" eval "$mini" --tokens "$tmp/tok.bin" --eos 0 --seq-len 64 --num-seqs 2 --groups 1 \
  --bootstrap-resamples 50 --json "$tmp/quick.json"
check "no revision: recorded as null" -- /usr/bin/python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["tokens"]["tokenizer_revision"] is not None)' "$tmp/quick.json"
expect 0 "tokenizer revision was not recorded" -- "$omn" report "$tmp/quick.json" -o "$tmp/quick.html"
check "the report says unknown" -- grep -q "unknown (not recorded)" "$tmp/quick.html"
expect 2 "oov.bin: token id 600 at position 777" -- "$omn" "${base[@]/$tmp\/tok.bin/$tmp/oov.bin}"
expect 2 "empty.bin: the token set is empty" -- "$omn" "${base[@]/$tmp\/tok.bin/$tmp/empty.bin}"
expect 2 "--num-seqs 1000: the token set yields only [0-9]+ rows of this length and form \(shorter rows, more text, or --up-to" -- \
  "$omn" "${base[@]}" --num-seqs 1000
# the historical panel's conventions, on request: "up to N" sequences and ids >= the vocabulary
# dropped (as its vocabulary-size filter did), both recorded
expect 0 "perplexity" -- "$omn" "${base[@]}" --num-seqs 1000 --up-to --json "$tmp/upto.json"
check "--up-to: every row the set has, the request and the count recorded" -- /usr/bin/python3 - "$tmp/upto.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["selection"]
sys.exit(0 if s["up_to"] and s["num_seqs_requested"] == 1000 and s["num_seqs"] == s["rows_available"] < 1000 else 1)
PY
expect 0 "perplexity" -- "$omn" "${base[@]/$tmp\/tok.bin/$tmp/oov.bin}" --out-of-vocabulary drop --json "$tmp/oov.json"
check "--out-of-vocabulary drop: the one id >= 512 dropped and counted" -- /usr/bin/python3 - "$tmp/oov.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tokens"]["out_of_vocabulary"]
sys.exit(0 if t == {"policy": "drop", "dropped": 1, "vocab_size": 512} else 1)
PY
expect 2 "--out-of-vocabulary: expected refuse or drop" -- "$omn" "${base[@]}" --out-of-vocabulary keep
expect 2 "needs document boundaries" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/tok.bin" --tokenizer-revision r
expect 2 "fp16 on the CPU" -- "$omn" "${base[@]}" --dtype fp16
# a bad OMN_BF16_PRODUCTS is refused at the edge, before the checkpoint is read (fp32 too: it was
# only noticed when the result recorded the choice, after the whole run)
expect 2 "OMN_BF16_PRODUCTS: expected native or fp32-accumulate" -- env OMN_BF16_PRODUCTS=fast "$omn" "${base[@]}" --dtype fp32
# a CPU build has no flash path; a CUDA build has one, but not for a CPU device: exit 2 either way
expect 2 "no flash path|runs on CUDA devices only" -- "$omn" "${base[@]}" --attention flash
expect 2 "expected auto, flash" -- "$omn" "${base[@]}" --attention fast
expect 2 "--groups must be between" -- "$omn" "${base[@]}" --groups 100
# --groups beyond --num-seqs is refused before the checkpoint is read (one that is not a checkpoint,
# here; a missing one is refused before the plugin loads: tests/cli/test_inputs_cli.sh)
printf 'not a checkpoint' >"$tmp/not-a-checkpoint.pt"
expect 2 "--groups must be between 1 and the number of sequences \\(3\\), got 5" -- "$omn" eval "$tmp/not-a-checkpoint.pt" \
  --tokens "$tmp/tok.bin" --eos 0 --tokenizer-revision r --num-seqs 3 --groups 5
# --token-format auto on a raw file: the width tokenize's record beside it gives (STEM.tokens.json, bound by
# the file's digest); without one, u16 and a warning (a u32 file read as u16 had twice its tokens, every id wrong)
/usr/bin/python3 - "$tmp/tok.bin" "$tmp/tok32.bin" "$tmp/tok32.tokens.json" <<'PY'
import hashlib, json, sys
import numpy as np
np.fromfile(sys.argv[1], dtype=np.uint16).astype(np.uint32).tofile(sys.argv[2])
digest = hashlib.sha256(open(sys.argv[2], "rb").read()).hexdigest()
json.dump({"schema": "omn-audit/tokens@1", "tokens": {"path": "tok32.bin", "sha256": digest, "format": "u32"}}, open(sys.argv[3], "w"))
PY
expect 0 "perplexity" -- "$omn" "${base[@]/$tmp\/tok.bin/$tmp/tok32.bin}" --json "$tmp/e32.json"
check "auto on a raw file with its record: read as u32, the same ids scored as the u16 file's" -- /usr/bin/python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if b["tokens"]["format"] == "u32" and b["tokens"]["n_tokens"] == a["tokens"]["n_tokens"]
         and b["result"]["sequences"] == a["result"]["sequences"] else 1)' "$tmp/e.json" "$tmp/e32.json"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["tokens"]["sha256"] = "0" * 64; json.dump(d, open(sys.argv[1], "w"))' \
  "$tmp/tok32.tokens.json"
expect 0 "tok32.bin: read as u16 \\(--token-format auto: no record of this file beside it gives its width\\)" -- \
  "$omn" "${base[@]/$tmp\/tok.bin/$tmp/tok32.bin}" --out-of-vocabulary drop
# without --groups: the default 5, or every row where fewer are scored
expect 0 "perplexity" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/tok.bin" --eos 0 --tokenizer-revision test-r1 --seq-len 128 \
  --num-seqs 3 --bootstrap-resamples 500 --json "$tmp/three.json"
check "--num-seqs 3 without --groups: three groups of one row" -- /usr/bin/python3 -c \
  'import json, sys; sys.exit(0 if len(json.load(open(sys.argv[1]))["result"]["groups"]) == 3 else 1)' "$tmp/three.json"
# one row: no interval (a bootstrap over sequences needs two), said on the terminal, recorded as null, warned in the report
expect 0 "no interval: one sequence" -- "$omn" "${base[@]}" --num-seqs 1 --groups 1 --json "$tmp/one.json"
check "one row: the interval's bounds null, its method says why" -- /usr/bin/python3 - "$tmp/one.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["result"]
ci = r["perplexity_ci"]
sys.exit(0 if ci["low"] is None and ci["high"] is None and ci["method"].startswith("none: a bootstrap over sequences needs at least two")
         and r["perplexity"] > 0 and len(r["groups"]) == 1 else 1)
PY
expect 0 "One sequence was scored: no interval and no p-value" -- "$omn" report "$tmp/one.json" -o "$tmp/one.html"
check "the report prints no bounds for one sequence" -- bash -c 'grep -q "\[no interval: one sequence\]" "$1" && ! grep -q "NaN, NaN" "$1"' _ "$tmp/one.html"
# the token set and its offsets pinned: verified in the result; a wrong pin is exit 4 naming the file
tok_sha=$(sha256sum "$tmp/tok.bin" | cut -d' ' -f1)
expect 0 "perplexity" -- "$omn" "${base[@]}" --tokens-sha256 "$tok_sha" --json "$tmp/pinned.json"
check "--tokens-sha256: the tokens input recorded as verified" -- /usr/bin/python3 -c \
  'import json, sys; sys.exit(0 if [i["verified"] for i in json.load(open(sys.argv[1]))["provenance"]["inputs"] if i["role"] == "tokens"] == [True] else 1)' \
  "$tmp/pinned.json"
expect 4 "tok.bin" -- "$omn" "${base[@]}" --tokens-sha256 "$(printf '0%.0s' $(seq 64))"
expect 2 "--tokens-sha256" -- "$omn" "${base[@]}" --tokens-sha256 abc
# a pin given empty (an unset variable) is refused, never read as "no pin"
for flag in --sha256 --config-sha256 --tokens-sha256 --offsets-sha256; do
  expect 2 "$flag: expected a SHA-256 of 64 hex digits, got an empty value" -- "$omn" "${base[@]}" "$flag" ""
done
expect 2 "--digests: expected a sha256sum-style list file, got an empty value" -- "$omn" "${base[@]}" --digests ""
expect 2 "--digests: expected a sha256sum-style list file, got an empty value" -- "$omn" profile "$mini" --digests ""
expect 2 "--digests: expected a sha256sum-style list file, got an empty value" -- "$omn" track "$mini" --digests ""
expect 2 "--offsets-sha256 pins an offsets file, and none is given \\(--offsets\\)" -- "$omn" "${base[@]}" --offsets-sha256 "$tok_sha"
expect 0 "The tokens file .*tok.bin was not verified against an expected SHA-256" -- "$omn" report "$tmp/three.json" -o "$tmp/three.html"
expect 2 "confidence: expected a number in \\(0, 1\\)" -- "$omn" "${base[@]}" --confidence 1.5
expect 2 "num-seqs: Value -3 not in range" -- "$omn" "${base[@]}" --num-seqs -3
expect 2 "device: expected cpu, cuda or cuda:N" -- "$omn" "${base[@]}" --device cpu:5
expect 2 "eos / /tokens/eos 9999 is outside the model's vocabulary" -- "$omn" "${base[@]}" --eos 9999
expect 2 "eval does not implement" -- "$omn" eval --checkpoint "$fx/interop/gemma3.safetensors" --tokens "$tmp/tok.bin" \
  --eos 0 --tokenizer-revision r
# the memory preflight: what cannot fit is exit 2 before a weight is loaded, with the figures and the
# option that fixes it (OMN_MEMORY_AVAILABLE stands for a smaller machine)
long=(--seq-len 4096 --num-seqs 4 --groups 2 --batch 4)
OMN_MEMORY_AVAILABLE=300000000 expect 2 "4 rows of 4096 tokens with masked attention needs about 1\.[0-9] GiB \(weights .*attention scores .*; 286 MiB available \(OMN_MEMORY_AVAILABLE\): --attention blockwise needs about" -- \
  "$omn" "${base[@]}" "${long[@]}" --attention masked
OMN_MEMORY_AVAILABLE=100000000 expect 2 "blockwise attention needs about .*: --attention blockwise with --batch [0-9]+ fits" -- \
  "$omn" "${base[@]}" "${long[@]}" --attention blockwise
OMN_MEMORY_AVAILABLE=1 expect 2 "the weights and the head.s logits alone do not fit" -- "$omn" "${base[@]}"
OMN_MEMORY_AVAILABLE=12x expect 2 "OMN_MEMORY_AVAILABLE: expected a positive number of bytes" -- "$omn" "${base[@]}"
OMN_ATTENTION_BLOCK=0 expect 2 "OMN_ATTENTION_BLOCK: expected a block of 1 to 1048576 tokens, got \"0\"" -- "$omn" "${base[@]}" --attention blockwise
# auto takes the blockwise path where one layer's score matrix would pass 1 GiB (3 rows of 8,192
# tokens, 2 heads: 1.5 GiB), and scores what the masked path scores (the bound between the paths:
# parity.eval_vs_reference)
expect 0 "blockwise attention" -- "$omn" eval --checkpoint "$mini" --tokens "$tmp/long.bin" --tokenizer-revision r \
  --eos 0 --seq-len 8192 --num-seqs 3 --groups 3 --batch 3
"$omn" "${base[@]}" --attention blockwise --json "$tmp/bw.json" >/dev/null
check "the blockwise path scores the rows the masked path scores" -- /usr/bin/python3 - "$tmp/e.json" "$tmp/bw.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if b["model"]["attention"] == "blockwise" and a["result"]["sequences"]["tokens"] == b["result"]["sequences"]["tokens"] else 1)
PY
# a checkpoint omn-audit trained records its training length: the rows' length without --seq-len;
# longer rows are scored, said on stderr and recorded
demo=(eval "$src/demo/tiny-sotu/final.pt" --tokens "$src/demo/tiny-sotu/heldout.bin" --eos 1 --num-seqs 4 --groups 2)
expect 0 "rows of 128 tokens: the training length the checkpoint records" -- "$omn" "${demo[@]}" --json "$tmp/trained.json"
expect 0 "rows of 256 tokens are past the training length the checkpoint records \(128\)" -- \
  "$omn" "${demo[@]}" --seq-len 256 --json "$tmp/past.json"
check "the row length's source and the training length are recorded" -- /usr/bin/python3 - "$tmp/trained.json" "$tmp/past.json" "$tmp/e.json" <<'PY'
import json, sys
t, p, e = (json.load(open(f))["selection"] for f in sys.argv[1:])
ok = (t["seq_len"], t["seq_len_source"], t["training_seq_len"], t["past_training_length"]) == (128, "training length", 128, False)
ok &= (p["seq_len"], p["seq_len_source"], p["past_training_length"]) == (256, "given", True)
ok &= (e["seq_len_source"], e["training_seq_len"], e["past_training_length"]) == ("given", None, False)
sys.exit(0 if ok else 1)
PY
"$omn" "${base[@]}" --json "$tmp/keep.json" >/dev/null
before="$(sha256sum "$tmp/keep.json")"
expect 2 "exists: refusing to overwrite" -- "$omn" "${base[@]}" --json "$tmp/keep.json"
check "existing output untouched" -- test "$(sha256sum "$tmp/keep.json")" = "$before"
finish
