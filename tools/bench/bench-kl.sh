#!/usr/bin/env bash
# Benchmark: what --kl costs. The same sweep with and without --kl, interleaved twice, on two
# models: the OMN-shaped mini model (bf16, 16 packed rows of 512 tokens, 8 conditions, vocab 512)
# and the demo model (fp32, 256 rows of 128 tokens, 4 conditions, vocab 4,096); prints the conditions'
# time per run and the ratio, the peak RSS of each, and checks the NLL is bitwise the same both ways.
#   tools/bench/bench-kl.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
dir="$build/bench/kl"
omn_bench_mini "$dir"
cat >"$dir/manifest.json" <<JSON
{"schema": "omn-audit/manifest@1",
 "checkpoint": {"path": "omn1-mini.pt", "sha256": "$ck", "preset": "omn-1"},
 "tokens": {"path": "mini-tokens.bin", "sha256": "$tk", "format": "u16", "eos": 0, "tokenizer_revision": "synthetic-zipf-512@1"},
 "rows": {"seq_len": 512, "num_seqs": 16, "form": "packed"},
 "groups": 4, "bootstrap": {"resamples": 1000, "seed": 0},
 "model": {"dtype": "bf16", "batch": 4},
 "conditions": [{"op": "constant", "values": [2, 1.5, 1, 0.5], "targets": ["q", "qk"], "layers": "all"}]}
JSON
run() {  # run NAME [flags]: prints "conditions_seconds peak_rss_kib"
  /usr/bin/time -f "%M" -o "$dir/$1.rss" "$build/omn-audit" -q intervene --manifest "$dir/manifest.json" -o "$dir/$1.json" --force "${@:2}" >/dev/null
  /usr/bin/python3 -c "import json; d=json.load(open('$dir/$1.json')); print(sum(c['seconds'] for c in d['conditions']), open('$dir/$1.rss').read().strip())"
}
# compare LABEL PREFIX: the manifest in $dir with and without --kl, interleaved twice
compare() {
  local p1 r1 k1 q1 p2 r2 k2 q2 same
  read -r p1 r1 < <(run "$2plain1")
  read -r k1 q1 < <(run "$2kl1" --kl)
  read -r p2 r2 < <(run "$2plain2")
  read -r k2 q2 < <(run "$2kl2" --kl)
  same=$(/usr/bin/python3 -c "
import json; a=json.load(open('$dir/$2plain1.json')); b=json.load(open('$dir/$2kl1.json'))
print(all(x['result']['sequences'] == y['result']['sequences'] for x, y in zip(a['conditions'], b['conditions'])))")
  echo "$1"
  awk -v p1="$p1" -v p2="$p2" -v k1="$k1" -v k2="$k2" -v r1="$r1" -v r2="$r2" -v q1="$q1" -v q2="$q2" 'BEGIN {
    printf "conditions without --kl: %.2f s, %.2f s (peak RSS %d, %d MiB)\n", p1, p2, r1 / 1024, r2 / 1024
    printf "conditions with --kl:    %.2f s, %.2f s (peak RSS %d, %d MiB)\n", k1, k2, q1 / 1024, q2 / 1024
    printf "ratio with/without: %.3f\n", (k1 + k2) / (p1 + p2) }'
  echo "NLL bitwise the same with --kl: $same"
}
compare "8 conditions, 16 x 512 tokens, bf16, the mini model (28 layers, d 256, vocab 512)" ""

# A real vocabulary: the demo model (4 layers, d 128, vocab 4,096, fp32), 256 packed rows of 128
# held-out tokens, 4 conditions. Here the [chunk, vocabulary] buffers of the comparison dominate
# (a fresh allocation per chunk made --kl 6x a plain pass before they were allocated once).
demo="$root/demo/tiny-sotu"
dck=$(sha256sum "$demo/final.pt" | cut -d' ' -f1)
dtk=$(sha256sum "$demo/heldout.bin" | cut -d' ' -f1)
cat >"$dir/manifest.json" <<JSON
{"schema": "omn-audit/manifest@1",
 "checkpoint": {"path": "$demo/final.pt", "sha256": "$dck", "preset": "omn"},
 "tokens": {"path": "$demo/heldout.bin", "sha256": "$dtk", "format": "u16", "eos": 1, "tokenizer_revision": "sotu-bpe-4096"},
 "rows": {"seq_len": 128, "num_seqs": 256, "form": "packed"},
 "groups": 4, "bootstrap": {"resamples": 1000, "seed": 0},
 "model": {"dtype": "fp32", "batch": 16},
 "conditions": [{"op": "constant", "values": [2, 1], "targets": ["q", "qk"], "layers": "all"}]}
JSON
compare "4 conditions, 256 x 128 tokens, fp32, the demo model (4 layers, d 128, vocab 4,096)" d
