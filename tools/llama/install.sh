#!/usr/bin/env bash
# llama.cpp for tools/bench/bench-eval.sh, from the npm registry and nothing else: node-llama-cpp ships
# llama.cpp's source (llama/gitRelease.bundle, a git bundle) and @node-llama-cpp/linux-x64 its prebuilt
# CPU libraries (libllama, libggml, one libggml-cpu-<variant>.so per x86 ISA level, picked at run time).
# Installed with --ignore-scripts: nothing is downloaded or built at install time (node-llama-cpp's
# postinstall would otherwise fetch or compile a binary). Then llama_nll.c (beside this file) is
# compiled with gcc against the headers of that same source and linked to that libllama.
#
#   tools/llama/install.sh DIR     e.g. build/bench/llama
#
# Leaves DIR/node_modules, DIR/include (llama.h, ggml*.h, gguf.h), DIR/lib (link to the prebuilt
# libraries' folder) and DIR/llama_nll. Idempotent: does nothing when all is there (llama_nll is
# rebuilt when llama_nll.c is newer). Needs npm, git and gcc. Exit 1 with a message when any step fails.
set -euo pipefail
VERSION=3.22.1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
dir="$(cd "$1" && pwd)"
stamp="$dir/.installed-node-llama-cpp-$VERSION"
fail() { echo "tools/llama/install.sh: $*" >&2; exit 1; }

if [ ! -f "$stamp" ]; then
  command -v npm >/dev/null || fail "npm not found (Debian: apt-get install npm)"
  command -v git >/dev/null || fail "git not found"
  rm -rf "$dir/node_modules" "$dir/include" "$dir/lib" "$dir/llama_nll"
  # --omit=optional: node-llama-cpp lists every platform's binary package (CUDA ones are hundreds of
  # MB) as optional; the one named here is installed all the same
  nice npm install --prefix "$dir" --no-save --no-package-lock --ignore-scripts --omit=optional \
    --no-audit --no-fund --loglevel=error \
    "node-llama-cpp@$VERSION" "@node-llama-cpp/linux-x64@$VERSION" >&2 || fail "npm install failed"
  nlc="$dir/node_modules/node-llama-cpp"
  bins="$dir/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
  [ -f "$nlc/llama/gitRelease.bundle" ] || fail "no llama/gitRelease.bundle in node-llama-cpp@$VERSION"
  lib=$(cd "$bins" 2>/dev/null && ls libllama.*so 2>/dev/null | grep -v common | head -1) || true
  [ -n "$lib" ] || fail "no prebuilt libllama in @node-llama-cpp/linux-x64@$VERSION ($bins)"
  ls "$bins"/libggml-cpu-*.so >/dev/null 2>&1 || fail "no libggml-cpu-*.so in $bins"
  # the headers of the very release the libraries were built from
  want=$(sed -n 's/.*"release":"\([^"]*\)".*/\1/p' "$bins/_nlcBuildMetadata.json")
  have=$(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' "$nlc/llama/llama.cpp.info.json")
  [ -n "$want" ] && [ "$want" = "$have" ] || fail "the binaries are of llama.cpp '$want', the source bundle of '$have'"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git init -q "$tmp/src"
  git -C "$tmp/src" fetch -q "$nlc/llama/gitRelease.bundle" HEAD || fail "cannot read $nlc/llama/gitRelease.bundle"
  mkdir -p "$tmp/out"
  git -C "$tmp/src" archive FETCH_HEAD include ggml/include | tar -x -C "$tmp/out" || fail "no headers in the bundle"
  mkdir -p "$dir/include"
  cp "$tmp/out/include/llama.h" "$tmp/out/ggml/include/"ggml*.h "$tmp/out/ggml/include/gguf.h" "$dir/include/"
  ln -sfn node_modules/@node-llama-cpp/linux-x64/bins/linux-x64 "$dir/lib"
  printf 'node-llama-cpp %s, llama.cpp %s, %s\n' "$VERSION" "$have" "$lib" >"$stamp"
fi

lib=$(cd "$dir/lib" && ls libllama.*so | grep -v common | head -1)
if [ ! -x "$dir/llama_nll" ] || [ "$here/llama_nll.c" -nt "$dir/llama_nll" ]; then
  command -v gcc >/dev/null || fail "gcc not found"
  libdir="$(readlink -f "$dir/lib")"
  # linked by file name (the package holds no libllama.so link); rpath to the prebuilt folder, where
  # llama_nll also loads the CPU backend variants from
  nice gcc -O2 -std=gnu11 -Wall -Wextra -fopenmp -I "$dir/include" -DLLAMA_NLL_LIBDIR="\"$libdir\"" \
    "$here/llama_nll.c" -o "$dir/llama_nll.part" "$libdir/$lib" "$libdir/libggml.v"*.so "$libdir/libggml-base.so" \
    -Wl,-rpath,"$libdir" -lm || fail "compiling llama_nll.c failed"
  mv "$dir/llama_nll.part" "$dir/llama_nll"
fi
