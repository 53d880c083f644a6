#!/usr/bin/env bash
# Builds the libFuzzer targets with clang + ASan/UBSan (no libtorch) and runs each for SECONDS
# (default 60), seeded with the tests' files: the pickle and checkpoint parsers, every document
# omn-audit reads back (documents), baselines and tolerances against a real profile (gate), the
# intervention/study manifests and training configs (config), resumed journals (journal), and what
# train --resume reads back: the run record, the log and the optimizer state (train).
# Prints executions and findings; exit 1 on a finding.
#   tools/fuzz.sh [--unit-tests] [SECONDS] [TARGET...]
# --unit-tests first builds and runs, in the same ASan/UBSan build configured without libtorch
# (-DOMN_WITH_TORCH=OFF), the core's gtest binaries on the main build's fixtures, and the CLI with
# its text plugin: --version and a profile of the mini fixture (tools/test.sh does, after its ctest).
# Line tables only (-gline-tables-only): stacks keep their lines, the build skips full debug info.
# SECONDS 0 means no time limit; OMN_FUZZ_RUNS=N stops each target after N executions (the
# campaign in docs/RELIABILITY.md: OMN_FUZZ_RUNS=10000000 OMN_FUZZ_TIMEOUT=600 tools/fuzz.sh 0).
# OMN_FUZZ_TIMEOUT (default 10) is libFuzzer's per-input limit in wall-clock seconds: raise it for
# a long campaign that shares the machine, where a starved process would report false hangs.
# The targets run side by side, one per core (OMN_FUZZ_JOBS=N: at most N at once; the unit tests
# too, one per core); each one's output is printed in order when it is done. Ctrl-C (or SIGTERM)
# stops the running fuzzers, which print their stats, and starts no other.
# OMN_FUZZ_FORK=N runs each target in libFuzzer's fork mode on N cores (one run, one corpus; -runs
# counts the executions of all N workers).
# ASan keeps no allocation stack per malloc here (malloc_context_size=0: unwinding at every
# allocation was ~1/5 of the gate's time); a finding prints the command that replays it with
# full stacks. An ASAN_OPTIONS of your own replaces this.
# Beside other work, `nice` alone is not enough when the campaign runs in its own session (setsid,
# nohup from another terminal): Linux gives each session's autogroup an equal share of the CPU,
# whatever the nice value. Lower the group too (echo 19 >/proc/PID/autogroup for each fuzzer):
# tools/demo.sh took 23m47 beside two such lanes at nice 10 (1m42 on an idle machine).
# tools/test.sh runs it for a few seconds per target where clang is installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/tools/deps.sh"
omn_install_deps
unit=0
if [ "${1:-}" = "--unit-tests" ]; then  # first the core's unit tests in the same sanitized build
  unit=1
  shift
fi
secs="${1:-60}"
# the numbers it passes to libFuzzer, checked here (libFuzzer reads a malformed one as 0: no limit)
whole() {  # NAME VALUE MIN
  if ! [[ "$2" =~ ^[0-9]{1,9}$ ]] || [ "$2" -lt "$3" ]; then
    # the value escaped (%q: ESC and BEL become visible) and cut: it may hold anything
    printf 'fuzz.sh: %s=%q: expected a whole number, at least %s\n' "$1" "${2:0:200}" "$3" >&2
    exit 2
  fi
}
whole SECONDS "$secs" 0
for v in OMN_FUZZ_RUNS OMN_FUZZ_TIMEOUT OMN_FUZZ_FORK OMN_FUZZ_JOBS; do [ -z "${!v:-}" ] || whole "$v" "${!v}" 1; done
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(pickle checkpoint documents gate config journal train)
build="${OMN_FUZZ_BUILD_DIR:-$root/build-fuzz}"
main="${OMN_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOMN_WITH_TORCH=OFF -DOMN_BUILD_TESTS=OFF -DOMN_FUZZ=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" >/dev/null
fi
unit_tests=(test_io test_audit test_eval_stats test_cli test_tokenizer)
if [ $unit = 1 ]; then
  grep -q '^OMN_BUILD_TESTS:BOOL=ON' "$build/CMakeCache.txt" || cmake -DOMN_BUILD_TESTS=ON "$build" >/dev/null
  cmake --build "$build" -j "$(nproc)"  # the whole torch-free tree: the CLI, its text plugin, the tests, the fuzz targets
  [ -d "$main/fixtures/interop" ] || { echo "fuzz.sh: --unit-tests reads the main build's fixtures: run its ctest first" >&2; exit 2; }
  [ -e "$build/fixtures" ] || ln -s "$main/fixtures" "$build/fixtures"
  # the binaries side by side, one per core, each one's output printed in order
  upids=()
  for t in "${unit_tests[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
      "$build/tests/$t" --gtest_brief=1 >"$build/$t.asan.log" 2>&1 &
    upids+=($!)
  done
  failed=0
  for i in "${!unit_tests[@]}"; do
    t="${unit_tests[$i]}"
    echo "== $t under ASan/UBSan"
    if wait "${upids[$i]}"; then cat "$build/$t.asan.log"; else cat "$build/$t.asan.log"; echo "FAIL: $t under ASan/UBSan" >&2; failed=1; fi
  done
  [ $failed = 0 ] || exit 1
  echo "== the CLI built without libtorch, under ASan/UBSan"
  "$build/omn-audit" --version
  "$build/omn-audit" profile "$main/fixtures/omn1-mini.pt" --no-tables >/dev/null ||
    { echo "FAIL: profile with the CLI built without libtorch, under ASan/UBSan" >&2; exit 1; }
else
  cmake --build "$build" -j "$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")
fi

# --- seeds -----------------------------------------------------------------------------------
c="$build/corpus"
mkdir -p "$c"/{pickle,checkpoint,documents,gate,config,journal,train} "$build/findings"
fx="$main/fixtures/interop"
if [ ! -d "$fx" ]; then /usr/bin/python3 "$root/tests/interop/make_fixtures.py" "$fx" >/dev/null; fi
cp "$fx"/*.pt "$fx"/*.safetensors "$c/checkpoint/" 2>/dev/null || true
for f in "$fx"/*.pt; do unzip -p "$f" '*/data.pkl' >"$c/pickle/$(basename "$f").pkl" 2>/dev/null || true; done
# documents: a real profile (the gate's reference too), the reference, a tolerance, and whatever
# results the demo left
profile="$c/profile.json"
if [ -x "$main/omn-audit" ] && [ -f "$main/fixtures/omn1-mini.pt" ]; then
  "$main/omn-audit" profile "$main/fixtures/omn1-mini.pt" --json "$profile" --no-tables --force >/dev/null
else
  echo "fuzz.sh: build the main tree first (tools/test.sh): the seeds come from it" >&2
  exit 2
fi
cp "$profile" "$root/configs/omn-1-reference-profile.json" "$c/documents/"
cp "$root/configs/omn-1-reference-profile.json" "$profile" "$c/gate/"
# a profile as written before count ranges were options (count_in_1_2, count_above_32): read as today's
/usr/bin/python3 - "$profile" "$c/documents/legacy-profile.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = d["statistics"]
s["count_in_1_2"] = s["counts"]["[1,2]"]["count"]; s["count_above_32"] = s["counts"]["(32,inf)"]["count"]
del s["counts"]; del d["options"]["count_ranges"]
json.dump(d, open(sys.argv[2], "w"))
PY
cp "$c/documents/legacy-profile.json" "$c/gate/"
echo '{"schema":"omn-audit/tolerance@1","default":{"abs":0,"rel":1e-9},"rules":[{"pointer":"/layers/*/q/mean","abs":0.01}]}' \
  | tee "$c/gate/tolerance.json" >"$c/documents/tolerance.json"
for f in "$main"/demo/*.json "$main"/demo-model/*.json; do [ -f "$f" ] && cp "$f" "$c/documents/" || true; done
# configs: the first byte picks the parser (0 intervention manifest, 1 study manifest, 2 training config)
for f in "$root"/configs/manifests/*.json; do { printf '\x00'; cat "$f"; } >"$c/config/m-$(basename "$f")"; done
for f in "$root"/configs/studies/*.json; do { printf '\x01'; cat "$f"; } >"$c/config/s-$(basename "$f")"; done
for f in "$root"/configs/train/*.json; do { printf '\x02'; cat "$f"; } >"$c/config/t-$(basename "$f")"; done
# a journal whose records carry their checksums (as io/journal.cpp writes them)
/usr/bin/python3 - "$c/journal/seed.jsonl" <<'PY'
import hashlib, json, sys
def line(r):
    r = dict(r); r["journal_sha256"] = hashlib.sha256(json.dumps(r, separators=(",", ":"), sort_keys=True).encode()).hexdigest()
    return json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n"
with open(sys.argv[1], "w") as f:
    f.write(line({"schema": "omn-audit/journal@1", "kind": "intervene", "manifest_sha256": "0" * 64}))
    f.write(line({"id": "control", "nll_sum": [1, 2, 3], "tokens": [4, 5, 6]}))
    # a sweep's passes as intervene/pass_record.cpp writes them (fuzz_journal reads each record back)
    scores = {"nll_sum": [1.5, None, 3.25], "tokens": [4, 5, 6]}
    f.write(line({"id": "control_open", "kind": "control", "scores": scores, "seconds": 0.5, "gain_sha256": "a" * 64,
                  "mechanism": None, "divergence": None}))
    f.write(line({"id": "c1", "kind": "condition", "label": "q = 1", "op": {"op": "constant", "target": "q", "value": 1.0},
                  "manifest_pointer": "/conditions/0", "touched": ["layers.0.q_norm.weight"],
                  "applied": {"sha256": "b" * 64, "vectors": []}, "start_layer": 0, "scores": scores, "seconds": 0.25,
                  "restore": {"sha256": "a" * 64, "expected": "a" * 64, "ok": True}, "mechanism": None,
                  "divergence": {"kl_sum": [0.5, 0.25, 0.0], "top1_agree": [4, 5, 6], "dp_correct_sum": [0, 0, 0]},
                  "reported_perplexity": 692.0}))
    f.write('{"id": "c1", "torn')
PY
# what a resume reads: the first byte picks the reader (0 train.json, 1 log.jsonl, 2 an optimizer
# state), seeded from the parity tests' interrupted run when it is there
run_seed="$main/fixtures/train/run-cut-killed"
if [ -f "$run_seed/train.json" ]; then
  { printf '\x00'; cat "$run_seed/train.json"; } >"$c/train/record.json"
  { printf '\x01'; head -c 60000 "$run_seed/log.jsonl"; } >"$c/train/log.jsonl"
  for f in "$run_seed"/checkpoints/step-000000.optim.pt "$run_seed"/checkpoints/step-000004.optim.pt; do
    [ -f "$f" ] && { printf '\x02'; head -c 65000 "$f"; } >"$c/train/$(basename "$f")"
  done
else
  printf '\x01{"step":0,"eval":{"heldout_loss":5.1}}\n{"step":1,"train_loss":5.0}\n' >"$c/train/log.jsonl"
fi

# --- run ---------------------------------------------------------------------------------------
# The targets run side by side, one per core (OMN_FUZZ_JOBS, default every core; one at a time in
# fork mode, which takes OMN_FUZZ_FORK cores itself); each one's summary is printed in order.
fuzz_one() {  # TARGET: runs it; its summary on stdout; exit 1 on a finding
  local t="$1" limits=() found=0
  echo "== fuzz_$t for ${secs}s${OMN_FUZZ_RUNS:+ or $OMN_FUZZ_RUNS runs}"
  [ "$secs" = 0 ] || limits+=(-max_total_time="$secs")
  [ -z "${OMN_FUZZ_RUNS:-}" ] || limits+=(-runs="$OMN_FUZZ_RUNS")
  [ -z "${OMN_FUZZ_FORK:-}" ] || limits+=(-fork="$OMN_FUZZ_FORK")
  if ! ASAN_OPTIONS="${ASAN_OPTIONS:-malloc_context_size=0}" OMN_FUZZ_PROFILE="$profile" "$build/tests/fuzz/fuzz_$t" "$c/$t" \
       "${limits[@]}" -max_len=65536 -rss_limit_mb=2048 -timeout="${OMN_FUZZ_TIMEOUT:-10}" \
       -artifact_prefix="$build/findings/$t-" -print_final_stats=1 2>"$build/fuzz_$t.log"; then
    if grep -q "libFuzzer: run interrupted" "$build/fuzz_$t.log"; then  # SIGINT to the fuzzer: a stop
      echo "fuzz_$t interrupted (not a finding)"
    else
      found=1
      echo "FINDING: see $build/fuzz_$t.log and $build/findings/"
      grep -E "ERROR|SUMMARY|==[0-9]+==" "$build/fuzz_$t.log" | head -5
      echo "replay with full stacks: OMN_FUZZ_PROFILE=$profile $build/tests/fuzz/fuzz_$t $build/findings/$t-*"
    fi
  fi
  # the executions: libFuzzer's final stats, or in fork mode its last status line
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|^INFO: fuzzed for" "$build/fuzz_$t.log" || true
  [ -z "${OMN_FUZZ_FORK:-}" ] || grep -E '^#[0-9]+: cov' "$build/fuzz_$t.log" | tail -1 || true
  return $found
}
jobs_max="${OMN_FUZZ_JOBS:-$(nproc)}"
[ -z "${OMN_FUZZ_FORK:-}" ] || jobs_max=1
status=0
pids=()
stopped=0
# a background job ignores SIGINT (no job control in a script): the fuzzers under each job are sent
# SIGTERM, which libFuzzer takes as an interruption, as it does SIGINT
stop_fuzzers() {
  stopped=1
  for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null || true; done
}
trap stop_fuzzers INT TERM
for t in "${targets[@]}"; do
  while [ $stopped = 0 ] && [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  [ $stopped = 0 ] || break
  fuzz_one "$t" >"$build/fuzz_$t.summary" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  # a signal (the trap) interrupts wait, not the job: wait again while it runs
  while [ $rc -gt 128 ] && kill -0 "${pids[$i]}" 2>/dev/null; do rc=0; wait "${pids[$i]}" || rc=$?; done
  [ $rc = 0 ] || status=1
  cat "$build/fuzz_${targets[$i]}.summary"
done
[ $stopped = 0 ] || echo "fuzz.sh: stopped; the targets not started: ${targets[*]:${#pids[@]}}"
exit $status
