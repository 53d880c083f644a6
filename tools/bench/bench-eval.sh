#!/usr/bin/env bash
# Benchmark: `omn-audit eval` against the plain-PyTorch reference (tests/parity/reference_model.py)
# on the same small model (4 layers, d 512, 8:2 heads, head 64, vocab 32,768), the same tokens
# (packed rows of 512), the same threads, in fp32 and bf16. Prints tokens/s, the ratio, and the share
# of the machine's measured matrix-product peak. Goal: >= 2x in bf16, >= 1.2x in fp32.
# Each side runs REPS times, interleaved, and the median is reported (this VM's speed drifts).
# Beside them llama.cpp on the same weights and rows (tools/llama/: node-llama-cpp's prebuilt CPU
# libllama from npm, the model written as a Qwen3 GGUF by tools/bench/bench_eval_gguf.py, F32 for fp32 and
# BF16 for bf16; with and without flash attention): its tokens/s (its decode calls only, and with its
# NLL computation as omn-audit's own tokens/s counts), omn-audit / llama.cpp, and the agreement of the
# two NLL sums (the proof that both computed the same thing: ~1e-7 in fp32). Where npm or that install
# fails, its lines are skipped.
# OMN_BENCH_ISA=avx2 runs every side at the AVX2 level on an AVX-512 host, the other CPU kind's
# kernels: oneDNN held to AVX2 (ONEDNN_MAX_CPU_ISA), OpenBLAS's Haswell kernels, llama.cpp's haswell
# CPU variant. (libtorch's own bf16 product then throws: the bf16 reference and peak print nan.)
#   tools/bench/bench-eval.sh [NSEQ] [THREADS] [REPS]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
nseq="${1:-16}"
threads="${2:-$(nproc)}"
reps="${3:-3}"
seq=512
dir="$build/bench/eval"
py=(/usr/bin/python3 "$root/tools/bench/bench_eval.py")
[ -f "$dir/model.pt" ] || "${py[@]}" setup "$dir"
fpt=$("${py[@]}" flops "$dir" "$seq")
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores;$(for f in avx2 avx512f avx512_bf16 amx_bf16; do
  grep -qw "$f" /proc/cpuinfo && echo -n " $f" || echo -n " no-$f"; done)"
echo "model: 4 layers, d 512, 8:2 heads, vocab 32768; $nseq packed rows of $seq tokens; $threads threads"
# llama.cpp: installed once (npm, --ignore-scripts), the GGUFs written again when model.pt is newer
llama="$build/bench/llama"
if bash "$root/tools/llama/install.sh" "$llama" >"$build/bench/llama-install.log" 2>&1; then
  for g in f32 bf16; do
    [ "$llama/bench-$g.gguf" -nt "$dir/model.pt" ] || /usr/bin/python3 "$root/tools/bench/bench_eval_gguf.py" "$dir" "$llama/bench-$g.gguf" "$g" ||
      { echo "llama.cpp: writing the $g GGUF failed, its lines are skipped"; llama=""; break; }
  done
  [ -z "$llama" ] ||
    echo "llama.cpp: $(cat "$llama"/.installed-node-llama-cpp-*), CPU only, one decode per row (its ISA variant named below)"
else
  echo "llama.cpp: not available, its lines are skipped (tools/llama/install.sh failed: $(tail -1 "$build/bench/llama-install.log"))"
  llama=""
fi
lvariant=()
case "${OMN_BENCH_ISA:-}" in
  # the CPU's full ISA: omn-audit's own OpenBLAS choice, as a user who follows its warning runs it (an
  # OPENBLAS_CORETYPE from the machine's environment -- Haswell on the AMD EPYC -- is dropped;
  # OMN_AUDIT_KEEP_BLAS=1 keeps it)
  "") [ -n "${OMN_AUDIT_KEEP_BLAS+set}" ] || unset OPENBLAS_CORETYPE ;;
  avx2) export ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2 OPENBLAS_CORETYPE=Haswell OMN_AUDIT_KEEP_BLAS=1; lvariant=(--cpu-variant haswell)
        echo "ISA level: AVX2 (ONEDNN_MAX_CPU_ISA=AVX2, OPENBLAS_CORETYPE=Haswell, llama.cpp's haswell variant)" ;;
  *) echo "OMN_BENCH_ISA: expected avx2 or nothing, got '$OMN_BENCH_ISA'" >&2; exit 2 ;;
esac
echo "libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3), OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# llama.cpp, two ways: flash attention with its default F16 K/V cache (it casts an F32 K/V to F16 before
# its flash kernel anyway), and no flash attention on an F32 K/V (attention in F32 end to end)
lcfg=("on f16" "off f32")
for dt in fp32 bf16; do
  o=(); r=(); s=(); p=(); lt=(); ltn=(); ox=()
  g=$([ "$dt" = fp32 ] && echo f32 || echo bf16)  # the GGUF's weight type
  for _ in $(seq 1 "$reps"); do
    "$build/omn-audit" eval --checkpoint "$dir/model.pt" --preset "$dir/preset.json" --tokens "$dir/tokens.bin" --eos 0 \
      --tokenizer-revision bench --seq-len "$seq" --num-seqs "$nseq" --dtype "$dt" --threads "$threads" --batch 4 \
      --groups 1 --bootstrap-resamples 100 --json "$dir/omn-$dt.json" --force >/dev/null
    o+=("$(/usr/bin/python3 -c "import json; print('%.1f' % json.load(open('$dir/omn-$dt.json'))['timing']['tokens_per_second'])")")
    # bf16: the kernel the default did not pick as well (docs/eval.md "How bf16 products run"), so
    # one host shows both: native where the CPU has bf16 instructions, fp32-accumulate everywhere
    if [ "$dt" = bf16 ]; then
      kern=$(/usr/bin/python3 -c "import json; print(json.load(open('$dir/omn-$dt.json'))['model']['products']['bf16'])")
      other=$([ "$kern" = native ] && echo fp32-accumulate || echo native)
      if OMN_BF16_PRODUCTS="$other" "$build/omn-audit" eval --checkpoint "$dir/model.pt" --preset "$dir/preset.json" \
        --tokens "$dir/tokens.bin" --eos 0 --tokenizer-revision bench --seq-len "$seq" --num-seqs "$nseq" --dtype bf16 \
        --threads "$threads" --batch 4 --groups 1 --bootstrap-resamples 100 --json "$dir/omn-bf16-$other.json" --force \
        >/dev/null 2>&1; then
        ox+=("$(/usr/bin/python3 -c "import json; print('%.1f' % json.load(open('$dir/omn-bf16-$other.json'))['timing']['tokens_per_second'])")")
      fi
    fi
    # the reference as a user runs it (OpenBLAS's own kernel choice), and on the kernels omn-audit
    # chose (like for like); the peak on omn-audit's kernels
    core=$(/usr/bin/python3 -c "import json; print(json.load(open('$dir/omn-$dt.json'))['model']['blas']['openblas_coretype'] or '')")
    r+=("$("${py[@]}" reference "$dir" "$dt" "$threads" "$nseq" "$seq" 2>/dev/null || echo nan)")
    s+=("$(OPENBLAS_CORETYPE="${core:-${OPENBLAS_CORETYPE:-}}" "${py[@]}" reference "$dir" "$dt" "$threads" "$nseq" "$seq" 2>/dev/null || echo nan)")
    p+=("$(OPENBLAS_CORETYPE="${core:-${OPENBLAS_CORETYPE:-}}" "${py[@]}" peak "$dt" "$threads" 2>/dev/null || echo nan)")
    # llama.cpp on the same packed rows (documents split at EOS 0, each its own llama.cpp sequence)
    for c in "${!lcfg[@]}"; do
      [ -n "$llama" ] || break
      read -r fa kv <<<"${lcfg[$c]}"
      if "$llama/llama_nll" "$llama/bench-$g.gguf" "$dir/tokens.bin" "$seq" "$nseq" "$threads" "$dir/llama-$dt-$c.json" \
        --eos 0 --fa "$fa" --kv "$kv" "${lvariant[@]}" >/dev/null 2>"$dir/llama.log"; then
        read -r a b < <(/usr/bin/python3 -c "import json; j = json.load(open('$dir/llama-$dt-$c.json')); print('%.1f %.1f' % (j['tokens_per_second'], j['tokens_per_second_with_nll']))")
        lt[$c]+="$a "; ltn[$c]+="$b "
      else
        echo "llama.cpp: llama_nll failed ($(tail -1 "$dir/llama.log")), its lines are skipped"
        llama=""
      fi
    done
  done
  ours=$(median "${o[@]}"); ref=$(median "${r[@]}"); same=$(median "${s[@]}"); peak=$(median "${p[@]}")
  echo "$dt runs: omn-audit ${o[*]} | reference ${r[*]} | same-kernel reference ${s[*]} | peak ${p[*]}"
  awk -v dt="$dt" -v o="$ours" -v r="$ref" -v s="$same" -v p="$peak" -v f="$fpt" -v c="${core:-default}" 'BEGIN {
    printf "%s: omn-audit %7.1f tokens/s (%4.1f%% of the %5.1f GFLOP/s %s matmul peak)\n", dt, o, 100 * o * f / (p * 1e9), p, dt
    printf "      reference %7.1f tokens/s as users run it: ratio %.2f | on the same %s kernels %7.1f tokens/s (%4.1f%%): ratio %.2f\n",
      r, o / r, c, s, 100 * s * f / (p * 1e9), o / s }'
  if [ "$dt" = bf16 ]; then
    echo "      bf16 products: the default here is $kern ($(/usr/bin/python3 -c "import json; print(json.load(open('$dir/omn-bf16.json'))['model']['products']['reason'])"))"
    if [ ${#ox[@]} -gt 0 ]; then
      echo "      omn-audit --dtype bf16 with OMN_BF16_PRODUCTS=$other: $(median "${ox[@]}") tokens/s (runs ${ox[*]})"
    else
      echo "      omn-audit --dtype bf16 with OMN_BF16_PRODUCTS=$other: does not run on this host (exit 2)"
    fi
  fi
  [ -n "$llama" ] || continue
  echo "      llama.cpp on the ${g^^} GGUF, $(/usr/bin/python3 -c "import json; j = json.load(open('$dir/llama-$dt-0.json'))['cpu_backend']; print('CPU backend', j['loaded'].split('/')[-1] or '?', '(' + ' '.join(k for k, v in j['features'].items() if v == '1') + ')')"):"
  for c in "${!lcfg[@]}"; do
    read -r fa kv <<<"${lcfg[$c]}"
    # shellcheck disable=SC2086  # the runs are words
    lm=$(median ${lt[$c]}); lmn=$(median ${ltn[$c]})
    awk -v o="$ours" -v l="$lm" -v n="$lmn" -v fa="$fa" -v kv="$kv" -v runs="${lt[$c]% }" 'BEGIN {
      printf "      llama.cpp %7.1f tokens/s, flash attention %-3s %s K/V (runs %s; its decode calls only, %.1f with its NLL): omn-audit / llama.cpp %.2f (%.2f)\n",
        l, fa ",", kv, runs, n, o / l, o / n }'
    echo "        NLL agreement with omn-audit: $(/usr/bin/python3 "$root/tools/bench/bench_eval_gguf.py" compare "$dir/llama-$dt-$c.json" "$dir/omn-$dt.json" || true)"
  done
done
