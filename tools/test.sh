#!/usr/bin/env bash
# The README's test command: install dependencies, build (Release, incremental), run ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
omn_install_optional
omn_build
cd "${OMN_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
# the torch-free build (docs/ARCHITECTURE.md): the core, the CLI and the text plugin configure and
# compile with -DOMN_WITH_TORCH=OFF, so "torch-free" stays a fact and not a comment
if [ $# -eq 0 ]; then
  notorch="${OMN_NOTORCH_BUILD_DIR:-$root/build-notorch}"
  [ -f "$notorch/build.ninja" ] || cmake -S "$root" -B "$notorch" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOMN_WITH_TORCH=OFF \
    -DOMN_BUILD_TESTS=OFF >/dev/null
  cmake --build "$notorch" -j "$(nproc)" --target omn-audit
  "$notorch/omn-audit" --version
fi
# the fuzz targets, a few seconds each, where clang is installed (docs/RELIABILITY.md); the long
# runs are tools/fuzz.sh SECONDS
if [ $# -eq 0 ] && command -v clang++ >/dev/null; then
  "$root/tools/fuzz.sh" "${OMN_FUZZ_SECONDS:-5}"
else
  echo "omn-audit: clang++ not installed (or ctest arguments given): the fuzz targets were not run" >&2
fi
