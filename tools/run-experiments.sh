#!/usr/bin/env bash
# Runs issue 29's experiments (configs/experiments.json; results in docs/results.md) in the
# background-friendly way a 2-core machine needs: niced, one thread per run (OMN_EXPERIMENT_THREADS).
# Each cell of a study (one training run) is trained, evaluated and swept in one go, then published
# into results/ (tracked: commit it), the only thing that outlives a session; rerun this after any
# interruption and it continues with the cells not yet published (within a session, a killed run
# continues from its last checkpoint). Two runs of this script on one experiment share its cells.
# Progress: runs/experiments.log; the compute each step took: results/compute.jsonl. The steps:
# tools/experiments/run.py.
#
#   tools/run-experiments.sh                      # every experiment, in order
#   tools/run-experiments.sh ablation-tiny ...    # the named experiments only
#   tools/run-experiments.sh --freeze [COMMIT]    # build the binary new studies start on (CURRENT)
#   tools/run-experiments.sh --plan [NAME ...]    # what it would run now (cells, builds, kernels); runs nothing
#
# The studies run on frozen builds (runs/builds/COMMIT/, made by --freeze; runs/builds/CURRENT is the
# one new studies take), not on build/: the cells of a study merge only when one build trained them
# all. Each study records its build in results/STUDY/BUILD; a new session rebuilds it from the commit
# (--freeze COMMIT --keep-current, which leaves CURRENT alone).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ "${1:-}" = "--freeze" ]; then
  commit=$(git rev-parse --short=7 "${2:-HEAD}")
  keep=0; [ "${3:-}" = "--keep-current" ] && keep=1
  dest="runs/builds/$commit"
  mkdir -p runs/builds
  if [ -f "$dest/COMMIT" ]; then  # never copied over: running studies map these files
    [ $keep = 1 ] || echo "$commit" > runs/builds/CURRENT
    echo "run-experiments: $dest already holds commit $commit; new studies start on it"
    exit 0
  fi
  source tools/deps.sh
  omn_install_deps
  # the commit checked out here, nothing changed and nothing new where the build reads: build/ builds
  # it (incrementally, recording the same revision a clean worktree would); else a worktree of it
  if [ "$(git rev-parse HEAD)" = "$(git rev-parse "$commit")" ] && [ -f build/build.ninja ] &&
     [ -z "$(git status --porcelain --untracked-files=no)" ] &&
     [ -z "$(git status --porcelain -- src include configs docs/schema tools/cmake CMakeLists.txt)" ]; then
    src="$root"
    nice cmake --build "$src/build" -j "$(nproc)" --target omn-audit omn-audit-torch omn-audit-text
  else
    src="$root/runs/src-$commit"
    git worktree prune
    [ -d "$src" ] || git worktree add -f "$src" "$commit" >/dev/null
    cmake -S "$src" -B "$src/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMN_BUILD_TESTS=OFF >/dev/null
    nice cmake --build "$src/build" -j "$(nproc)" --target omn-audit omn-audit-torch omn-audit-text
  fi
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  cp "$src/build/omn-audit" "$src"/build/omn-audit-*.so "$dest.tmp/"
  echo "$commit" > "$dest.tmp/COMMIT"
  mv "$dest.tmp" "$dest"
  [ $keep = 1 ] || echo "$commit" > runs/builds/CURRENT
  echo "run-experiments: runs/builds/$commit holds commit $commit; new studies start on it"
  exit 0
fi
# The cells train on the fp32 kernels omn-audit chooses for the CPU (recorded in each eval's
# model.blas), as the Intel Xeon's cells did: an OPENBLAS_CORETYPE the machine's environment sets
# (Haswell on this project's AMD EPYC, which runs SkylakeX's at ~2x: docs/PERFORMANCE.md) is dropped.
# OMN_AUDIT_KEEP_BLAS=1 keeps it. A study its experiment pins (configs/experiments.json
# /experiments/NAME/openblas_coretype) gets the pinned kernels from run.py instead.
[ -n "${OMN_AUDIT_KEEP_BLAS+set}" ] || unset OPENBLAS_CORETYPE
exec /usr/bin/python3 tools/experiments/run.py "$@"
