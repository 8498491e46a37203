#!/bin/bash
# Run the whole test suite from a configured and built tree: once as root and
# once as an unprivileged user (rootless is csrun's main mode).  Needs root to
# create that user; run it as `sudo tests/run-suite.sh` from the build tree.
# CSRUN_TEST_USER names the user (default csrun-test); it is created if missing,
# and root and that user get subordinate id ranges (for --user) if they have none.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. "$top/tests/lib/test-user.sh"
user=${CSRUN_TEST_USER:-csrun-test}
status=0

if [ "$(id -u)" != 0 ]; then
  echo "tests/run-suite.sh: run it as root (it runs the suite as root and as '$user')" >&2
  exit 2
fi

show_failures () {
  # Print the logs of failed tests so CI output says what broke.
  local dir=$1
  grep -l -E '^:test-result: (FAIL|ERROR|XPASS)' "$dir"/tests/*/*.trs 2>/dev/null | while read -r trs; do
    echo "==== ${trs%.trs}.log"
    cat "${trs%.trs}.log"
  done
}

echo "== test suite as root"
if ! make -C "$top" check; then
  show_failures "$top"
  status=1
fi

echo "== OCI conformance suites as root (tests/conformance/run.sh), in the background"
# crun's and runc's own tests and runtime-tools' validation, against this tree's
# csrun, fetched and built by tests/conformance/fetch-suites.sh (CI does it).
# They run beside the unprivileged pass below (which can change no host state
# they watch: no cgroup, mount or sysctl), to keep the suite's time down; their
# log is printed when both are done.  An unexpected failure is re-run once
# alone by run.sh, so a busy moment does not fail them.
suites_dir=${CSRUN_SUITES_DIR:-/var/cache/csrun-suites}
conf_pid=
# (An if, not a && list: under set -e a failing last command of the trap, a
# kill of a pid already waited for, would become the script's exit status.)
trap 'if [ -n "$conf_pid" ]; then kill "$conf_pid" 2>/dev/null || true; fi' EXIT
if [ -d "$suites_dir" ]; then
  conf_log=$(mktemp "${TMPDIR:-/tmp}/csrun-conformance-log.XXXXXX")
  bash tests/conformance/run.sh --runtime "$top/csrun" --suites "$suites_dir" > "$conf_log" 2>&1 &
  conf_pid=$!
elif [ "${CSRUN_MUST_WORK:-0}" = 1 ]; then
  echo "conformance: $suites_dir absent (run tests/conformance/fetch-suites.sh $suites_dir)" >&2
  status=1
else
  echo "conformance: not run: $suites_dir absent (tests/conformance/fetch-suites.sh $suites_dir makes it)"
fi

echo "== test suite as the unprivileged user '$user'"
test_user_setup "$user"
home=$test_user_home
tree="$home/csrun-tree"
rm -rf "$tree"
cp -a "$top" "$tree"
rm -rf "$tree"/tests/cache-*
chown -R "$user:" "$tree"
if ! as_test_user "$user" make -C "$tree" check; then
  show_failures "$tree"
  status=1
fi
# The conformance suites' log, then their table and what failed there again,
# where CI's log tail shows it.
if [ -n "$conf_pid" ]; then
  if ! wait "$conf_pid"; then
    status=1
    conf_failed=FAILED
  fi
  conf_pid=
  echo "== OCI conformance suites as root (tests/conformance/run.sh): ${conf_failed:-passed}"
  cat "$conf_log"
  echo "== OCI conformance suites as root, repeated from above: ${conf_failed:-passed}"
  sed -n '/^suite  *| runtime/,$p' "$conf_log" | head -n 120
  rm -f "$conf_log"
fi
# Summary line counted by CI.
total_pass=0
total_fail=0
total_skip=0
for trs in "$top"/tests/*/*.trs "$tree"/tests/*/*.trs; do
  [ -f "$trs" ] || continue
  total_pass=$((total_pass + $(grep -c '^:test-result: PASS' "$trs" || true)))
  total_fail=$((total_fail + $(grep -c -E '^:test-result: (FAIL|ERROR|XPASS)' "$trs" || true)))
  total_skip=$((total_skip + $(grep -c '^:test-result: SKIP' "$trs" || true)))
done
echo "suite: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
