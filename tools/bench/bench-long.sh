#!/usr/bin/env bash
# Benchmark: evaluation at a training length on the CPU in bounded memory. One document of SEQ tokens
# (default 32,768, OMN-1's training length; no EOS) on tools/bench/bench-eval.sh's Qwen3-shaped model (4
# layers, d 512, 8:2 heads, head 64, vocab 32,768), scored by `omn-audit eval` (auto picks the
# blockwise attention path there: the masked path's scores would be 8 x 32,768^2 x 4 bytes = 32 GiB a
# layer) and by llama.cpp (node-llama-cpp's prebuilt CPU libllama, flash attention, one decode of the
# whole row: tools/llama/). Prints each side's tokens/s, peak RSS and summed NLL, and their agreement.
# OMN1=1 adds one SEQ-token document at OMN-1's full shape (28 layers, d 2048, 16:4 x 128, SwiGLU
# 5461, vocab 131,840, BF16; the fixture tools/fixtures/make_omn_fixture.py writes, 3.35 GB): its time
# and peak RSS (no llama.cpp side: no GGUF of it is written).
#   tools/bench/bench-long.sh [SEQ] [THREADS] [DTYPE]      DTYPE fp32 (default) or bf16
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
seq="${1:-32768}"
threads="${2:-$(nproc)}"
dt="${3:-fp32}"
dir="$build/bench/eval"
[ -f "$dir/model.pt" ] || /usr/bin/python3 "$root/tools/bench/bench_eval.py" setup "$dir"
[ -n "${OMN_AUDIT_KEEP_BLAS+set}" ] || unset OPENBLAS_CORETYPE
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores;$(for f in avx2 avx512f avx512_bf16; do
  grep -qw "$f" /proc/cpuinfo && echo -n " $f" || echo -n " no-$f"; done); $threads threads, $dt"
# one document of SEQ tokens, ids 1..V-1 (0 is the bench model's EOS)
/usr/bin/python3 -c "
import numpy as np, sys
np.random.default_rng(1).integers(1, 32768, size=int(sys.argv[1])).astype(np.uint16).tofile(sys.argv[2])" "$seq" "$dir/long.bin"
g=$([ "$dt" = fp32 ] && echo f32 || echo bf16)
/usr/bin/time -f "%M %e" -o "$dir/omn-long.time" "$build/omn-audit" eval --checkpoint "$dir/model.pt" --preset "$dir/preset.json" \
  --tokens "$dir/long.bin" --eos 0 --tokenizer-revision bench --seq-len "$seq" --num-seqs 1 --groups 1 --bootstrap-resamples 100 \
  --dtype "$dt" --threads "$threads" --json "$dir/omn-long.json" --force >/dev/null
read -r rss wall <"$dir/omn-long.time"
/usr/bin/python3 - "$dir/omn-long.json" "$rss" "$wall" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("omn-audit: %s attention, %.1f tokens/s, wall %.1f s, peak RSS %.2f GiB, NLL sum %.6f over %d tokens"
      % (j["model"]["attention"], j["timing"]["tokens_per_second"], float(sys.argv[3]), int(sys.argv[2]) / 2**20,
         j["result"]["nll_sum"], j["result"]["tokens"]))
PY
llama="$build/bench/llama"
if bash "$root/tools/llama/install.sh" "$llama" >"$build/bench/llama-install.log" 2>&1; then
  [ "$llama/bench-$g.gguf" -nt "$dir/model.pt" ] || /usr/bin/python3 "$root/tools/bench/bench_eval_gguf.py" "$dir" "$llama/bench-$g.gguf" "$g"
  /usr/bin/time -f "%M %e" -o "$dir/llama-long.time" "$llama/llama_nll" "$llama/bench-$g.gguf" "$dir/long.bin" "$seq" 1 "$threads" \
    "$dir/llama-long.json" --fa on >/dev/null 2>"$dir/llama-long.log"
  read -r lrss lwall <"$dir/llama-long.time"
  /usr/bin/python3 - "$dir/llama-long.json" "$lrss" "$lwall" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("llama.cpp: flash attention, F16 K/V, %.1f tokens/s (decode; %.1f with its NLL), wall %.1f s, peak RSS %.2f GiB, NLL sum %.6f"
      % (j["tokens_per_second"], j["tokens_per_second_with_nll"], float(sys.argv[3]), int(sys.argv[2]) / 2**20, j["nll_sum"]))
PY
  echo "NLL agreement: $(/usr/bin/python3 "$root/tools/bench/bench_eval_gguf.py" compare "$dir/llama-long.json" "$dir/omn-long.json" || true)"
else
  echo "llama.cpp: not available ($(tail -1 "$build/bench/llama-install.log")), its line is skipped"
fi
[ "${OMN1:-0}" = 1 ] || exit 0
omn1="$build/bench/omn1/omn1.pt"
mkdir -p "$(dirname "$omn1")"
[ -f "$omn1" ] || /usr/bin/python3 "$root/tools/fixtures/make_omn_fixture.py" --size full -o "$omn1" >/dev/null
/usr/bin/python3 -c "
import numpy as np, sys
np.random.default_rng(2).integers(3, 131840, size=int(sys.argv[1])).astype(np.uint32).tofile(sys.argv[2])" "$seq" "$dir/long-omn1.bin"
/usr/bin/time -f "%M %e" -o "$dir/omn1-long.time" "$build/omn-audit" eval --checkpoint "$omn1" --preset omn-1 \
  --tokens "$dir/long-omn1.bin" --token-format u32 --eos 0 --tokenizer-revision bench --seq-len "$seq" --num-seqs 1 --groups 1 \
  --bootstrap-resamples 100 --threads "$threads" --json "$dir/omn1-long.json" --force >/dev/null
read -r rss wall <"$dir/omn1-long.time"
/usr/bin/python3 - "$dir/omn1-long.json" "$rss" "$wall" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("omn-audit, OMN-1's shape: %s attention, %s, %.2f tokens/s, wall %.0f s, peak RSS %.2f GiB, perplexity %.4g over %d tokens"
      % (j["model"]["attention"], j["model"]["dtype"], j["timing"]["tokens_per_second"], float(sys.argv[3]),
         int(sys.argv[2]) / 2**20, j["result"]["perplexity"], j["result"]["tokens"]))
PY
