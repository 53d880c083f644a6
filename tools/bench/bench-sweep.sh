#!/usr/bin/env bash
# Benchmark: a sweep whose conditions touch only the last layer, with and without
# --cache-activations, on the OMN-shaped mini model (28 layers, d 256, head 128), bf16,
# 16 packed rows of 512 tokens, 24 conditions. Goal: >= 5x faster with the cache. Prints the
# ratio of the conditions' time and of the whole sweep (which includes two full control passes),
# and checks that both runs produced the same numbers bitwise.
#   tools/bench/bench-sweep.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
dir="$build/bench/sweep"
omn_bench_mini "$dir"
cat >"$dir/manifest.json" <<JSON
{"schema": "omn-audit/manifest@1",
 "checkpoint": {"path": "omn1-mini.pt", "sha256": "$ck", "preset": "omn-1"},
 "tokens": {"path": "mini-tokens.bin", "sha256": "$tk", "format": "u16", "eos": 0, "tokenizer_revision": "synthetic-zipf-512@1"},
 "rows": {"seq_len": 512, "num_seqs": 16, "form": "packed"},
 "groups": 4, "bootstrap": {"resamples": 1000, "seed": 0},
 "model": {"dtype": "bf16", "batch": 4},
 "conditions": [{"op": "constant", "values": [8, 4, 2, 1.5, 1, 0.5, 0.25, 0.1], "targets": ["q", "k", "qk"], "layers": [27]}]}
JSON
run() {  # run NAME [flags]: prints "sweep_seconds conditions_seconds"
  local start end
  start=$(date +%s.%N)
  "$build/omn-audit" -q intervene --manifest "$dir/manifest.json" -o "$dir/$1.json" --force "${@:2}" >/dev/null
  end=$(date +%s.%N)
  /usr/bin/python3 -c "import json; d=json.load(open('$dir/$1.json')); print($end - $start, sum(c['seconds'] for c in d['conditions']))"
}
read -r full_s full_c < <(run full)
read -r cached_s cached_c < <(run cached --cache-activations)
same=$(/usr/bin/python3 -c "
import json; a=json.load(open('$dir/full.json')); b=json.load(open('$dir/cached.json'))
print(all(x['result']['sequences'] == y['result']['sequences'] for x, y in zip(a['conditions'], b['conditions'])))")
echo "24 conditions on layer 27 of 28, 16 x 512 tokens, bf16"
awk -v fs="$full_s" -v fc="$full_c" -v cs="$cached_s" -v cc="$cached_c" 'BEGIN {
  printf "without cache: sweep %.2f s, conditions %.2f s\n", fs, fc
  printf "with cache:    sweep %.2f s, conditions %.2f s\n", cs, cc
  printf "speed-up: conditions %.1fx, whole sweep %.1fx (goal >= 5x)\n", fc / cc, fs / cs }'
echo "results bitwise equal: $same"
