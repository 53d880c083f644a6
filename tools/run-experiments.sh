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
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
omn="${OMN_AUDIT:-$root/build/omn-audit}"
[ -x "$omn" ] || { echo "run-experiments: $omn not built (source tools/deps.sh && omn_build)" >&2; exit 2; }
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
  echo "$(date -u +%FT%TZ) $name: start ${args[*]}" >> "$log"
  start=$(date +%s)
  if nice -n 19 "$omn" "${args[@]}" >> "$log" 2>&1; then
    echo "$(date -u +%FT%TZ) $name: finished in $(( $(date +%s) - start )) s of this invocation" >> "$log"
  else
    rc=$?
    echo "$(date -u +%FT%TZ) $name: stopped with exit $rc after $(( $(date +%s) - start )) s; rerun tools/run-experiments.sh to continue" >> "$log"
    exit "$rc"
  fi
done
