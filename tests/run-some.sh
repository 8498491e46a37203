#!/bin/bash
# Run some tests of a built tree, as root and as the unprivileged test user
# (what tests/run-suite.sh does for all of them): for work on one part.
#   tests/run-some.sh [--root-only|--rootless-only] TEST...
# e.g. tests/run-some.sh tests/integration/sandbox.sh tests/unit/test-parse
# The rootless run uses a copy of the tree in the test user's home, named
# after this tree's path (so several trees can be tested side by side).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
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
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
  for who in root "$user"; do
    for f in /etc/subuid /etc/subgid; do
      grep -q "^$who:" "$f" 2>/dev/null && continue
      case $who in root) start=300000 ;; *) start=400000 ;; esac
      echo "$who:$start:65536" >> "$f"
    done
  done
  home=$(getent passwd "$user" | cut -d: -f6)
  tree="$home/trees/$(echo "$top" | tr / _)"
  mkdir -p "$home/trees"
  chown "$user:" "$home/trees"
  rsync -a --delete --exclude 'tests/cache-*' "$top/" "$tree/" 2>/dev/null || { rm -rf "$tree"; cp -a "$top" "$tree"; }
  chown -R "$user:" "$tree"
  echo "== as $user: $tests"
  runuser -u "$user" -- env -i HOME="$home" USER="$user" PATH=/usr/local/bin:/usr/bin:/bin \
    CSRUN_MUST_WORK="${CSRUN_MUST_WORK:-0}" make -s -C "$tree" check TESTS="$tests" >/dev/null 2>&1 || status=1
  grep -h '^# \(PASS\|FAIL\|SKIP\|ERROR\)' "$tree/test-suite.log" | tr '\n' ' '
  echo
  show "$tree" "$user"
fi
exit $status
