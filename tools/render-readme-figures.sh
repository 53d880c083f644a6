#!/usr/bin/env bash
# Regenerates the README's figures (docs/figures/*.png, rendered at 2x) from JSON made by the
# committed code — run from a clean tree so the figures' footers carry no "-dirty":
#   tools/demo.sh                                              (the demo sweep and profile)
#   omn-audit study --manifest configs/studies/qk-lr-tiny.json (runs/qk-lr-tiny/study.json, ~25 min)
#   tools/make-demo-model.sh --check                           (build/demo-model/run: the demo model's checkpoints)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OMN_BUILD_DIR:-$root/build}"
omn="$build/omn-audit"
fig="$build/demo/figures"
mkdir -p "$root/docs/figures" "$build/readme"
# the trajectories of the runs that tell the story: the best learning rate, and 0.035 where the
# logits of the QK-off run have grown ~300-fold
"$omn" plot "$root/runs/qk-lr-tiny/study.json" -o "$build/readme" --force \
  --runs qk-on_lr-2.848e-03_seed-0,qk-off_lr-2.848e-03_seed-0,qk-on_lr-3.511e-02_seed-0,qk-off_lr-3.511e-02_seed-0 >/dev/null
"$omn" track "$build/demo-model/run" --json "$build/readme/track.json" --force >/dev/null
"$omn" plot "$build/readme/track.json" -o "$build/readme" --force >/dev/null
render() { rsvg-convert --zoom=2 --background-color=white -o "$root/docs/figures/$2.png" "$1/$2.svg"; echo "docs/figures/$2.png"; }
render "$fig" sweep-ppl-vs-constant
render "$fig" profile-layer-means
render "$build/readme" study-loss-vs-lr
render "$build/readme" study-max-logit
render "$build/readme" track-layer-means
