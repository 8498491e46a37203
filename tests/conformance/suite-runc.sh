#!/bin/bash
# Run runc 1.1.5's own integration tests (tests/integration/*.bats from Debian's
# source package, prepared by tests/conformance/prepare-runc.sh) against an OCI
# runtime.
#
#   suite-runc.sh [--ci] --runtime BIN --suites DIR --results FILE [NAME...]
#
# NAME is a file ("exec.bats") or one test ("exec.bats:runc exec --user");
# without NAME every file runs (with --ci, or CSRUN_CONFORMANCE_CI=1, all but
# checkpoint.bats and mounts_sshfs.bats: see CI_SKIP_FILES below).  Each file
# runs in one `bats -t` under `script -q -e -c` (the tests want a tty, as in
# runc's CI) with RUNC=BIN;
# when no test of it finished for $CSRUN_CONFORMANCE_TIMEOUT seconds (default
# 60) the file is killed, the test in progress counts as "fail<TAB>timeout" and
# the tests after it run one at a time, bounded the same way.
# FILE gets one line per test: STATUS<TAB>NAME<TAB>DETAIL, STATUS pass, fail or
# skip, NAME "FILE.bats:TEST NAME".  FILE.d/ holds each file's TAP output
# (FILE.bats.tap), each failed test's log (FILE.bats:TEST NAME.log, "/" as "_")
# and timings.txt (FILE.bats<TAB>seconds).
#
# As root it re-executes itself under `unshare -m --propagation private`: the
# tests mount things.  Containers a killed file leaves behind are deleted with
# BIN itself; cgroups left under /sys/fs/cgroup/*/runc-cgroups-integration-test*
# after a file are removed, and a container cgroup among them is reported as
# "fail<TAB>FILE.bats:(cgroups left behind)".  Runs of this script take turns,
# one file at a time (a lock in /run/lock): they share that parent.
#
# Exit status: 0 when the suite ran (whatever the results), 2 when it cannot run
# here (missing source, helper binary or tool: stderr says which).
set -uo pipefail

# The files CI skips (--ci, or CSRUN_CONFORMANCE_CI=1): the whole suite takes
# about 2 minutes on 2 cores with runc (3 with csrun on main, whose failing
# tests wait in retries; 2 once they pass; FILE.d/timings.txt has each
# file's), so only what cannot say anything useful is left out:
# checkpoint.bats (criu: csrun has no checkpoint/restore, and on kernels like
# this host's criu cannot dump even for runc) and mounts_sshfs.bats (needs a
# working sshfs; skips everywhere else).
CI_SKIP_FILES="checkpoint.bats mounts_sshfs.bats"

usage () {
  echo "usage: $0 [--ci] --runtime BIN --suites DIR --results FILE [NAME...]" >&2
  exit 2
}

runtime=
suites=
results=
ci=${CSRUN_CONFORMANCE_CI:-0}
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=${2:-}; shift 2 || usage ;;
    --suites) suites=${2:-}; shift 2 || usage ;;
    --results) results=${2:-}; shift 2 || usage ;;
    --ci) ci=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \?//;p}' "$0"; exit 0 ;;
    --*) usage ;;
    *) names+=("$1"); shift ;;
  esac
done
[ -n "$runtime" ] && [ -n "$suites" ] && [ -n "$results" ] || usage

src=$suites/runc-1.1.5
integ=$src/tests/integration
if [ ! -f "$integ/helpers.bash" ]; then
  echo "suite-runc.sh: runc's tests not present: $integ (run tests/conformance/fetch-suites.sh $suites)" >&2
  exit 2
fi
for cmd in recvtty sd-helper seccompagent; do
  if [ ! -x "$src/contrib/cmd/$cmd/$cmd" ]; then
    echo "suite-runc.sh: $src/contrib/cmd/$cmd/$cmd not built (run tests/conformance/prepare-runc.sh $suites)" >&2
    exit 2
  fi
done
if ! (cd "$integ" && ./get-images.sh > /dev/null 2>&1 < /dev/null) \
  || [ "$(find "$integ/testdata" -name '*.tar.xz' | wc -l)" -lt 2 ]; then
  echo "suite-runc.sh: test images missing in $integ/testdata (run tests/conformance/prepare-runc.sh $suites)" >&2
  exit 2
fi
ME=suite-runc.sh
. "$(dirname "$0")/suite-lib.sh"
suite_need_tools bats gawk jq script timeout go gcc
suite_resolve_paths

if [ "$(id -u)" = 0 ] && [ -z "${CSRUN_SUITE_RUNC_NS:-}" ]; then
  export CSRUN_SUITE_RUNC_NS=1
  cici=()
  [ $ci = 1 ] && cici=(--ci)
  exec unshare -m --propagation private "$0" "${cici[@]}" --runtime "$runtime" --suites "$suites" \
    --results "$results" "${names[@]}"
fi

test_timeout=${CSRUN_CONFORMANCE_TIMEOUT:-60}
logdir=$results.d
rm -rf "$logdir"
mkdir -p "$logdir" || exit 2
: > "$results" || exit 2
: > "$logdir/timings.txt" || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/suite-runc.XXXXXX") || exit 2
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
# Runs of this script share the tests' cgroup parent and the host: one file
# at a time, across runs (fix helpers run theirs in parallel).
lock=/run/lock/csrun-suite-runc.lock
[ -d /run/lock ] && [ -w /run/lock ] || lock=$work/lock
[ -e "$lock" ] || : >> "$lock"
exec 9< "$lock" || exit 2

# locked CMD...: CMD with the lock held and the cgroup directories before it noted.
locked () {
  local rc
  flock 9
  cgroup_dirs > "$work/cgroups-before"
  top_dirs > "$work/top-before"
  "$@"
  rc=$?
  flock -u 9
  return $rc
}

# test_names FILE: the @test names, in order.
test_names () {
  sed -n 's/^@test "\(.*\)" *{ *$/\1/p' "$integ/$1"
}

# regex_quote STRING: STRING as an anchored bats -f regex.
regex_quote () {
  printf '^%s$' "$(printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g')"
}

# cgroup_dirs: the cgroup directories the tests' cgroupsPath names (they all
# start /runc-cgroups-integration-test), in every hierarchy, deepest first.
cgroup_dirs () {
  find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'runc-cgroups-integration-test*' \
    -prune 2> /dev/null | while read -r d; do find "$d" -depth -type d; done
}

# top_dirs: the directories directly under /sys/fs/cgroup.  helpers.bash's
# create_parent makes its parent cgroup in every controller /proc/cgroups
# lists, with mkdir -p: on a hybrid host that makes plain directories on
# /sys/fs/cgroup's tmpfs (hugetlb, net_cls, ...: no hierarchy mounted there),
# and remove_parent leaves them.  cleanup removes those the tests made (empty,
# not a mount point, not there before), whatever the runtime.
top_dirs () {
  find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d 2> /dev/null | LC_ALL=C sort
}

# cleanup FILE: delete containers a killed test left (bats' ROOT dirs are under
# $work/tmp), then remove the cgroups left behind (empty ones only: rmdir).  A
# container's own cgroup (test-cgroup-N) left behind counts as a failure of
# FILE: a runtime must not leave host state.  Its parents are the tests' to
# remove, which helpers.bash does only in the v1 hierarchies (so on a hybrid
# host runc too leaves unified/runc-cgroups-integration-test): those are
# removed silently, noted in leftovers.txt.
cleanup () {
  local file=$1 state ct d left=()
  for state in "$work"/tmp/bats-run-*/runc.*/state; do
    [ -d "$state" ] || continue
    for ct in $("$runtime" --root "$state" list -q 2> /dev/null); do
      timeout 30 "$runtime" --root "$state" delete -f "$ct" > /dev/null 2>&1
    done
  done
  rm -rf "$work/tmp"
  while read -r d; do
    [ -n "$d" ] || continue
    grep -qxF "$d" "$work/cgroups-before" && continue
    printf '%s\t%s\n' "$file" "$d" >> "$logdir/leftovers.txt"
    case ${d##*/} in test-cgroup-*) left+=("$d") ;; esac
    rmdir "$d" 2> /dev/null || echo "suite-runc.sh: cannot remove $d" >&2
  done < <(cgroup_dirs)
  if [ ${#left[@]} -gt 0 ]; then
    printf 'fail\t%s:(cgroups left behind)\t%s\n' "$file" "${left[*]}" >> "$results"
  fi
  while read -r d; do
    [ -n "$d" ] || continue
    grep -qxF "$d" "$work/top-before" && continue
    mountpoint -q "$d" && continue
    rmdir "$d" 2> /dev/null && printf '%s\t%s (helpers.bash create_parent)\n' "$file" "$d" >> "$logdir/leftovers.txt"
  done < <(top_dirs)
}

# run_bats TAP TIMEOUT FILE [FILTER]: one bats run under a tty (its raw output
# in TAP); killed when no test finished for TIMEOUT seconds.  Returns 124 then.
run_bats () {
  local tap=$1 t=$2 file=$3 filter=${4:-} cmd pidf=$work/session.pid wpid n last=-1 idle=0 rc=0
  cmd="echo \$\$ > $(printf '%q' "$pidf"); exec bats -t"
  [ -n "$filter" ] && cmd+=" -f $(printf '%q' "$filter")"
  cmd+=" $(printf '%q' "$file")"
  rm -f "$pidf"
  mkdir -p "$work/tmp"
  (cd "$integ" && TMPDIR=$work/tmp RUNC=$runtime exec script -q -e -c "$cmd" /dev/null \
    < /dev/null > "$tap" 2>&1) &
  wpid=$!
  while kill -0 "$wpid" 2> /dev/null; do
    sleep 0.5
    n=$(grep -cE '^(not )?ok [0-9]+ ' "$tap")
    if [ "$n" != "$last" ]; then
      last=$n idle=0
    elif ((++idle >= 2 * t)); then
      # The shell script started is the pty session's leader: its process
      # group holds bats and the tests.
      kill -TERM -- "-$(cat "$pidf")" 2> /dev/null
      sleep 2
      kill -KILL -- "-$(cat "$pidf")" 2> /dev/null
      kill -KILL "$wpid" 2> /dev/null
      rc=124
      break
    fi
  done
  wait "$wpid" 2> /dev/null
  sed -i 's/\r$//' "$tap"
  cleanup "$file"
  return $rc
}

# record FILE TAP: turn TAP lines into result lines; prints the number of the
# last test reported.
record () {
  local file=$1 tap=$2
  gawk -v file="$file" -v res="$results" -v logdir="$logdir" '
    function flush() {
      if (name == "") return
      if (status == "fail") {
        lf = logdir "/" file ":" gensub("/", "_", "g", name) ".log"
        printf "%s", body > lf
        close(lf)
        if (detail == "") detail = "see " lf
      }
      printf "%s\t%s:%s\t%s\n", status, file, name, detail >> res
      name = ""
    }
    /^(not )?ok [0-9]+ / {
      flush()
      status = ($1 == "ok") ? "pass" : "fail"
      line = $0
      sub(/^(not )?ok [0-9]+ /, "", line)
      n = ($1 == "ok") ? $2 : $3
      detail = ""
      body = ""
      if (status == "pass" && match(line, / # skip( |$)/)) {
        status = "skip"
        detail = substr(line, RSTART + 8)
        if (detail ~ /^\(.*\)$/) detail = substr(detail, 2, length(detail) - 2)
        line = substr(line, 1, RSTART - 1)
      }
      name = line
      last = n
      next
    }
    /^# / {
      body = body substr($0, 3) "\n"
      if (status == "fail" && detail == "" && $0 ~ /failed/) {
        detail = gensub(/^#[ \t]*/, "", 1, $0)
        if (where != "") detail = where ": " detail
      }
      if (match($0, /line [0-9]+\)/)) where = substr($0, RSTART, RLENGTH - 1)
      next
    }
    END { flush(); print last + 0 }
  ' "$tap"
}

# run_file FILE: every test of FILE.
run_file () {
  local file=$1 tap=$logdir/$1.tap start end last all i rc=0 why=timeout
  start=$(date +%s)
  run_bats "$tap" "$test_timeout" "$file" || rc=$?
  last=$(record "$file" "$tap")
  mapfile -t all < <(test_names "$file")
  if [ "$last" -lt ${#all[@]} ]; then
    # Killed: the test in progress hung.  (Or bats stopped by itself.)
    [ $rc = 124 ] || why="no result (bats stopped: see $tap)"
    printf 'fail\t%s:%s\t%s\n' "$file" "${all[$last]}" "$why" >> "$results"
    for ((i = last + 1; i < ${#all[@]}; i++)); do
      run_one "$file" "${all[$i]}" "$tap.$i"
    done
  fi
  end=$(date +%s)
  printf '%s\t%s\n' "$file" $((end - start)) >> "$logdir/timings.txt"
  echo "suite-runc.sh: $file: $((end - start))s" >&2
}

# run_one FILE NAME [TAP]: one test.
run_one () {
  local file=$1 name=$2 tap=${3:-$logdir/$1:${2//\//_}.tap} last rc=0 why=timeout
  run_bats "$tap" "$test_timeout" "$file" "$(regex_quote "$name")" || rc=$?
  last=$(record "$file" "$tap")
  [ $rc = 124 ] || why="no result (no such test, or bats failed: see $tap)"
  [ "$last" -ge 1 ] || printf 'fail\t%s:%s\t%s\n' "$file" "$name" "$why" >> "$results"
}

if [ ${#names[@]} -eq 0 ]; then
  for f in "$integ"/*.bats; do
    f=$(basename "$f")
    if [ $ci = 1 ] && [[ " $CI_SKIP_FILES " == *" $f "* ]]; then
      continue
    fi
    names+=("$f")
  done
fi
for n in "${names[@]}"; do
  case $n in
    *.bats:*)
      f=${n%%.bats:*}.bats
      [ -f "$integ/$f" ] || { echo "suite-runc.sh: no such test file: $f" >&2; exit 2; }
      locked run_one "$f" "${n#*.bats:}"
      ;;
    *)
      f=${n%.bats}.bats
      [ -f "$integ/$f" ] || { echo "suite-runc.sh: no such test file: $f" >&2; exit 2; }
      locked run_file "$f"
      ;;
  esac
done
awk -F'\t' '{ n[$1]++ } END { printf "suite-runc.sh: %d pass, %d fail, %d skip\n", n["pass"], n["fail"], n["skip"] }' \
  "$results" >&2
exit 0
