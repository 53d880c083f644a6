#!/usr/bin/env bash
# Installs the Debian packages omn-audit needs, skipping what is present (idempotent).
# Sourced by tools/test.sh, tools/demo.sh and the benchmarks; run as root (or with sudo available).
set -euo pipefail

OMN_PACKAGES=(
  cmake ninja-build g++ git pkg-config
  libtorch-dev nlohmann-json3-dev libcli11-dev libssl-dev libspdlog-dev libgtest-dev
  # JSON Schema validation of the documents omn-audit reads back (header-only)
  libvalijson-dev
  # the corpus command's tokenizer (SentencePiece BPE)
  libsentencepiece-dev
  # the tokenize command: Hugging Face split regexes (PCRE2, \p{L} and lookahead), NFC/NFKC (utf8proc)
  libpcre2-dev libutf8proc-dev
  # Debian's libtorch takes fp32 matrix products from the system libblas.so.3: the reference BLAS
  # runs them at ~8 GFLOP/s here, OpenBLAS at ~200+ (docs/PERFORMANCE.md).
  libopenblas0-openmp
  # the real producer of torch.save files for tests and fixtures, and the independent reference
  python3-torch python3-numpy python3-jsonschema
  # issue 29's experiment analysis draws its figures (tools/experiments/analyse.py)
  python3-matplotlib
  # the full test tier: the ASan/UBSan build (core unit tests, the torch-free CLI, the fuzz targets)
  clang libclang-rt-14-dev
  # tests and benchmarks: XML well-formedness, peak RSS, SVG -> PNG for the README figures
  libxml2-utils time librsvg2-bin fonts-dejavu-core
)
# The report test looks at the HTML in a real browser; where Chromium cannot be installed that
# one test is skipped with a message (it is installed apart so its failure stops nothing else).
OMN_OPTIONAL_PACKAGES=(chromium)

omn_install_deps() {
  local missing=()
  for p in "${OMN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "omn-audit: installing Debian packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

omn_install_optional() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  for p in "${OMN_OPTIONAL_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
    echo "omn-audit: installing optional Debian package: $p" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
      { $sudo apt-get update -qq >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1; } ||
      echo "omn-audit: warning: $p could not be installed; the browser check of the report will be skipped" >&2
  done
}

# Configures (once) and builds the Release tree incrementally on every core.
omn_build() {
  local root build
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  build="${OMN_BUILD_DIR:-$root/build}"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  fi
  cmake --build "$build" -j "$(nproc)"
}

# For the benchmarks: dependencies in place, the build up to date; sets $root and $build.
omn_bench_setup() {
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  omn_install_deps
  omn_build >/dev/null
  build="${OMN_BUILD_DIR:-$root/build}"
}

# The mini OMN-shaped model and the synthetic token set a sweep benchmark runs on, in DIR (made
# once): sets $ck and $tk to their SHA-256.
omn_bench_mini() {
  local dir="$1"
  mkdir -p "$dir"
  [ -f "$dir/omn1-mini.pt" ] || /usr/bin/python3 "$root/tools/fixtures/make_omn_fixture.py" --size mini -o "$dir/omn1-mini.pt" >/dev/null
  [ -f "$dir/mini-tokens.bin" ] || /usr/bin/python3 "$root/tools/fixtures/make_tokens.py" -o "$dir/mini-tokens.bin" >/dev/null
  ck=$(sha256sum "$dir/omn1-mini.pt" | cut -c1-64)
  tk=$(sha256sum "$dir/mini-tokens.bin" | cut -c1-64)
}

# The full-size OMN-1-layout checkpoint the benchmarks share (3.5 GB, generated once): sets $ckpt.
omn_bench_fixture() {
  ckpt="$build/bench/omn1-full.pt"
  mkdir -p "$build/bench"
  if [ ! -f "$ckpt" ]; then
    echo "generating the full fixture (once): $ckpt" >&2
    /usr/bin/python3 "$root/tools/fixtures/make_omn_fixture.py" --size full -o "$ckpt" >&2
  fi
}
