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
