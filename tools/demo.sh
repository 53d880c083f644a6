#!/usr/bin/env bash
# The README's first command: builds omn-audit and runs its main job on the embedded default, a
# calibrated OMN-1-shaped checkpoint (the real one is not public): verify, profile every Q/K gain
# against OMN-1's published figures, then a small intervention sweep with raw JSON results.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
omn_build
build="${OMN_BUILD_DIR:-$root/build}"
out="$build/demo"
mkdir -p "$out"
omn="$build/omn-audit"
ckpt="$out/omn1-mini.pt"
tokens="$out/mini-tokens.bin"
[ -f "$ckpt" ] || /usr/bin/python3 "$root/tools/fixtures/make_omn_fixture.py" --size mini -o "$ckpt"
[ -f "$tokens" ] || /usr/bin/python3 "$root/tools/fixtures/make_tokens.py" -o "$tokens"

echo "== 1. omn-audit profile: every Q/K gain, checked against the published OMN-1 figures =="
# a real run pins the digest it expects (OMN-1's is in configs/manifests/); the demo pins its own
"$omn" profile "$ckpt" --sha256 "$("$omn" hash "$ckpt" | cut -c1-64)" \
  --baseline "$root/configs/omn-1-reference-profile.json" --json "$out/profile.json" --csv "$out/profile.csv" --force

echo
echo "== 2. omn-audit intervene: configs/manifests/mini-demo.json on the same checkpoint =="
# the manifest names its inputs beside itself; the demo fills in the digests of the files it made
/usr/bin/python3 - "$root/configs/manifests/mini-demo.json" "$out/manifest.json" "$("$omn" hash "$ckpt" | cut -c1-64)" \
  "$("$omn" hash "$tokens" | cut -c1-64)" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["checkpoint"]["sha256"], m["tokens"]["sha256"] = sys.argv[3], sys.argv[4]
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
rm -f "$out/sweep.json.journal"
"$omn" -q intervene --manifest "$out/manifest.json" --force --mechanism

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
