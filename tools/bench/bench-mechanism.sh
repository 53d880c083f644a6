#!/usr/bin/env bash
# --mechanism at training length: attention entropy and max logit over 32,768 tokens (4 heads of
# 32), computed a block of query rows at a time. Prints the time and the peak RSS; the whole
# [1, 4, 32768, 32768] float32 score matrix would be 16 GiB. Recorded in docs/PERFORMANCE.md.
#   tools/bench/bench-mechanism.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OMN_BUILD_DIR:-$root/build}"
cmake --build "$build" --target test_model >/dev/null
/usr/bin/time -f "peak RSS %M KiB, wall %e s" "$build/tests/test_model" --gtest_also_run_disabled_tests \
  --gtest_filter='Mechanism.DISABLED_AtTrainingLength' 2>&1 | grep -E "mechanism at|peak RSS|OK|FAILED"
