#!/usr/bin/env bash
# Benchmark: `omn-audit eval` against the plain-PyTorch reference (tests/parity/reference_model.py)
# on the same small model (4 layers, d 512, 8:2 heads, head 64, vocab 32,768), the same tokens
# (packed rows of 512), the same threads, in fp32 and bf16. Prints tokens/s, the ratio, and the share
# of the machine's measured matrix-product peak. Goal: >= 2x in bf16, >= 1.2x in fp32.
# Each side runs REPS times, interleaved, and the median is reported (this VM's speed drifts).
#   tools/bench-eval.sh [NSEQ] [THREADS] [REPS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/deps.sh"
omn_bench_setup
nseq="${1:-16}"
threads="${2:-$(nproc)}"
reps="${3:-3}"
seq=512
dir="$build/bench/eval"
py=(/usr/bin/python3 "$root/tools/bench_eval.py")
[ -f "$dir/model.pt" ] || "${py[@]}" setup "$dir"
fpt=$("${py[@]}" flops "$dir" "$seq")
echo "model: 4 layers, d 512, 8:2 heads, vocab 32768; $nseq packed rows of $seq tokens; $threads threads"
echo "libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for dt in fp32 bf16; do
  o=(); r=(); s=(); p=()
  for _ in $(seq 1 "$reps"); do
    "$build/omn-audit" eval --checkpoint "$dir/model.pt" --preset "$dir/preset.json" --tokens "$dir/tokens.bin" --eos 0 \
      --tokenizer-revision bench --seq-len "$seq" --num-seqs "$nseq" --dtype "$dt" --threads "$threads" --batch 4 \
      --groups 1 --bootstrap-resamples 100 --json "$dir/omn-$dt.json" --force >/dev/null
    o+=("$(/usr/bin/python3 -c "import json; print('%.1f' % json.load(open('$dir/omn-$dt.json'))['timing']['tokens_per_second'])")")
    # the reference as a user runs it (OpenBLAS's own kernel choice), and on the kernels omn-audit
    # chose (like for like); the peak on omn-audit's kernels
    core=$(/usr/bin/python3 -c "import json; print(json.load(open('$dir/omn-$dt.json'))['model']['blas']['openblas_coretype'] or '')")
    r+=("$("${py[@]}" reference "$dir" "$dt" "$threads" "$nseq" "$seq")")
    s+=("$(OPENBLAS_CORETYPE="${core:-${OPENBLAS_CORETYPE:-}}" "${py[@]}" reference "$dir" "$dt" "$threads" "$nseq" "$seq")")
    p+=("$(OPENBLAS_CORETYPE="${core:-${OPENBLAS_CORETYPE:-}}" "${py[@]}" peak "$dt" "$threads")")
  done
  ours=$(median "${o[@]}"); ref=$(median "${r[@]}"); same=$(median "${s[@]}"); peak=$(median "${p[@]}")
  echo "$dt runs: omn-audit ${o[*]} | reference ${r[*]} | same-kernel reference ${s[*]} | peak ${p[*]}"
  awk -v dt="$dt" -v o="$ours" -v r="$ref" -v s="$same" -v p="$peak" -v f="$fpt" -v c="${core:-default}" 'BEGIN {
    printf "%s: omn-audit %7.1f tokens/s (%4.1f%% of the %5.1f GFLOP/s %s matmul peak)\n", dt, o, 100 * o * f / (p * 1e9), p, dt
    printf "      reference %7.1f tokens/s as users run it: ratio %.2f | on the same %s kernels %7.1f tokens/s (%4.1f%%): ratio %.2f\n",
      r, o / r, c, s, 100 * s * f / (p * 1e9), o / s }'
done
