#!/usr/bin/env bash
# The README's test command: install dependencies, build (Release, incremental, warnings are errors),
# run ctest; then the torch-free build, the sanitized unit tests and the fuzz targets.
#   tools/test.sh                 every tier (CI runs this)
#   tools/test.sh --quick         the edit-test loop: the build, then the tests labelled quick (unit
#                                 tests, the code's shape, the fastest command checks), nothing else
#   tools/test.sh [ctest args]    the build, then ctest with these arguments (-R cli.eval, ...)
# Each tier's wall time is measured in docs/PERFORMANCE.md ("The test tiers").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
omn_install_deps
[ $quick = 1 ] || omn_install_optional
build="${OMN_BUILD_DIR:-$root/build}"
# warnings are errors here (a developer's own configure may leave them warnings)
if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^OMN_WERROR:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -DOMN_WERROR=ON "$build" >/dev/null
fi
omn_build -DOMN_WERROR=ON
cd "$build"
start=$SECONDS
if [ $quick = 1 ]; then
  ctest --output-on-failure -j "$(nproc)" -L quick "$@"
  echo "omn-audit: the quick tier passed in $((SECONDS - start)) s (tools/test.sh runs every tier)"
  exit 0
fi
ctest --output-on-failure -j "$(nproc)" "$@"
[ $# -eq 0 ] || exit 0
echo "omn-audit: ctest passed in $((SECONDS - start)) s"
# clang with ASan/UBSan, configured without libtorch (docs/RELIABILITY.md, docs/ARCHITECTURE.md):
# the core's unit tests, the torch-free CLI (--version, a profile), then each fuzz target for a few
# seconds (the long runs are tools/fuzz.sh SECONDS). Without clang, the torch-free build alone.
if command -v clang++ >/dev/null; then
  "$root/tools/fuzz.sh" --unit-tests "${OMN_FUZZ_SECONDS:-5}"
else
  echo "omn-audit: clang++ not installed: the sanitized unit tests and the fuzz targets were not run" >&2
  notorch="${OMN_NOTORCH_BUILD_DIR:-$root/build-notorch}"
  [ -f "$notorch/build.ninja" ] || cmake -S "$root" -B "$notorch" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMN_WITH_TORCH=OFF \
    -DOMN_BUILD_TESTS=OFF -DOMN_WERROR=ON >/dev/null
  cmake --build "$notorch" -j "$(nproc)"  # whole: the CLI and its text plugin
  "$notorch/omn-audit" --version
fi
echo "omn-audit: every tier passed in $((SECONDS - start)) s after the build"
