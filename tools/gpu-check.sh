#!/usr/bin/env bash
# On a CUDA machine: build omn-audit against the libtorch of an installed PyTorch 2.x wheel, run
# the CUDA parity tests, and a full-size eval (the 1.5B `full` fixture, 50 x 2048 tokens, bf16)
# reporting tokens/s and the share of the measured bf16 matrix-product peak. See docs/gpu.md.
#   tools/gpu-check.sh [OUT_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${OUT:-$root/build-cuda/out}}"
py="${PYTHON:-python3}"
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/gpu-check.log"; }

log "environment"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$out/gpu-check.log"
torch_prefix=$("$py" -c "import torch; print(torch.utils.cmake_prefix_path)")
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cxx11 abi', torch._C._GLIBCXX_USE_CXX11_ABI)" \
  | tee -a "$out/gpu-check.log"
abi=$("$py" -c "import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))")

log "dependencies (headers / sources only: the wheel's C++ ABI decides how everything is compiled)"
if command -v apt-get >/dev/null; then
  apt-get install -y -qq nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libgtest-dev libssl-dev cmake ninja-build \
    >/dev/null 2>&1 || true
fi

log "build (Release, CUDA libtorch from $torch_prefix, _GLIBCXX_USE_CXX11_ABI=$abi)"
cmake -S "$root" -B "$root/build-cuda" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
  -DOMN_SPDLOG_HEADER_ONLY=ON -DOMN_GTEST_FROM_SOURCE=ON -DCMAKE_CXX_FLAGS="-D_GLIBCXX_USE_CXX11_ABI=$abi" \
  2>&1 | tail -n 3 | tee -a "$out/gpu-check.log"
cmake --build "$root/build-cuda" -j "$(nproc)" 2>&1 | tail -n 3 | tee -a "$out/gpu-check.log"

log "CUDA parity (attention paths on the device, fp32 / bf16 / fp16; flash against masked)"
(cd "$root/build-cuda" && ctest --output-on-failure -R "AttentionParity|AttentionChooser" 2>&1 | tail -n 20) | tee -a "$out/gpu-check.log"

log "full-size eval: the 1.5B OMN-1-shaped fixture, 50 x 2048 tokens, bf16, cuda"
fx="$root/build-cuda/bench"
mkdir -p "$fx"
[ -f "$fx/omn1-full.pt" ] || "$py" "$root/tools/fixtures/make_omn_fixture.py" --size full -o "$fx/omn1-full.pt"
[ -f "$fx/tokens.bin" ] || "$py" "$root/tools/fixtures/make_tokens.py" -o "$fx/tokens.bin" --tokens 200000 --vocab 131840
peak=$("$py" -c "
import torch, time
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(3): a @ b
torch.cuda.synchronize(); t = time.perf_counter(); n = 20
for _ in range(n): a @ b
torch.cuda.synchronize(); print('%.1f' % (n * 2 * 8192 ** 3 / (time.perf_counter() - t) / 1e12))")
"$root/build-cuda/omn-audit" eval --checkpoint "$fx/omn1-full.pt" --tokens "$fx/tokens.bin" --eos 0 --tokenizer-revision gpu-check \
  --seq-len 2048 --num-seqs 50 --dtype bf16 --device cuda --batch 8 --json "$out/eval-full.json" --force | tee -a "$out/gpu-check.log"
"$py" - "$out/eval-full.json" "$peak" <<'PY' | tee -a "$out/gpu-check.log"
import json, sys
d = json.load(open(sys.argv[1])); peak = float(sys.argv[2])
c = d["model"]["config"]; tps = d["timing"]["tokens_per_second"]
D, L, F, V, hd, Hq, Hk = c["d_model"], c["n_layers"], c["ffn_hidden"], c["vocab_size"], c["head_dim"], c["n_heads"], c["n_kv_heads"]
flops = L * (2 * D * (Hq + 2 * Hk) * hd + 2 * Hq * hd * D + 2 * D * 2 * F + 2 * F * D + 2 * 2 * Hq * hd * 1024) + 2 * D * V
print("attention %s: %.0f tokens/s = %.1f TFLOP/s, %.1f%% of the measured %.0f TFLOP/s bf16 peak"
      % (d["model"]["attention"], tps, tps * flops / 1e12, 100 * tps * flops / 1e12 / peak, peak))
PY
