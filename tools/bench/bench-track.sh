#!/usr/bin/env bash
# Benchmark: `omn-audit track` over unverified checkpoints of the full OMN-1 layout (3.5 GB,
# 283 tensors) reads only the gain records, so its cost per checkpoint must not grow with the file.
# Goal: <= 50 ms per unverified checkpoint. Baseline in the same run: `profile` of the same file
# (which hashes all of it), and `track --digests` of one (hash + gains).
#   tools/bench/bench-track.sh [K]      (K copies of the checkpoint, as hard links: default 20)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
k="${1:-20}"
omn_bench_fixture
omn="$build/omn-audit"
dir="$build/bench/track"
rm -rf "$dir" && mkdir -p "$dir"
for i in $(seq -w 1 "$k"); do ln "$ckpt" "$dir/step-$i.pt"; done
cat "$ckpt" >/dev/null  # the page cache warm for every side alike

secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}'; }
declare -a per
for run in 1 2 3; do
  t=$(secs "$omn" track "$dir" --order given)
  per+=("$(awk -v t="$t" -v k="$k" 'BEGIN {printf "%.1f", 1000 * t / k}')")
  echo "run $run: track of $k unverified checkpoints: ${t}s = ${per[-1]} ms per checkpoint"
done
tp=$(secs "$omn" profile "$ckpt" --no-tables)
sha256sum "$dir/step-01.pt" > "$dir.sums"
tv=$(secs "$omn" track "$dir/step-01.pt" --digests "$dir.sums" --order given)
med=$(printf '%s\n' "${per[@]}" | sort -g | sed -n 2p)
echo
echo "file: $ckpt ($(stat -c %s "$ckpt") bytes)"
echo "median per unverified checkpoint: ${med} ms (goal <= 50 ms)"
echo "baseline, same run: profile (hashes the whole file) ${tp}s; track --digests of one checkpoint ${tv}s"
echo "ratio profile / unverified track checkpoint: $(awk -v a="$tp" -v b="$med" 'BEGIN {printf "%.0f", 1000 * a / b}')x"
rm -rf "$dir" "$dir.sums"
