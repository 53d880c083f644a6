#!/usr/bin/env bash
# The README's first command: builds omn-audit and runs its main job on the embedded default, a
# calibrated OMN-1-shaped checkpoint (the real one is not public): verify, profile every Q/K gain,
# and check the profile against OMN-1's published figures.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
omn_build
build="${OMN_BUILD_DIR:-$root/build}"
out="$build/demo"
mkdir -p "$out"
ckpt="$out/omn1-mini.pt"
if [ ! -f "$ckpt" ]; then
  /usr/bin/python3 "$root/tools/fixtures/make_omn_fixture.py" --size mini -o "$ckpt"
fi
omn="$build/omn-audit"
echo "== omn-audit profile (against the published OMN-1 figures) =="
"$omn" profile "$ckpt" --baseline "$root/configs/omn-1-reference-profile.json" \
  --json "$out/profile.json" --csv "$out/profile.csv" --force
echo
echo "profile JSON: $out/profile.json"
echo "per-layer CSV: $out/profile.csv"
