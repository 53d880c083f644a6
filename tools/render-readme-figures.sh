#!/usr/bin/env bash
# Regenerates the README's figures (docs/figures/*.png, rendered at 2x) and the browser screenshots of
# the report and of every demo figure (docs/screenshots/*.png, headless Chromium at 2x) from JSON made by the
# committed code — run from a clean tree so the figures' footers carry no "-dirty":
#   demo/tiny-sotu/results/{sweep,profile}.json               (the demo's record, which the README's numbers are:
#                                                               tools/docs_numbers.py --record build/demo)
#   results/qk-lr-tiny/study.json                              (tools/run-experiments.sh qk-lr-tiny, ~40 min)
#   tools/make-demo-model.sh --check                           (build/demo-model/run: the demo model's checkpoints)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OMN_BUILD_DIR:-$root/build}"
omn="$build/omn-audit"
fig="$build/readme/demo"
mkdir -p "$root/docs/figures" "$build/readme"
"$omn" plot "$root/demo/tiny-sotu/results/profile.json" -o "$fig" --force >/dev/null
"$omn" plot "$root/demo/tiny-sotu/results/sweep.json" -o "$fig" --force >/dev/null
"$omn" report "$root/demo/tiny-sotu/results/sweep.json" "$root/demo/tiny-sotu/results/profile.json" \
  -o "$build/readme/report.html" --force >/dev/null
# the trajectories of the runs that tell the story: the best learning rate, and 0.035 where the
# logits of the QK-off run run away. Without the experiment in the store the study PNGs are kept as
# committed (their footers say which commit ran them).
study="$root/results/qk-lr-tiny/study.json"
if [ -f "$study" ]; then
  "$omn" plot "$study" -o "$build/readme" --force \
    --runs qk-on_lr-2.848e-03_seed-0,qk-off_lr-2.848e-03_seed-0,qk-on_lr-3.511e-02_seed-0,qk-off_lr-3.511e-02_seed-0 >/dev/null
else
  echo "render-readme-figures: no $study: docs/figures/study-*.png kept as committed" >&2
fi
"$omn" track "$build/demo-model/run" --json "$build/readme/track.json" --force >/dev/null
"$omn" plot "$build/readme/track.json" -o "$build/readme" --force >/dev/null
render() { rsvg-convert --zoom=2 --background-color=white -o "$root/docs/figures/$2.png" "$1/$2.svg"; echo "docs/figures/$2.png"; }
render "$fig" sweep-ppl-vs-constant
render "$fig" sweep-ratio
render "$fig" profile-layer-means-log
if [ -f "$study" ]; then
  render "$build/readme" study-loss-vs-lr
  render "$build/readme" study-max-logit
fi
render "$build/readme" track-layer-means

# what a reader sees in a browser: the report's first screen and every demo figure, at 2x
chrome=$(command -v chromium || command -v chromium-browser)
mkdir -p "$root/docs/screenshots"
shot() {  # shot URL OUT WIDTH HEIGHT
  "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --force-device-scale-factor=2 \
    --user-data-dir="$build/readme/chrome" --window-size="$3,$4" --screenshot="$2" "$1" >/dev/null 2>&1
  echo "${2#$root/}"
}
shot "file://$build/readme/report.html" "$root/docs/screenshots/report.png" 1140 1500
# the tables: the same report with its figures hidden (a headless screenshot does not scroll)
sed 's|</style>|#figures,figure{display:none}</style>|' "$build/readme/report.html" >"$build/readme/report-tables.html"
shot "file://$build/readme/report-tables.html" "$root/docs/screenshots/report-tables.png" 1140 2200
for f in "$fig"/*.svg; do
  h=$(grep -o 'height="[0-9.]*"' "$f" | head -n 1 | grep -o '[0-9]*' | head -n 1)
  shot "file://$f" "$root/docs/screenshots/$(basename "${f%.svg}").png" 760 "$((h + 2))"
done
