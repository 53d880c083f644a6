# Helpers for the CLI tests: a scratch directory removed at exit ($tmp), and checks of a command's
# exit code and output. Sourced by tests/cli/test_*.sh.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
passes=0
expect() {  # expect CODE PATTERN -- command...
  local code="$1" pattern="$2"
  shift 3
  local out rc
  out="$("$@" 2>&1)" && rc=0 || rc=$?
  if [ "$rc" != "$code" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $rc (want $code), output lacks /$pattern/:"
    echo "$out" | tail -n 15
    fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}
check() {  # check DESCRIPTION -- command...
  local what="$1"
  shift 2
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
# mini_manifest [CONDITIONS]: the mini fixture, its token set and configs/manifests/mini-demo.json with
# their digests pinned and 4 rows, as $tmp/m.json (the first CONDITIONS conditions only, if given).
# Needs $fx and $src.
mini_manifest() {
  cp "$fx/omn1-mini.pt" "$tmp/"
  /usr/bin/python3 "$src/tools/fixtures/make_tokens.py" -o "$tmp/mini-tokens.bin" >/dev/null
  /usr/bin/python3 - "$src/configs/manifests/mini-demo.json" "$tmp/m.json" "$(sha256sum "$tmp/omn1-mini.pt" | cut -c1-64)" \
    "$(sha256sum "$tmp/mini-tokens.bin" | cut -c1-64)" "${1:-}" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["checkpoint"]["sha256"], m["tokens"]["sha256"] = sys.argv[3], sys.argv[4]
m["rows"]["num_seqs"] = 4
if sys.argv[5]:
    m["conditions"] = m["conditions"][:int(sys.argv[5])]
json.dump(m, open(sys.argv[2], "w"))
PY
}
