#!/usr/bin/env bash
# Benchmark: `omn-audit profile` against `openssl dgst -sha256` on the same full-size (3.5 GB,
# 283-tensor, 1,503,200,256-parameter) OMN-1-shaped checkpoint, in the same run. The hash is the
# physical limit of profile (it must read every byte); goal: median ratio <= 1.05, peak RSS <= 64 MiB.
#   tools/bench/bench-profile.sh [RUNS]      (default 5; the fixture is generated once into build/bench/)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deps.sh"
omn_bench_setup
runs="${1:-5}"
omn_bench_fixture
omn="$build/omn-audit"
size=$(stat -c %s "$ckpt")

measure() {  # prints "seconds max_rss_kib" for one run of the command
  local log
  log="$(mktemp)"
  /usr/bin/time -v "$@" >/dev/null 2>"$log"
  awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]} /Maximum resident/ {r=$2} END {print s, r}' "$log"
  rm -f "$log"
}

cat "$ckpt" >/dev/null  # warm the page cache once: both sides then read from memory alike
declare -a ratios omn_t ssl_t omn_rss
for i in $(seq 1 "$runs"); do
  # alternate the order so neither side always runs second
  if [ $((i % 2)) -eq 0 ]; then
    read -r ts rs < <(measure openssl dgst -sha256 "$ckpt")
    read -r to ro < <(measure "$omn" profile "$ckpt" --no-tables)
  else
    read -r to ro < <(measure "$omn" profile "$ckpt" --no-tables)
    read -r ts rs < <(measure openssl dgst -sha256 "$ckpt")
  fi
  omn_t+=("$to"); ssl_t+=("$ts"); omn_rss+=("$ro")
  ratios+=("$(awk -v a="$to" -v b="$ts" 'BEGIN {printf "%.3f", a / b}')")
  echo "run $i: omn-audit profile ${to}s (${ro} KiB peak RSS), openssl dgst ${ts}s, ratio ${ratios[-1]}"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
mr=$(median "${ratios[@]}")
mo=$(median "${omn_t[@]}")
ms=$(median "${ssl_t[@]}")
peak=$(printf '%s\n' "${omn_rss[@]}" | sort -g | tail -n 1)
echo
echo "file: $ckpt ($size bytes)"
echo "median omn-audit profile: ${mo}s ($(awk -v s="$size" -v t="$mo" 'BEGIN {printf "%.2f", s / t / 1e9}') GB/s)"
echo "median openssl dgst -sha256: ${ms}s"
echo "median ratio profile/hash: $mr (goal <= 1.05)"
echo "peak RSS of profile: $peak KiB = $(awk -v k="$peak" 'BEGIN {printf "%.1f", k / 1024}') MiB (goal <= 64 MiB)"
if [ "${OMN_BENCH_PYTHON:-1}" = "1" ]; then
  read -r tp rp < <(measure /usr/bin/python3 - "$ckpt" <<'PY'
import sys, torch
sd = torch.load(sys.argv[1])["model"]
g = torch.cat([sd["layers.%d.attention.%s_norm.weight" % (i, r)].double() for i in range(28) for r in "qk"])
print(g.mean().item(), g.std(unbiased=False).item(), g.min().item(), g.max().item(), (g > 1.43).double().mean().item())
PY
)
  echo "reference: Python torch.load + statistics (no hash): ${tp}s, $(awk -v k="$rp" 'BEGIN {printf "%.0f", k / 1024}') MiB peak RSS," \
       "ratio to the hash $(awk -v a="$tp" -v b="$ms" 'BEGIN {printf "%.2f", a / b}')"
fi
