#!/usr/bin/env bash
# Runs issue 29's experiments (docs/results.md) one study after another, in the background-friendly
# way a 2-core machine needs: niced, one thread per run (OMN_EXPERIMENT_THREADS), journaled. Rerun it
# after any interruption (Ctrl-C, kill, a new session): a finished study is skipped, an interrupted
# one continues from its journal (`study --resume`: finished runs kept, the run in flight continues
# from its last checkpoint). Progress goes to runs/experiments.log.
#
#   tools/run-experiments.sh                      # every experiment, in order
#   tools/run-experiments.sh ablation-tiny ...    # the named manifests of configs/studies/ only
#   OMN_SHARD=0/2 tools/run-experiments.sh X      # one shard of a study (then omn-audit merge)
#   tools/run-experiments.sh --freeze [COMMIT]    # build the binary the experiments run on
#
# The experiments run on a frozen build (runs/bin/, made by --freeze from one commit, recorded in
# runs/bin/COMMIT), not on build/: a study's journal pins the model-code fingerprint, so a study
# started by one build can only be continued by a build of the same code. Freezing keeps the
# experiments resumable across sessions while the code moves on; docs/results.md names the commit.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "${1:-}" = "--freeze" ]; then
  commit=$(git rev-parse --short=7 "${2:-HEAD}")
  src="$root/runs/src-$commit"
  [ -d "$src" ] || git worktree add -f "$src" "$commit" >/dev/null
  source tools/deps.sh
  omn_install_deps
  cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMN_BUILD_TESTS=OFF >/dev/null
  nice cmake --build "$src/build" -j "$(nproc)" --target omn-audit omn-audit-torch omn-audit-text
  if [ -f runs/bin/COMMIT ] && [ "$(cat runs/bin/COMMIT)" != "$commit" ]; then
    echo "run-experiments: runs/bin holds commit $(cat runs/bin/COMMIT); move it aside first (its journals need it)" >&2
    exit 2
  fi
  mkdir -p runs/bin
  cp "$src/build/omn-audit" "$src"/build/omn-audit-*.so runs/bin/
  echo "$commit" > runs/bin/COMMIT
  echo "run-experiments: runs/bin/omn-audit is commit $commit"
  exit 0
fi
omn="${OMN_AUDIT:-$root/runs/bin/omn-audit}"
[ -x "$omn" ] || { echo "run-experiments: $omn not built: tools/run-experiments.sh --freeze" >&2; exit 2; }
# the corpus every training config names (../../data/sotu), built once as bench-train.sh builds it
[ -f data/sotu/corpus.json ] || { bash tools/fetch-corpus.sh; "$omn" corpus --config configs/corpus/sotu.json --out data/sotu >/dev/null; }
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(ablation-tiny)
threads="${OMN_EXPERIMENT_THREADS:-1}"
mkdir -p runs
log=runs/experiments.log
for name in "${names[@]}"; do
  manifest="configs/studies/$name.json"
  [ -f "$manifest" ] || { echo "run-experiments: $manifest: no such manifest" >&2; exit 2; }
  out=$(python3 -c 'import json,os,sys; m=sys.argv[1]; print(os.path.normpath(os.path.join(os.path.dirname(m), json.load(open(m))["output"]["json"])))' "$manifest")
  args=(study --manifest "$manifest" --threads "$threads")
  if [ -n "${OMN_SHARD:-}" ]; then
    args+=(--shard "$OMN_SHARD" -o "${out%.json}.shard-${OMN_SHARD%/*}.json")
    out="${out%.json}.shard-${OMN_SHARD%/*}.json"
  fi
  if [ -f "$out" ] && [ ! -f "$out.journal" ]; then
    echo "$(date -u +%FT%TZ) $name: done ($out)" >> "$log"
    continue
  fi
  [ -f "$out.journal" ] && args+=(--resume)
  echo "$(date -u +%FT%TZ) $name: start ${args[*]} (binary: commit $(cat "$(dirname "$omn")/COMMIT" 2>/dev/null || echo "?"))" >> "$log"
  start=$(date +%s)
  if nice -n 19 "$omn" "${args[@]}" >> "$log" 2>&1; then
    echo "$(date -u +%FT%TZ) $name: finished in $(( $(date +%s) - start )) s of this invocation" >> "$log"
  else
    rc=$?
    echo "$(date -u +%FT%TZ) $name: stopped with exit $rc after $(( $(date +%s) - start )) s; rerun tools/run-experiments.sh to continue" >> "$log"
    exit "$rc"
  fi
done
