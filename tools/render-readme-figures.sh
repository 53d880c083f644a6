#!/usr/bin/env bash
# Regenerates the README's two figures (docs/figures/*.png) from the demo's JSON: run
# tools/demo.sh first. The PNGs are rendered from the committed code's SVGs with rsvg-convert.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fig="${OMN_BUILD_DIR:-$root/build}/demo/figures"
mkdir -p "$root/docs/figures"
for f in profile-layer-means sweep-ppl-vs-constant; do
  rsvg-convert --background-color=white -o "$root/docs/figures/$f.png" "$fig/$f.svg"
  echo "docs/figures/$f.png"
done
