#!/bin/bash
# Run crun 1.8.1's own tests (tests/test_*.py from Debian's source package)
# against an OCI runtime.
#
#   suite-crun.sh --runtime BIN --suites DIR --results FILE [NAME...]
#
# NAME is a file ("test_mounts.py") or one test ("test_mounts.py:test_mount_symlink");
# without NAME every test runs.  Each test runs alone (RUN_TESTS=name, as crun's
# tests_utils.py allows), in its own python process, bounded by
# $CSRUN_CONFORMANCE_TIMEOUT seconds (default 60; a hung test counts as
# "fail<TAB>timeout").  FILE gets one line per test: STATUS<TAB>NAME<TAB>DETAIL,
# STATUS pass, fail or skip (crun's tests print "ok N - name #SKIP", return 77,
# for what the host or the runtime lacks).  FILE.d/NAME.log holds each test's output.
#
# As root it re-executes itself under `unshare -m --propagation private`.  When the
# runtime is crun (the reference) and the host is a cgroup v1/v2 hybrid whose v2
# hierarchy has controllers, it bind-mounts an empty file over
# /sys/fs/cgroup/unified/cgroup.controllers in that private mount namespace only:
# crun refuses such hosts outright ("cgroups in hybrid mode not supported"), which
# would make the comparison meaningless.  Other runtimes see the host as it is.
# The host's files are never written.
#
# Exit status: 0 when the suite ran (whatever the results), 2 when it cannot run
# here (missing source, init or tool: stderr says which).
set -uo pipefail

usage () {
  echo "usage: $0 --runtime BIN --suites DIR --results FILE [NAME...]" >&2
  exit 2
}

runtime=
suites=
results=
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=${2:-}; shift 2 || usage ;;
    --suites) suites=${2:-}; shift 2 || usage ;;
    --results) results=${2:-}; shift 2 || usage ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    --*) usage ;;
    *) names+=("$1"); shift ;;
  esac
done
[ -n "$runtime" ] && [ -n "$suites" ] && [ -n "$results" ] || usage

src=$suites/crun-1.8.1
init=$src/tests/init
if [ ! -f "$src/tests/tests_utils.py" ]; then
  echo "suite-crun.sh: crun's tests not present: $src (run tests/conformance/fetch-suites.sh $suites)" >&2
  exit 2
fi
if [ ! -x "$init" ]; then
  echo "suite-crun.sh: $init not built (run tests/conformance/prepare-crun.sh $suites)" >&2
  exit 2
fi
# Debian's python (where python3-* packages install), not a python earlier in PATH.
python=${CSRUN_SUITE_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
me=suite-crun.sh
here=$(cd "$(dirname "$0")" && pwd)
ME=suite-crun.sh
. "$(dirname "$0")/suite-lib.sh"
suite_need_tools "$python" timeout script
suite_resolve_paths

# Root: a private mount namespace for the whole run (the tests mount things).
if [ "$(id -u)" = 0 ] && [ -z "${CSRUN_SUITE_CRUN_NS:-}" ]; then
  export CSRUN_SUITE_CRUN_NS=1
  exec unshare -m --propagation private "$0" --runtime "$runtime" --suites "$suites" \
    --results "$results" "${names[@]}"
fi
if [ "$(id -u)" = 0 ] && "$runtime" --version 2>/dev/null | head -n 1 | grep -q '^crun version' \
  && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] \
  && grep -q . /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null; then
  : > "${TMPDIR:-/tmp}/suite-crun-empty.$$"
  mount --bind "${TMPDIR:-/tmp}/suite-crun-empty.$$" /sys/fs/cgroup/unified/cgroup.controllers \
    || echo "suite-crun.sh: warning: cannot mask unified/cgroup.controllers; crun refuses this hybrid host" >&2
fi

timeout_s=${CSRUN_CONFORMANCE_TIMEOUT:-60}
logdir=$results.d
rm -rf "$logdir"
mkdir -p "$logdir" || exit 2
: > "$results" || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/suite-crun.XXXXXX") || exit 2
# Some tests name ./tests/init relative to their working directory.
# Bind-mount sources under it must be reachable by the container's users (mktemp: 0700).
chmod 0755 "$work" && ln -s "$src/tests" "$work/tests" || exit 2
# Debian has no python3-libmount: crun-pylib/libmount.py provides what test_mounts.py uses.
export PYTHONPATH=$here/crun-pylib${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
frozen=/sys/fs/cgroup/freezer/frozen
frozen_before=no
[ -d "$frozen" ] && frozen_before=yes
private_null=
trap '[ -z "$private_null" ] || umount -l /dev/null; umount -l "$work/dev" 2>/dev/null; rm -rf --one-file-system "$work" "${TMPDIR:-/tmp}/suite-crun-empty.$$"' EXIT
# Host safety: runtimes change their stdio (crun 1.8.1 fchown()s its stdin to the
# container's user), so no test gets the host's /dev/null: stdin is an empty pipe,
# and as root (in this private mount namespace) /dev/null is a private node of our
# own tmpfs, so a test that opens /dev/null itself changes only that node.
if [ "$(id -u)" = 0 ]; then
  mkdir "$work/dev" && mount -t tmpfs -o mode=0755,size=16k csrun-suite-null "$work/dev" \
    && mknod -m 0666 "$work/dev/null" c 1 3 && mount --bind "$work/dev/null" /dev/null && private_null=1 \
    || { echo "$me: cannot put a private /dev/null in place" >&2; exit 2; }
fi

# The list of tests: FILE:NAME for every entry of each file's all_tests dict.
list_tests () {
  local f=$1
  (cd "$src/tests" && "$python" -c "
import sys
sys.path.insert(0, '.')
m = __import__(sys.argv[1][:-3])
for k in m.all_tests:
    print(sys.argv[1] + ':' + k)
" "$f")
}

selected=()
if [ ${#names[@]} -eq 0 ]; then
  for f in "$src"/tests/test_*.py; do
    selected+=("$(basename "$f")")
  done
else
  for n in "${names[@]}"; do
    case $n in
      *:*) selected+=("$n") ;;
      *) selected+=("$n") ;;
    esac
  done
fi
# Expand files to their tests; a file that lists none (it printed "1..0": a missing
# python module) is one skip line.
expanded=()
for n in "${selected[@]}"; do
  case $n in
    *:*) expanded+=("$n"); continue ;;
  esac
  if [ ! -f "$src/tests/$n" ]; then
    echo "suite-crun.sh: no such test file: $n" >&2
    exit 2
  fi
  mapfile -t tests < <(list_tests "$n" 2>/dev/null | grep "^$n:")
  if [ ${#tests[@]} -eq 0 ]; then
    printf 'skip\t%s\tthe file runs no test here (1..0)\n' "$n" >> "$results"
    continue
  fi
  expanded+=("${tests[@]}")
done

# Remove what a killed test left: containers in its state root, its directories.
cleanup_work () {
  local root id
  for root in "$work"/.testsuite-run-*/root; do
    [ -d "$root" ] || continue
    for id in "$root"/*; do
      [ -e "$id" ] || continue
      timeout 20 "$runtime" --root "$root" delete --force "$(basename "$id")" >/dev/null 2>&1
    done
  done
  rm -rf "$work"/.testsuite-run-* 2>/dev/null
}

# Processes a test left running on the host side: their working directory is in
# $work (e.g. tests/init check-feature idmapped-mounts, whose paused child can miss
# its PR_SET_PDEATHSIG when the parent exits first).  Killed, and reported.
kill_leftovers () {
  local t=$1 p c
  for p in /proc/[0-9]*; do
    c=$(readlink "$p/cwd" 2>/dev/null) || continue
    case $c in
      "$work" | "$work"/* | "$work (deleted)")
        [ "${p#/proc/}" = $$ ] && continue
        echo "$t: left process ${p#/proc/} ($(tr '\0' ' ' < "$p/cmdline" 2>/dev/null | cut -c1-80)) (killed)" \
          | tee -a "$logdir/leaks" >&2
        kill -KILL "${p#/proc/}" 2>/dev/null
        ;;
    esac
  done
}

# test_delete.py:test_simple_delete creates the host cgroup freezer/frozen, freezes
# the container in it and leaves it when delete -f cannot empty it (cgroup v1):
# thaw it, kill what the test put there (the test's container) and remove it.
restore_frozen () {
  local pid
  [ "$frozen_before" = no ] && [ -d "$frozen" ] || return 0
  echo THAWED > "$frozen/freezer.state" 2>/dev/null
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    while read -r pid; do kill -KILL "$pid" 2>/dev/null; done < "$frozen/tasks"
    rmdir "$frozen" 2>/dev/null && return 0
    sleep 0.5
  done
  echo "suite-crun.sh: cannot remove $frozen (left by test_simple_delete)" >&2
}

# Container cgroups that a test's runtime left behind, found by the tests' container
# ids (test-tmpXXXXXXXX, from tempfile.mkdtemp): a failed test (say an unknown
# `delete --regex`) can leave its container running once crun's tests_utils.py has
# removed the state root.  The processes in them are the test's containers: killed,
# the directories removed, and each reported on stderr and in FILE.d/leaks.
list_test_cgroups () {
  find /sys/fs/cgroup -mindepth 2 -maxdepth 4 -type d -name 'test-tmp????????' 2>/dev/null | LC_ALL=C sort
}
remove_leaked_cgroups () {
  local t=$1 d pid
  list_test_cgroups > "$work/cg.after"
  LC_ALL=C comm -13 "$work/cg.before" "$work/cg.after" > "$work/cg.new"
  [ -s "$work/cg.new" ] || return 0
  # A runtime may remove a container's cgroup just after its command returned.
  sleep 1
  list_test_cgroups > "$work/cg.after"
  LC_ALL=C comm -13 "$work/cg.before" "$work/cg.after" > "$work/cg.new"
  [ -s "$work/cg.new" ] || return 0
  while read -r d; do
    while read -r pid; do kill -KILL "$pid" 2>/dev/null; done < <(cat "$d/cgroup.procs" 2>/dev/null)
  done < "$work/cg.new"
  sort -r "$work/cg.new" | while read -r d; do
    for _ in 1 2 3 4 5 6; do
      rmdir "$d" 2>/dev/null && break
      sleep 0.5
    done
    if [ -d "$d" ]; then
      echo "$t: left cgroup $d (NOT removed: busy)"
    else
      echo "$t: left cgroup $d (removed)"
    fi
  done | tee -a "$logdir/leaks" >&2
}

for t in "${expanded[@]}"; do
  file=${t%%:*}
  name=${t#*:}
  log=$logdir/${file%.py}.$name.log
  list_test_cgroups > "$work/cg.before"
  cmd=(env OCI_RUNTIME="$runtime" INIT="$init" RUN_TESTS="$name" PYTHONDONTWRITEBYTECODE=1
    timeout -k 5 "$timeout_s" "$python" "$src/tests/$file")
  rc=0
  if [ "$file" = test_tty.py ]; then
    # test_tty needs a terminal on stdout (it skips otherwise): give it one.  The
    # command is exec'd by script's shell, so the test (and the runtime it starts)
    # is in the terminal's foreground process group whatever $SHELL is: a shell that
    # forks it instead (dash, script's default without $SHELL, as in CI) leaves
    # timeout(1)'s new group in the background, and the runtime's tcsetattr() on
    # its terminal stops it with SIGTTOU until the timeout.
    : | (cd "$work" && SHELL=/bin/bash script -q -e -c "exec $(printf '%q ' "${cmd[@]}")" /dev/null) > "$log" 2>&1 || rc=$?
  else
    : | (cd "$work" && "${cmd[@]}") > "$log" 2>&1 || rc=$?
  fi
  tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"
  # The test's TAP line (a test's own output may precede it on the same line).
  tap=$(grep -oE "(not )?ok [0-9]+ - $name( #SKIP)?\$" "$log" | tail -n 1)
  if [ "$tap" != "${tap%#SKIP}" ] && [ "${tap#not }" = "$tap" ]; then
    status=skip detail="skipped by the test"
  elif [ -n "$tap" ] && [ "${tap#not }" = "$tap" ]; then
    status=pass detail=
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    status=fail detail="timeout (${timeout_s}s)"
  else
    status=fail
    # The runtime's message (crun's tests print it before "Command [...] returned").
    detail=$(grep -v -E "^(1\.\.[0-9]+|not ok [0-9]+ - .*|Command '\[.*|b'')\$" "$log" | grep . | tail -n 1 | tr '\t' ' ' | cut -c1-200)
    [ -n "$detail" ] || detail=$(grep -o "returned non-zero exit status.*" "$log" | tail -n 1 | sed 's/^/runtime /')
    [ -n "$detail" ] || detail="not ok (exit $rc, no message)"
  fi
  printf '%s\t%s\t%s\n' "$status" "$t" "$detail" >> "$results"
  cleanup_work
  kill_leftovers "$t"
  restore_frozen
  remove_leaked_cgroups "$t"
done
exit 0
