#!/usr/bin/env bash
# Runs issue 29's experiments (configs/experiments.json; results in docs/results.md) in the
# background-friendly way a 2-core machine needs: niced, one thread per run (OMN_EXPERIMENT_THREADS),
# journaled. Rerun it after any interruption (Ctrl-C, kill, a new session): a finished step is
# skipped, an interrupted study continues from its journal (`study --resume`: finished runs kept, the
# run in flight continues from its last checkpoint). Progress: runs/experiments.log; the compute each
# step took: runs/experiments.jsonl. The steps: tools/experiments/run.py.
#
#   tools/run-experiments.sh                      # every experiment, in order
#   tools/run-experiments.sh ablation-tiny ...    # the named experiments only
#   OMN_SHARD=0/2 tools/run-experiments.sh X      # one shard of X's studies (then omn-audit merge)
#   tools/run-experiments.sh --freeze [COMMIT]    # build the binary new studies start on
#
# The studies run on frozen builds (runs/builds/COMMIT/, made by --freeze; runs/builds/CURRENT is the
# newest), not on build/: a study's journal pins the model-code fingerprint, so a study started by one
# build is continued only by a build of the same code. Each study records its build in STUDY_DIR/BUILD.
# Freezing keeps the experiments resumable across sessions while the code moves on.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "${1:-}" = "--freeze" ]; then
  commit=$(git rev-parse --short=7 "${2:-HEAD}")
  dest="runs/builds/$commit"
  if [ -f "$dest/COMMIT" ]; then  # never copied over: running studies map these files
    echo "$commit" > runs/builds/CURRENT
    echo "run-experiments: $dest already holds commit $commit; new studies start on it"
    exit 0
  fi
  src="$root/runs/src-$commit"
  [ -d "$src" ] || git worktree add -f "$src" "$commit" >/dev/null
  source tools/deps.sh
  omn_install_deps
  cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMN_BUILD_TESTS=OFF >/dev/null
  nice cmake --build "$src/build" -j "$(nproc)" --target omn-audit omn-audit-torch omn-audit-text
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  cp "$src/build/omn-audit" "$src"/build/omn-audit-*.so "$dest.tmp/"
  echo "$commit" > "$dest.tmp/COMMIT"
  mv "$dest.tmp" "$dest"
  echo "$commit" > runs/builds/CURRENT
  echo "run-experiments: runs/builds/$commit holds commit $commit; new studies start on it"
  exit 0
fi
exec /usr/bin/python3 tools/experiments/run.py "$@"
