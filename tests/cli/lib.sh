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
