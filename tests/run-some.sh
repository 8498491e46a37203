#!/bin/bash
# Run some tests of a built tree, as root and as the unprivileged test user
# (what tests/run-suite.sh does for all of them): for work on one part.
#   tests/run-some.sh [--root-only|--rootless-only] TEST...
# e.g. tests/run-some.sh tests/integration/sandbox.sh tests/unit/test-parse
# The rootless run uses a copy of the tree in the test user's home, named
# after this tree's path (so several trees can be tested side by side).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/lib/test-user.sh"
user=${CSRUN_TEST_USER:-csrun-test}
mode=both
case ${1:-} in
  --root-only) mode=root; shift ;;
  --rootless-only) mode=rootless; shift ;;
esac
if [ $# = 0 ]; then
  echo "usage: tests/run-some.sh [--root-only|--rootless-only] TEST..." >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "tests/run-some.sh: run it as root" >&2
  exit 2
fi
status=0
tests="$*"
show () {
  local t
  for t in $tests; do
    grep -E '^(not ok|ok .*# SKIP)' "$1/${t%.sh}.log" 2>/dev/null | sed "s|^|$2 $t: |" || true
  done
}
if [ "$mode" != rootless ]; then
  echo "== as root: $tests"
  make -s -C "$top" check TESTS="$tests" >/dev/null 2>&1 || status=1
  grep -h '^# \(PASS\|FAIL\|SKIP\|ERROR\)' "$top/test-suite.log" | tr '\n' ' '
  echo
  show "$top" root
fi
if [ "$mode" != root ]; then
  test_user_setup "$user"
  home=$test_user_home
  tree="$home/trees/$(echo "$top" | tr / _)"
  mkdir -p "$home/trees"
  chown "$user:" "$home/trees"
  rsync -a --delete --exclude 'tests/cache-*' "$top/" "$tree/" 2>/dev/null || { rm -rf "$tree"; cp -a "$top" "$tree"; }
  chown -R "$user:" "$tree"
  echo "== as $user: $tests"
  as_test_user "$user" make -s -C "$tree" check TESTS="$tests" >/dev/null 2>&1 || status=1
  grep -h '^# \(PASS\|FAIL\|SKIP\|ERROR\)' "$tree/test-suite.log" | tr '\n' ' '
  echo
  show "$tree" "$user"
fi
exit $status
