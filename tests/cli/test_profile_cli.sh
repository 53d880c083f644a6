#!/usr/bin/env bash
# omn-audit profile/hash/compare from the outside: exit codes 0/2/3/4/5, messages that name the file
# and place, nothing executed, nothing overwritten.
set -u
omn="$1" fx="$2" src="$3"
source "$(dirname "$0")/lib.sh"
mini="$fx/omn1-mini.pt"
sha="$(sha256sum "$mini" | cut -d' ' -f1)"

# hash: the same digest as sha256sum
expect 0 "^$sha  $mini\$" -- "$omn" hash "$mini"
# as sha256sum: "-" is standard input, -c checks a list, one unreadable file does not stop the others
check "hash - reads standard input" -- bash -c '[ "$("$1" hash - <"$2")" = "$(sha256sum - <"$2")" ]' _ "$omn" "$mini"
expect 2 "^$sha  $mini\$" -- "$omn" hash "$tmp/missing" "$mini"
sha256sum "$mini" >"$tmp/list.sha256"
expect 0 "$mini: OK" -- "$omn" hash -c "$tmp/list.sha256"
expect 0 "$mini: OK" -- bash -c '"$1" hash -c - <"$2"' _ "$omn" "$tmp/list.sha256"
printf 'x' >"$tmp/changed" && sha256sum "$tmp/changed" >>"$tmp/list.sha256" && printf 'y' >"$tmp/changed"
expect 4 "$mini: OK.*changed: FAILED|did NOT match" -- "$omn" hash -c "$tmp/list.sha256"
printf 'not a line\n' >>"$tmp/list.sha256"
expect 4 "list.sha256:3: not a checksum line" -- "$omn" hash -c "$tmp/list.sha256"
: >"$tmp/empty.sha256"
expect 2 "no checksum lines" -- "$omn" hash -c "$tmp/empty.sha256"
mkfifo "$tmp/list.fifo"
expect 2 "list.fifo: not a regular file" -- timeout 20 "$omn" hash -c "$tmp/list.fifo"
expect 2 "not a regular file" -- "$omn" hash -c "$tmp"
{ echo "# digests of the release"; sha256sum "$mini"; } >"$tmp/commented.sha256"
expect 0 "$mini: OK" -- "$omn" hash -c "$tmp/commented.sha256"   # as sha256sum -c: a comment is warned about, not a failure
# sha256sum's switches for -c, and standard input when no file is named
printf '%s  %s\n%s  %s\n' "$sha" "$mini" "$sha" "$tmp/not-there" > "$tmp/sw.sha256"
expect 2 "not-there: FAILED open or read" -- "$omn" hash -c "$tmp/sw.sha256"
check "hash -c --ignore-missing --quiet: silent, exit 0 (sha256sum's output)" -- \
  bash -c '[ -z "$("$1" hash -c "$2" --ignore-missing --quiet 2>&1)" ] && [ "$(sha256sum -c "$2" --ignore-missing --quiet 2>&1)" = "" ]' _ "$omn" "$tmp/sw.sha256"
check "omn-audit -q hash -c: no OK lines" -- bash -c '[ -z "$("$1" -q hash -c "$2" --ignore-missing)" ]' _ "$omn" "$tmp/sw.sha256"
check "hash -c --status: nothing on standard output (the open error on stderr, as sha256sum), exit 2" -- \
  bash -c 'out="$("$1" hash -c "$2" --status 2>/dev/null)"; rc=$?; [ -z "$out" ] && [ $rc = 2 ]' _ "$omn" "$tmp/sw.sha256"
{ echo '# a comment'; printf '%064d  %s\n' 0 "$tmp/gone"; } > "$tmp/gone.sha256"
expect 2 "no file was verified" -- "$omn" hash -c "$tmp/gone.sha256" --ignore-missing
check "hash -c --ignore-missing --status with every file missing: silent, exit 2" -- \
  bash -c 'out="$("$1" hash -c "$2" --ignore-missing --status 2>&1)"; rc=$?; [ -z "$out" ] && [ $rc = 2 ]' _ "$omn" "$tmp/gone.sha256"
printf '%s  %s\n' "$(printf '%064d' 0)" "$tmp/not-there" > "$tmp/none.sha256"
expect 2 "no file was verified" -- "$omn" hash -c "$tmp/none.sha256" --ignore-missing
expect 2 "not a checksum line" -- "$omn" hash -c "$tmp/commented.sha256" --strict
expect 2 "apply to -c LIST" -- "$omn" hash "$mini" --quiet
check "hash with no file reads standard input, as sha256sum" -- bash -c '[ "$("$1" hash <"$2")" = "$(sha256sum <"$2")" ]' _ "$omn" "$mini"
# the model's size and whether its head is a copy of the embedding, as torch counts them
"$omn" profile "$mini" --json "$tmp/params.json" --no-tables -q
check "parameters: count and head identity agree with torch" -- /usr/bin/python3 - "$mini" "$tmp/params.json" <<'PY'
import json, sys, torch
sd = torch.load(sys.argv[1], map_location="cpu", weights_only=False)["model"]
seen, n = set(), 0
for t in sd.values():
    key = (t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr(), t.storage_offset(), t.numel())
    if key not in seen:
        seen.add(key)
        n += t.numel()
p = json.load(open(sys.argv[2]))["parameters"]
ident = torch.equal(sd["tok_embeddings.weight"], sd["output.weight"])
sys.exit(0 if p["count"] == n and p["head_identical_to_embedding"] == ident and ident else 1)
PY
expect 0 "params    7853312 \(7.853M\); output head byte-identical to the embedding" -- "$omn" profile "$mini"
# --no-tables still says what the digest verified (on stderr: stdout may be carrying --json -)
expect 0 "\(verified\)" -- "$omn" profile "$mini" --sha256 "$sha" --no-tables
check "--json -: the document alone on stdout, schema first" -- bash -c '"$1" profile "$2" --sha256 "$3" --no-tables --json - 2>/dev/null | head -n 2 | grep -q "\"schema\": \"omn-audit/profile@1\""' _ "$omn" "$mini" "$sha"

# the calibrated fixture reproduces every published figure; a perturbed layer is a regression
expect 0 "17 of 17 within tolerance" -- "$omn" profile "$mini" --baseline "$src/configs/omn-1-reference-profile.json"
expect 0 "OK: every statistic" -- "$omn" profile "$mini" --baseline omn-1-reference --no-tables
expect 3 "mean .*DRIFT" -- "$omn" profile "$fx/omn1-mini-perturbed.pt" --baseline "$src/configs/omn-1-reference-profile.json" --no-tables
# --preset's help and the unknown-preset error name the same built-in presets
presets_err="$("$omn" profile "$mini" --preset nonesuch 2>&1 | sed -n 's/.*neither a built-in preset (\([^)]*\)).*/\1/p')"
check "--preset help lists the presets the error names ($presets_err)" -- \
  bash -c '[ -n "$1" ] && "$2" profile --help | grep -qF "built-in preset ($1)" && "$2" track --help | grep -qF "built-in preset ($1)"' _ "$presets_err" "$omn"
# the verdict in the document, for a CI job that reads JSON: pass and drift, with the exit code
"$omn" profile "$mini" --baseline omn-1-reference --no-tables --json "$tmp/verdict-pass.json" >/dev/null 2>&1
"$omn" profile "$fx/omn1-mini-perturbed.pt" --baseline omn-1-reference --no-tables --json "$tmp/verdict-drift.json" >/dev/null 2>&1
check "--json carries the regression verdict (pass: exit 0; drift: exit 3 with the drifted statistics)" -- /usr/bin/python3 - "$tmp/verdict-pass.json" "$tmp/verdict-drift.json" <<'PY'
import json, sys
p, d = (json.load(open(f))["regression"] for f in sys.argv[1:])
ok = (p["verdict"], p["exit_code"], p["drifted"], p["drifts"]) == ("pass", 0, 0, []) and p["checked"] > 0
ok &= (d["verdict"], d["exit_code"]) == ("drift", 3) and d["drifted"] == len(d["drifts"]) > 0
ok &= all(set(x) >= {"pointer", "baseline", "actual", "allowed"} for x in d["drifts"])
sys.exit(0 if ok else 1)
PY
# another architecture (the 4-layer demo model against OMN-1's 28 layers) is exit 2 naming both, not drift
expect 2 "another architecture: its figure /layers/27/.*this checkpoint: 4 layers, head_dim 32" -- "$omn" profile "$src/demo/tiny-sotu/final.pt" --baseline omn-1-reference --no-tables
expect 0 "3.460332" -- "$omn" profile "$mini" --sha256 "$sha"
expect 0 "\(verified\)" -- "$omn" profile "$mini" --sha256 "${sha^^}"

# integrity: a wrong digest is exit 4 and no profile is reported
wrong="$(printf '%064d' 0)"
expect 4 "SHA-256 mismatch: expected $wrong, got $sha" -- "$omn" profile "$mini" --sha256 "$wrong" --json "$tmp/never.json"
check "no output written after a mismatch" -- test ! -e "$tmp/never.json"
out="$("$omn" profile "$mini" --sha256 "$wrong" 2>/dev/null)"
check "nothing on stdout after a mismatch" -- test -z "$out"

# outputs: JSON and CSV written, never overwritten without --force, never over the checkpoint
expect 0 "" -- "$omn" profile "$mini" --json "$tmp/p.json" --csv "$tmp/p.csv" --no-tables
check "profile JSON has its schema" -- grep -q '"schema": "omn-audit/profile@1"' "$tmp/p.json"
check "CSV has 56 rows + header" -- test "$(wc -l <"$tmp/p.csv")" -eq 57
check "profile JSON valid against docs/schema/profile.schema.json" -- \
  /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" profile.schema.json "$tmp/p.json"
"$omn" profile "$mini" --json "$tmp/p2.json" --no-tables >/dev/null
strip_times() { grep -vE '"(started|finished)_utc"' "$1"; }
check "same input, same JSON except timestamps" -- diff <(strip_times "$tmp/p.json") <(strip_times "$tmp/p2.json")
expect 2 "exists: refusing to overwrite" -- "$omn" profile "$mini" --json "$tmp/p.json"
expect 0 "" -- "$omn" profile "$mini" --json "$tmp/p.json" --force --no-tables
cp "$mini" "$tmp/ck.pt"
before="$(sha256sum "$tmp/ck.pt")"
expect 2 "is the input" -- "$omn" profile "$tmp/ck.pt" --json "$tmp/ck.pt" --force
check "checkpoint untouched" -- test "$(sha256sum "$tmp/ck.pt")" = "$before"

# a previous profile as the baseline; compare
expect 0 "within tolerance" -- "$omn" profile "$mini" --baseline "$tmp/p.json" --no-tables
"$omn" profile "$fx/omn1-mini-perturbed.pt" --json "$tmp/q.json" --no-tables >/dev/null
expect 0 "statistics differ" -- "$omn" compare "$tmp/p.json" "$tmp/q.json"
expect 0 "/layers/5/q/mean" -- "$omn" compare "$tmp/p.json" "$tmp/q.json"
# statistics made with different options are shown, with a note naming the option and the rows it changes
"$omn" profile "$mini" --threshold 2 --hist-edges 0,1,5 --json "$tmp/t2.json" --no-tables >/dev/null
expect 0 "note: A and B were computed with different /options/threshold \(1.43 and 2(\.0)?\): /statistics/\*_above_threshold" -- \
  "$omn" compare "$tmp/p.json" "$tmp/t2.json"
expect 0 "note: A and B were computed with different /options/hist_edges .*: /histogram/\*/count measure different things" -- \
  "$omn" compare "$tmp/p.json" "$tmp/t2.json"
check "compare of profiles with the same options has no note" -- \
  bash -c '"$1" compare "$2" "$3" >"$4"; [ $? = 0 ] && grep -q "statistics differ" "$4" && ! grep -q "^note:" "$4"' _ "$omn" "$tmp/p.json" "$tmp/q.json" "$tmp/cmp.txt"
echo '{"schema":"omn-audit/tolerance@1","default":{"rel":0.2}}' >"$tmp/tol.json"
expect 0 "within tolerance" -- "$omn" profile "$fx/omn1-mini-perturbed.pt" --baseline "$tmp/p.json" --tolerance "$tmp/tol.json" --no-tables

# count ranges: options, recorded in the document; a baseline's range must be counted (checked before
# the checkpoint is hashed: a wrong --sha256 is not reached)
expect 0 "in \[1\.43,inf\) +6426" -- "$omn" profile --count-range '[1,2]' --count-range '>=1.43' "$mini"
expect 0 "in \(32,inf\) +59" -- "$omn" profile "$mini"
expect 2 "$tmp/p.json: /statistics/counts/\(32,inf\)/count: .* add --count-range '\(32,inf\)'" -- \
  "$omn" profile "$mini" --count-range '[1,2]' --baseline "$tmp/p.json" --sha256 "$(printf '0%.0s' {1..64})" --no-tables
expect 2 "omn-1-reference: /options/threshold: .* pass --threshold 1.43" -- "$omn" profile "$mini" --threshold 2 --baseline omn-1-reference
expect 2 "--count-range '\[2,1\]': the range holds no value" -- "$omn" profile "$mini" --count-range '[2,1]'
expect 2 "1e-400 is too close to zero for a double" -- "$omn" profile "$mini" --count-range '>=1e-400'
expect 2 "1e400 is beyond the range of a double" -- "$omn" profile "$mini" --count-range '<1e400'
expect 2 "--hist-pivot: expected a finite number" -- "$omn" profile "$mini" --hist-pivot nan
expect 2 "--count-range '\[-inf,0\)': an infinite end is open" -- "$omn" profile "$mini" --count-range '[-inf,0)'
expect 2 "--count-range: \[1,2\] is given twice" -- "$omn" profile "$mini" --count-range '[1,2]' --count-range '[1, 2]'
# compare lists what only B has (a range counted in B alone), both ways round
"$omn" profile "$mini" --count-range '[1,2]' --count-range '(32,inf)' --count-range '<0' --json "$tmp/e.json" --no-tables 2>/dev/null
expect 0 "1 of 306 statistics differ" -- "$omn" compare "$tmp/p.json" "$tmp/e.json"
expect 0 "counts/\(-inf,0\)/count +missing +5" -- "$omn" compare "$tmp/p.json" "$tmp/e.json"
expect 0 "1 of 306 statistics differ" -- "$omn" compare "$tmp/e.json" "$tmp/p.json"
# track takes --count-range too, and checks a baseline's ranges before reading a checkpoint
expect 2 "e.json: /statistics/counts/\(-inf,0\)/count: .*add --count-range" -- "$omn" track "$mini" --order given --baseline "$tmp/e.json"
expect 0 "" -- "$omn" track "$mini" --order given --baseline "$tmp/e.json" --count-range '[1,2]' --count-range '(32,inf)' --count-range '<0'
# fuzz finding (documents, 2026-12-01): non-finite gains counted but not listed made the text view read past the list
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['statistics']['count_non_finite']=5; d['non_finite']=[]; json.dump(d,open(sys.argv[2],'w'))" "$tmp/p.json" "$tmp/nf-unlisted.json"
expect 2 "nf-unlisted.json: /non_finite: expected the first 5" -- "$omn" compare "$tmp/nf-unlisted.json" "$tmp/p.json"
# a tolerance rule that matches nothing is named before the hash
echo '{"schema":"omn-audit/tolerance@1","rules":[{"pointer":"/statistics/cout_*","abs":0}]}' >"$tmp/typo-tol.json"
expect 0 "warning: .*typo-tol.json: tolerance rule /rules/0 \"/statistics/cout_\*\" matches no statistic" -- \
  "$omn" profile "$mini" --baseline "$tmp/p.json" --tolerance "$tmp/typo-tol.json" --no-tables

# invalid usage and input: exit 2 with a message naming the place
expect 2 "cannot open" -- "$omn" profile "$tmp/missing.pt"
expect 2 "expected a SHA-256 of 64 hex digits" -- "$omn" profile "$mini" --sha256 abc
expect 2 "--sha256: expected a SHA-256 of 64 hex digits, got an empty value" -- "$omn" profile "$mini" --sha256 ""
expect 2 "edges must increase" -- "$omn" profile "$mini" --hist-edges 4,2
expect 2 "neither a built-in preset" -- "$omn" profile "$mini" --preset nope
expect 2 "baseline .*not valid JSON" -- "$omn" profile "$mini" --baseline "$tmp/p.csv"
expect 2 "" -- "$omn" profile
expect 2 "unknown command 'frobnicate'; omn-audit --help" -- "$omn" frobnicate
expect 2 "unknown command 'prof' \(did you mean profile\?\)" -- "$omn" prof "$mini"
expect 2 "unknown command 'plto' \(did you mean plot\?\)" -- "$omn" plto x.json
expect 2 "^omn-audit: error: unknown option --bogus for profile; omn-audit profile --help lists its options" -- \
  "$omn" profile "$mini" --bogus
expect 2 "unknown option --jsn for profile \(did you mean --json\?\)" -- "$omn" profile "$mini" --jsn "$tmp/x.json"
check "a mistyped option writes nothing" -- test ! -e "$tmp/x.json"
# an unknown option is named even where a required positional is still missing (it was "checkpoint is required")
expect 2 "unknown option --no-such for profile" -- "$omn" profile --no-such
expect 2 "unknown option --tokns for eval \(did you mean --tokens\?\)" -- "$omn" eval "$mini" --tokns t.bin
# one grammar: -o/--output names a command's document output everywhere (profile, track, eval: --json too)
expect 0 "" -- "$omn" profile "$mini" --no-tables -o "$tmp/o.json"
expect 0 "" -- "$omn" profile "$mini" --no-tables --json "$tmp/j.json"
check "profile -o writes what --json writes" -- /usr/bin/python3 -c "import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); a.pop('provenance'); b.pop('provenance'); sys.exit(a != b)" "$tmp/o.json" "$tmp/j.json"
expect 0 "" -- "$omn" track "$mini" --order given --output "$tmp/t.json"
check "track --output writes the track document" -- test -s "$tmp/t.json"
expect 0 "Usage: .*profile \[OPTIONS\] checkpoint" -- "$omn" help profile
expect 0 "Usage: .*profile \[OPTIONS\] checkpoint" -- "$omn" -v help profile
expect 2 "did you mean --help\?\)" -- "$omn" profile "$mini" --hel
# after a switch the next word is an option, not its value (issue 50: every flag was taken to take one)
expect 2 "unknown option --treshold for profile \(did you mean --threshold\?\)" -- "$omn" profile "$mini" --no-tables --treshold 2
expect 2 "unknown option --tokns for eval \(did you mean --tokens\?\)" -- "$omn" eval "$mini" --up-to --tokns t.bin
# a value that starts with -- is the value of the option before it, as CLI11 reads it
check "profile --state-key --x: the value --x is not taken for an unknown option" -- \
  bash -c '! "$1" profile "$2" --state-key --x 2>&1 | grep -q "unknown option"' _ "$omn" "$mini"
expect 0 "Usage: .*eval \[OPTIONS\] checkpoint" -- "$omn" help eval
expect 2 "unknown command 'nope'" -- "$omn" help nope
expect 0 "SUBCOMMAND" -- "$omn" help
check "-q works after the command" -- bash -c '[ -z "$("$1" profile "$2" --no-tables -q 2>&1)" ]' _ "$omn" "$mini"
expect 2 "--tolerance needs --baseline" -- "$omn" profile "$mini" --tolerance "$tmp/tol.json"
expect 2 "--all needs --baseline" -- "$omn" profile "$mini" --all
OMN_AUDIT_TORCH_PLUGIN="$tmp/none.so" expect 2 "needs the plugin omn-audit-torch.so, which could not be loaded from $tmp/none.so \(from OMN_AUDIT_TORCH_PLUGIN\)" -- \
  "$omn" eval --checkpoint "$mini"
# cmake --install: the binary finds its plugins in ../lib/omn-audit; without them the error names
# every path searched and the variable that points elsewhere
build_dir="$(dirname "$omn")"
if [ -f "$build_dir/cmake_install.cmake" ]; then
  cmake --install "$build_dir" --prefix "$tmp/inst" >/dev/null
  expect 0 "--tokenizer-revision" -- "$tmp/inst/bin/omn-audit" eval --help
  expect 0 "^$sha  $mini\$" -- "$tmp/inst/bin/omn-audit" hash "$mini"
  # the generated man page and completions are installed where man, bash-completion and zsh look
  check "the man page is installed and renders" -- bash -c 'MANWIDTH=100 man -l "$1/share/man/man1/omn-audit.1" | grep -q "EXIT STATUS"' _ "$tmp/inst"
  check "the bash completion is installed" -- test -s "$tmp/inst/share/bash-completion/completions/omn-audit"
  check "the zsh completion is installed" -- test -s "$tmp/inst/share/zsh/site-functions/_omn-audit"
  rm -f "$tmp/inst/lib/omn-audit/omn-audit-text.so"
  expect 2 "needs the plugin omn-audit-text.so, which could not be loaded from $tmp/inst/bin/omn-audit-text.so and $tmp/inst/bin/../lib/omn-audit/omn-audit-text.so .*OMN_AUDIT_TEXT_PLUGIN" -- \
    "$tmp/inst/bin/omn-audit" corpus --help
fi

# standard output and special targets; outputs checked before any work
check "--json - writes the document alone to stdout" -- bash -c '"$1" profile "$2" --json - 2>/dev/null | /usr/bin/python3 -m json.tool >/dev/null' _ "$omn" "$mini"
check "--json - sends the tables to stderr" -- bash -c '"$1" profile "$2" --json - 2>&1 >/dev/null | grep -q "top 10 coordinates"' _ "$omn" "$mini"
check "--json /dev/stdout is written in place" -- bash -c '"$1" profile "$2" --json /dev/stdout --no-tables | /usr/bin/python3 -m json.tool >/dev/null && test -c /dev/stdout -o -L /dev/stdout' _ "$omn" "$mini"
expect 2 "are the same file" -- "$omn" profile "$mini" --json - --csv -
# standard output redirected to the file another output names: one would replace the other
check "--json - --csv F with stdout redirected to F is refused" -- \
  bash -c 'echo keep >"$3"; "$1" profile "$2" --json - --csv "$3" --force >>"$3" 2>"$4"; [ $? = 2 ] && grep -q "are the same file" "$4"' \
  _ "$omn" "$mini" "$tmp/same.csv" "$tmp/same-err.txt"
# "-", /dev/stdout, /dev/fd/1 and /proc/self/fd/1 are one stream also when it is a pipe
for pair in "- /dev/stdout" "/proc/self/fd/1 /dev/stdout" "- /dev/fd/1"; do
  read -r out1 out2 <<<"$pair"
  check "--json $out1 --csv $out2 into a pipe is refused" -- \
    bash -c '"$1" profile "$2" --json "$3" --csv "$4" 2>"$5" | cat >/dev/null; [ "${PIPESTATUS[0]}" = 2 ] && grep -q "are the same file" "$5"' \
    _ "$omn" "$mini" "$out1" "$out2" "$tmp/pipe-err.txt"
done
check "--json /dev/stdout into a file: written, not refused or renamed over" -- \
  bash -c '"$1" profile "$2" --json /dev/stdout --no-tables >"$3" && /usr/bin/python3 -m json.tool "$3" >/dev/null' _ "$omn" "$mini" "$tmp/redirected.json"
ln -s /proc/self/fd/1 "$tmp/mystdout"
check "a symbolic link to standard output stays a link (--force)" -- \
  bash -c '"$1" profile "$2" --json "$3" --force --no-tables >"$4" && test -L "$3" && /usr/bin/python3 -m json.tool "$4" >/dev/null' \
  _ "$omn" "$mini" "$tmp/mystdout" "$tmp/via-link.json"
expect 0 "" -- "$omn" profile "$mini" --json /dev/null --csv /dev/null --no-tables
expect 5 "cannot write /dev/full: No space left on device" -- "$omn" profile "$mini" --json /dev/full --no-tables
mkfifo "$tmp/outfifo"
expect 2 "outfifo: a FIFO with no reader" -- timeout 20 "$omn" profile "$mini" --json "$tmp/outfifo" --no-tables
expect 2 "output $tmp/missing/p.json: directory $tmp/missing does not exist" -- "$omn" profile "$mini" --json "$tmp/missing/p.json"
for f in evil_os_system evil_eval evil_popen evil_nested evil_stack_global evil_inst; do
  expect 2 "evil.*pickle byte [0-9]+: .*(GLOBAL|STACK_GLOBAL|INST).*refused" -- "$omn" profile "$fx/interop/$f.pt"
done
check "no hostile pickle ran" -- test ! -e "$fx/interop/MARKER_PWNED"
expect 2 "truncated.pt: no zip end" -- "$omn" profile "$fx/interop/truncated.pt"
expect 4 "truncated.pt: SHA-256 mismatch" -- "$omn" profile "$fx/interop/truncated.pt" --sha256 "$wrong"
expect 2 "flipped.pt: .*CRC-32" -- "$omn" profile "$fx/interop/flipped.pt"
expect 2 "past the end" -- "$omn" profile "$fx/interop/past_end.pt"
expect 2 "header length 9223372036854775808 exceeds" -- "$omn" profile "$fx/interop/huge_header.safetensors"
expect 2 "overlaps" -- "$omn" profile "$fx/interop/overlap.safetensors"
expect 2 "legacy" -- "$omn" profile "$fx/interop/legacy.pt"
expect 2 "no built-in preset matches" -- "$omn" profile "$fx/interop/tied.pt"
expect 2 "interop/tied.pt: no built-in preset matches" -- "$omn" track "$fx/interop/tied.pt"

# HF-style checkpoints through their presets
expect 0 "preset +qwen3 \(detected\)" -- "$omn" profile "$fx/interop/qwen3.safetensors"
expect 0 "effective gain = 1 \+ stored weight" -- "$omn" profile "$fx/interop/gemma3.safetensors"
expect 0 "projection layout" -- "$omn" profile "$fx/interop/olmo2.safetensors" --preset olmo2
for m in qwen3 olmo2 gemma3; do "$omn" profile "$fx/interop/$m.safetensors" --json "$tmp/$m.json" --no-tables >/dev/null; done
expect 0 "3 passed, 0 failed" -- /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" \
  profile.schema.json "$tmp/qwen3.json" "$tmp/olmo2.json" "$tmp/gemma3.json"
cat >"$tmp/custom.json" <<'JSON'
{"schema": "omn-audit/preset@1", "name": "my-model",
 "tensors": {"q_norm": "model.layers.{i}.self_attn.q_norm.weight", "k_norm": "model.layers.{i}.self_attn.k_norm.weight"},
 "gain": {"parametrisation": "direct", "layout": "head"}, "architecture": {"rope_style": "interleaved"}}
JSON
expect 0 "preset +my-model: 2 layers" -- "$omn" profile "$fx/interop/qwen3.safetensors" --preset "$tmp/custom.json"
sed -i 's/"layout": "head"/"layout": "diagonal"/' "$tmp/custom.json"
expect 2 "custom.json: /gain/layout" -- "$omn" profile "$fx/interop/qwen3.safetensors" --preset "$tmp/custom.json"

expect 2 "is the input .*p.json" -- "$omn" profile "$mini" --baseline "$tmp/p.json" --json "$tmp/p.json" --force --no-tables
expect 2 "same file" -- "$omn" profile "$mini" --json "$tmp/same.out" --csv "$tmp/./same.out" --no-tables

# special files: a FIFO is refused at once (opened without blocking), never waited on
mkfifo "$tmp/fifo"
expect 2 "fifo: not a regular file" -- timeout 20 "$omn" profile "$tmp/fifo"
expect 2 "fifo: not a regular file" -- timeout 20 "$omn" hash "$tmp/fifo"
expect 2 "fifo: not a regular file" -- timeout 20 "$omn" track "$tmp/fifo"
expect 2 "--digests .*fifo: not a regular file" -- timeout 20 "$omn" track "$mini" --order given --digests "$tmp/fifo"
expect 2 "preset .*fifo: not a regular file" -- timeout 20 "$omn" profile "$mini" --preset "$tmp/fifo"

# terminal injection: metadata from the file cannot forge a verdict line or drive the terminal
/usr/bin/python3 - "$mini" "$tmp/forged.pt" <<'PY'
import sys, torch
ck = torch.load(sys.argv[1])  # our own fixture
ck["note\nOK: every statistic within tolerance\n"] = "\x1b[2J\x1b[31mred" + "x" * 45000
torch.save(ck, sys.argv[2])
PY
"$omn" profile "$tmp/forged.pt" >"$tmp/forged.out" 2>&1
check "forged metadata: no line of output starts with a forged verdict" -- bash -c '! grep -q "^OK: every statistic" "$1"' _ "$tmp/forged.out"
check "forged metadata: no escape byte reaches the terminal" -- bash -c '! grep -qP "\x1b" "$1"' _ "$tmp/forged.out"
check "forged metadata: shown escaped" -- grep -qF 'note\nOK: every statistic within tolerance\n' "$tmp/forged.out"
check "forged metadata: a 45,000-character value is cut" -- grep -q "more bytes)" "$tmp/forged.out"


# size bombs: memory and work bounded by the input, exit 2 naming the file and the byte
limited() { (ulimit -v 3000000; exec /usr/bin/time -f "maxrss_kb=%M" "$@"); }  # 3 GB: a bomb fails fast
/usr/bin/python3 - "$mini" "$tmp/shared.pt" <<'PY'
import sys, torch
ck = torch.load(sys.argv[1])  # our own fixture
x = [1]
for _ in range(40):  # pickled once through the memo: 2^40 leaves when expanded
    x = [x, x]
ck["bomb"] = x
torch.save(ck, sys.argv[2])
PY
expect 0 "bomb: \[\[\[" -- limited "$omn" profile "$tmp/shared.pt" --json "$tmp/shared.json"
check "shared references rendered once, then by reference" -- grep -q '"\$ref": "/bomb/0"' "$tmp/shared.json"
check "the rendered metadata stays small" -- test "$(stat -c %s "$tmp/shared.json")" -lt 200000
/usr/bin/python3 - "$tmp/nones.pt" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", b"\x80\x02" + b"N" * 20_000_000 + b".")  # used 5.6 GB
    z.writestr("archive/byteorder", "little")
PY
expect 2 "nones.pt:archive/data.pkl: pickle byte 1000002: more than 1000000 values .*size bomb" -- limited "$omn" profile "$tmp/nones.pt"
rss="$(limited "$omn" profile "$tmp/nones.pt" 2>&1 | sed -n 's/^maxrss_kb=//p')"
check "a 20 MB NONE flood stays under 400 MB resident (was 5.6 GB): ${rss} kB" -- test "${rss:-999999999}" -lt 400000

# non-finite gains: counted apart and reported loudly, never binned; drift from any baseline
/usr/bin/python3 - "$mini" "$tmp/nan.pt" <<'PY'
import sys, torch
ck = torch.load(sys.argv[1])
q = next(k for k in ck["model"] if k.endswith("q_norm.weight") and ".3." in k)
ck["model"][q][5] = float("nan")  # a NaN gain used to be counted in the ">32" bin
torch.save(ck, sys.argv[2])
PY
expect 0 "WARNING: 1 of [0-9]+ gains are not finite \(NaN or inf\), first at layer 3 q\[5\] = nan" -- "$omn" profile "$tmp/nan.pt" --json "$tmp/nan.json"
check "the NaN is in no histogram bin" -- /usr/bin/python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert b["statistics"]["count_non_finite"] == 1 and b["statistics"]["count"] == a["statistics"]["count"]
assert sum(x["count"] for x in b["histogram"]) == a["statistics"]["count"] - 1
assert b["histogram"][-1]["count"] == a["histogram"][-1]["count"]
assert b["non_finite"] == [{"layer": 3, "role": "q", "index": 5, "value": "nan"}]' "$tmp/p.json" "$tmp/nan.json"
check "the NaN profile is valid against the schema" -- \
  /usr/bin/python3 -W ignore "$src/tests/interop/check_schema.py" "$src/docs/schema" profile.schema.json "$tmp/nan.json"
expect 3 "non-finite gains .*DRIFT" -- "$omn" profile "$tmp/nan.pt" --baseline omn-1-reference --no-tables
expect 3 "count_non_finite .*DRIFT" -- "$omn" profile "$tmp/nan.pt" --baseline "$tmp/p.json" --no-tables

# sharded safetensors: --sha256 verifies the index only, and says so; --digests pins every shard
cp -r "$fx/interop/qwen3-sharded" "$tmp/sh"
idx="$tmp/sh/model.safetensors.index.json"
isha="$(sha256sum "$idx" | cut -d' ' -f1)"
expect 0 "verified: the index file only; its 2 shards are NOT verified" -- "$omn" profile "$idx" --sha256 "$isha" --json "$tmp/sh.json"
check "JSON: index verified, shards not, verified=partial" -- /usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["checkpoint"]
assert c["sha256_verified"] and c["verified"] == "partial" and [s["sha256_verified"] for s in c["shards"]] == [False, False]' "$tmp/sh.json"
(cd "$tmp" && sha256sum sh/model.safetensors.index.json sh/model-0000*.safetensors >"$tmp/digests.txt")
expect 0 "verified: the index and its 2 shards" -- bash -c 'cd "$1" && "$2" profile sh/model.safetensors.index.json --digests digests.txt --json sh-all.json' _ "$tmp" "$omn"
check "JSON: verified=all" -- grep -q '"verified": "all"' "$tmp/sh-all.json"
shard2="$tmp/sh/model-00002-of-00002.safetensors"
printf '\x01' | dd of="$shard2" bs=1 seek=$(($(stat -c %s "$shard2") - 3)) conv=notrunc status=none  # a tensor's bytes
expect 0 "verified: the index file only" -- "$omn" profile "$idx" --sha256 "$isha"  # a changed shard, never called verified
expect 4 "sh/model-00002-of-00002.safetensors: SHA-256 mismatch" -- bash -c 'cd "$1" && "$2" profile sh/model.safetensors.index.json --digests digests.txt' _ "$tmp" "$omn"
echo "$isha  $tmp/elsewhere.safetensors" >"$tmp/stray.txt"
expect 2 "--digests .*stray.txt: .*elsewhere.safetensors is not .*index.json or a shard beside it" -- "$omn" profile "$idx" --digests "$tmp/stray.txt"
expect 2 "--sha256 .* and --digests .* disagree" -- bash -c 'cd "$1" && "$2" profile sh/model.safetensors.index.json --digests digests.txt --sha256 "$3"' _ "$tmp" "$omn" "$wrong"
/usr/bin/python3 -c "print('0' * 64 + '  ' + 'a' * 300000)" >"$tmp/longline.txt"  # std::regex recursed per character: SIGSEGV
expect 2 "--digests .*longline.txt: line 1: expected" -- "$omn" profile "$idx" --digests "$tmp/longline.txt"
expect 2 "--digests .*longline.txt: line 1: expected" -- "$omn" track "$mini" --order given --digests "$tmp/longline.txt"
# two lines pinning different digests for one file never verify (sha256sum -c fails one of them)
{ echo "$wrong  $mini"; sha256sum "$mini"; } >"$tmp/conflict.txt"
expect 2 "--digests .*conflict.txt: lines 1 and 2 pin different digests for" -- "$omn" profile "$mini" --digests "$tmp/conflict.txt"
expect 2 "--digests .*conflict.txt: lines 1 and 2 pin different digests for" -- "$omn" track "$mini" --order given --digests "$tmp/conflict.txt"
ln -sf "$mini" "$tmp/link.pt"
{ sha256sum "$mini"; echo "$wrong  $tmp/link.pt"; } >"$tmp/conflict2.txt"
expect 2 "--digests .*conflict2.txt \(.*\) and --digests .*conflict2.txt \(.*\) disagree about" -- "$omn" profile "$tmp/link.pt" --digests "$tmp/conflict2.txt"
expect 2 "pins, with a different digest" -- "$omn" track "$mini" --order given --digests "$tmp/conflict2.txt"


# issue 50: one output rule for folders, shards and runs: every file read through a model folder, a
# sharded index or a run directory is an input, never written over, even with --force
cp -r "$fx/interop/qwen3-sharded" "$tmp/shd"
echo '{"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}' >"$tmp/shd/config.json"
mkdir -p "$tmp/one" "$tmp/run/checkpoints"
cp "$fx/interop/qwen3.safetensors" "$tmp/one/model.safetensors" && cp "$tmp/shd/config.json" "$tmp/one/"
cp "$mini" "$tmp/run/checkpoints/step-000001.pt" && echo '{}' >"$tmp/run/train.json"
cp -r "$tmp/shd" "$tmp/shd.orig" && cp -r "$tmp/one" "$tmp/one.orig" && cp -r "$tmp/run" "$tmp/run.orig"
expect 2 "output .*one/model.safetensors is the input .*one/model.safetensors \(read through .*one\)" -- "$omn" profile "$tmp/one" --json "$tmp/one/model.safetensors" --force
expect 2 "is the input .*shd/model-00001-of-00002.safetensors \(read through .*shd\)" -- "$omn" profile "$tmp/shd" --json "$tmp/shd/model-00001-of-00002.safetensors" --force
expect 2 "is the input .*model-00002-of-00002.safetensors \(read through .*index.json\)" -- "$omn" profile "$tmp/shd/model.safetensors.index.json" --json "$tmp/shd/model-00002-of-00002.safetensors" --force
expect 2 "is the input .*shd/config.json" -- "$omn" track "$tmp/shd" --order given --json "$tmp/shd/config.json" --force
expect 2 "is the input .*run/train.json" -- "$omn" track "$tmp/run" --json "$tmp/run/train.json" --force
ln -s "$tmp/one/config.json" "$tmp/cfg-link.json"  # links resolved: device and inode
expect 2 "is the input .*one/config.json" -- "$omn" profile "$tmp/one" --json "$tmp/cfg-link.json" --force
check "nothing read through a folder, an index or a run directory was written over" -- \
  diff -r "$tmp/shd" "$tmp/shd.orig" && diff -r "$tmp/one" "$tmp/one.orig" && diff -r "$tmp/run" "$tmp/run.orig"
# a run's train.json that is not a regular file is exit 2 naming it, never skipped (it was "0 verified", exit 0)
rm "$tmp/run/train.json" && mkfifo "$tmp/run/train.json"
expect 2 "run record .*run/train.json: not a regular file" -- timeout 20 "$omn" track "$tmp/run"
rm "$tmp/run/train.json" && ln -s /dev/null "$tmp/run/train.json"
expect 2 "run record .*run/train.json: not a regular file" -- "$omn" track "$tmp/run"
rm "$tmp/run/train.json" && mkdir "$tmp/run/train.json"
expect 2 "run record .*run/train.json: not a regular file" -- "$omn" track "$tmp/run"
rmdir "$tmp/run/train.json" && ln -s "$tmp/nowhere.json" "$tmp/run/train.json"
expect 2 "run record .*run/train.json: a link to nothing" -- "$omn" track "$tmp/run"
# an index nesting /metadata 10^6 levels (2 MB) is refused at the one reader's 64 levels (it was SIGSEGV)
/usr/bin/python3 - "$tmp/shd/model.safetensors.index.json" "$tmp/deep/model.safetensors.index.json" <<'PY'
import json, os, shutil, sys
w = json.load(open(sys.argv[1]))["weight_map"]
os.makedirs(os.path.dirname(sys.argv[2]))
for f in set(w.values()):
    shutil.copy(os.path.join(os.path.dirname(sys.argv[1]), f), os.path.dirname(sys.argv[2]))
open(sys.argv[2], "w").write('{"metadata": ' + "[" * 10**6 + "]" * 10**6 + ', "weight_map": ' + json.dumps(w) + "}")
PY
expect 2 "deep/model.safetensors.index.json: nested deeper than 64 levels" -- "$omn" profile "$tmp/deep/model.safetensors.index.json"
expect 2 "is the input" -- "$omn" profile "$mini" --json "$mini" --force  # the output rule reads the deep index safely too
cp "$tmp/deep/model-00001-of-00002.safetensors" "$tmp/deep-shard.orig"
expect 2 "nested deeper than 64 levels" -- "$omn" profile "$tmp/deep/model.safetensors.index.json" --json "$tmp/deep/model-00001-of-00002.safetensors" --force
check "a shard beside an index that does not parse is not written over" -- cmp -s "$tmp/deep/model-00001-of-00002.safetensors" "$tmp/deep-shard.orig"
# error lines are capped (a 1 MB value printed a 1 MB line) and escaped
/usr/bin/python3 -c 'import json, sys; json.dump({"schema": "\x1b[2J\x07" + "x" * 1000000}, open(sys.argv[1], "w"))' "$tmp/big.json"
"$omn" profile "$mini" --baseline "$tmp/big.json" --no-tables 2>"$tmp/big.err" && rc=0 || rc=$?
check "a 1 MB value in an error: exit 2, one line under 1,200 bytes, no raw ESC or BEL (exit $rc, $(wc -c <"$tmp/big.err") bytes)" -- \
  bash -c '[ "$1" = 2 ] && [ "$(wc -l <"$2")" = 1 ] && [ "$(wc -c <"$2")" -lt 1200 ] && grep -q "more bytes)" "$2" && ! grep -q $'"'"'[\x1b\x07]'"'"' "$2"' _ "$rc" "$tmp/big.err"

finish
