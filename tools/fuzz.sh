#!/usr/bin/env bash
# Builds the parsers' libFuzzer targets with clang + ASan/UBSan (no libtorch) and runs each for
# SECONDS (default 60), seeded with the interop fixtures. Prints executions and findings.
#   tools/fuzz.sh [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
secs="${1:-60}"
build="$root/build-fuzz"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOMN_WITH_TORCH=OFF -DOMN_BUILD_TESTS=OFF -DOMN_FUZZ=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target fuzz_pickle fuzz_checkpoint
fx="$root/build/fixtures/interop"
if [ ! -d "$fx" ]; then /usr/bin/python3 "$root/tests/interop/make_fixtures.py" "$fx" >/dev/null; fi
mkdir -p "$build/corpus/pickle" "$build/corpus/checkpoint" "$build/findings"
cp "$fx"/*.pt "$fx"/*.safetensors "$build/corpus/checkpoint/" 2>/dev/null || true
for f in "$fx"/*.pt; do unzip -p "$f" '*/data.pkl' >"$build/corpus/pickle/$(basename "$f").pkl" 2>/dev/null || true; done
status=0
for t in pickle checkpoint; do
  echo "== fuzz_$t for ${secs}s"
  if ! "$build/tests/fuzz/fuzz_$t" "$build/corpus/$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
       -artifact_prefix="$build/findings/$t-" -print_final_stats=1 2>"$build/fuzz_$t.log"; then
    status=1
    echo "FINDING: see $build/fuzz_$t.log and $build/findings/"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|SUMMARY" "$build/fuzz_$t.log" || true
done
exit $status
