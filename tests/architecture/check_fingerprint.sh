#!/usr/bin/env bash
# The model-code fingerprint covers every source that can change a number: the binary's equals the
# one tools/cmake/Fingerprint.cmake computes from this tree; editing a scorer, an op, the bootstrap
# or a preset changes it; editing a figure's code does not.
#   check_fingerprint.sh OMN_AUDIT SOURCE_DIR
set -euo pipefail
omn="$1" src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fp() { cmake -DROOT="$1" -P "$src/tools/cmake/Fingerprint.cmake" 2>&1; }
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1 ($2 vs $3)"; fail=1; fi; }
differs() { if [ "$2" != "$3" ]; then echo "ok: $1"; else echo "FAIL: $1 (unchanged $2)"; fail=1; fi; }

built="$("$omn" --version | sed -n 's/^model code fingerprint //p')"
check "the binary's fingerprint is this tree's" "$built" "$(fp "$src")"
mkdir -p "$tmp/t/configs"
mkdir -p "$tmp/t/tools"
cp -r "$src/src" "$src/include" "$tmp/t/"
cp -r "$src/tools/omn-audit" "$tmp/t/tools/"
cp -r "$src/configs/presets" "$tmp/t/configs/"
base="$(fp "$tmp/t")"
check "a copy of the tree has the same fingerprint" "$base" "$(fp "$src")"
for f in src/eval/scorer.cpp src/intervene/ops.cpp src/eval/bootstrap.cpp src/eval/token_set.cpp configs/presets/omn-1.json \
         tools/omn-audit/torch/session_options.h tools/omn-audit/plugin_loader.cpp; do
  cp "$tmp/t/$f" "$tmp/keep"
  printf '\n' >>"$tmp/t/$f"
  differs "a change to $f changes the fingerprint" "$base" "$(fp "$tmp/t")"
  cp "$tmp/keep" "$tmp/t/$f"
done
printf '\n' >>"$tmp/t/src/report/html.cpp"
check "a change to a figure's code (src/report) does not" "$base" "$(fp "$tmp/t")"
exit $fail
