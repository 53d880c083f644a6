#!/usr/bin/env bash
# The README's first command: builds omn-audit and runs its main job on the embedded default, a small
# OMN-style model that omn-audit trained on real text (demo/tiny-sotu: 4 layers, 1.84M parameters,
# QK-norm on, 500 steps on the State of the Union addresses; tools/make-demo-model.sh rebuilds it):
#   1. verify it and profile every learned Q/K gain;
#   2. the constant-replacement sweep (2.0 / 1.5 / 1.0 on Q, K and QK) and the disentangling controls,
#      on held-out addresses the model never saw, each paired against the unmodified model;
#   3. figures and the review report, from the JSON only.
# ~2 minutes on 2 cores after the build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
omn_build
build="${OMN_BUILD_DIR:-$root/build}"
out="$build/demo"
mkdir -p "$out"
omn="$build/omn-audit"
# inputs named relative to the repository, as the records store them (no machine's path in a record)
cd "$root"
model="demo/tiny-sotu"
manifest="configs/manifests/tiny-demo.json"

echo "== 1. omn-audit profile: the learned Q/K gains of the demo model (digest pinned in $manifest) =="
"$omn" profile "$model/final.pt" --sha256 "$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["checkpoint"]["sha256"])' "$manifest")" \
  --json "$out/profile.json" --csv "$out/profile.csv" --force

echo
echo "== 2. omn-audit intervene: $manifest, on held-out text =="
rm -f "$out/sweep.json.journal"
"$omn" -q intervene --manifest "$manifest" -o "$out/sweep.json" --csv "$out/sweep.csv" --force --mechanism

echo
echo "profile JSON:   $out/profile.json   (per-layer CSV: $out/profile.csv)"
echo "sweep JSON:     $out/sweep.json     (one row per condition: $out/sweep.csv)"

echo
echo "== 3. figures and the review report, from the JSON only =="
"$omn" plot "$out/profile.json" -o "$out/figures" --force >/dev/null
"$omn" plot "$out/sweep.json" -o "$out/figures" --force >/dev/null
"$omn" report "$out/sweep.json" "$out/profile.json" -o "$out/report.html" --force >/dev/null
ls "$out"/figures/*.svg
echo "report:         $out/report.html   (open it in any browser: one self-contained file)"
# the README's numbers are demo/tiny-sotu/results/sweep.json's (tools/docs_numbers.py): how far this run lies from them
/usr/bin/python3 "$root/tools/docs_numbers.py" --compare "$out/sweep.json"
