#!/bin/bash
# Run the OCI conformance suites present (crun's tests, runc's bats, runtime-tools'
# validation) against csrun, check that no test changed the host, and compare the
# results with the known failures in tests/conformance/expected-SUITE.txt.
#
#   run.sh [--runtime BIN] [--suite crun|runc|runtime-tools]... [--suites DIR]
#          [--out DIR] [--compare]
#
# --runtime   the OCI runtime under test (default: this tree's ./csrun)
# --suite     run only this suite (repeatable; default: all three)
# --suites    where fetch-suites.sh put them (default $CSRUN_SUITES_DIR, else
#             /var/cache/csrun-suites)
# --out       results directory (default $CSRUN_CONFORMANCE_OUT, else a new
#             directory under ${TMPDIR:-/tmp}); SUITE.txt there has one line per test
#             (STATUS<TAB>NAME<TAB>DETAIL), SUITE.txt.d/ the logs
# --compare   also run each suite against its reference runtime(s) installed (crun's
#             tests: crun; runc's bats: runc; runtime-tools: both), for the
#             side-by-side table; does not change the exit status
#
# Per suite: a host-state snapshot (host-state.sh) before and after, the suite run
# under `unshare -m --propagation private`, unexpected failures re-run once alone (a
# busy machine), then: a failure or skip not listed in expected-SUITE.txt fails the run,
# a listed one that now passes is printed as "now passes: remove from expected", and
# any host change fails the run.  A listed test whose reason starts with "flaky:"
# may pass or fail.  tests/conformance/select-SUITE.txt, if present, lists the files
# or tests of that suite to run (one per line, # comments), to keep CI's time.
# Exit 0 all as expected, 1 otherwise, 2 usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# The snapshot command (tests/integration/conformance-harness.sh substitutes one).
host_state=${CSRUN_CONFORMANCE_HOST_STATE:-$here/host-state.sh}

usage () {
  sed -n '6,13p' "$0" >&2
  exit 2
}

runtime=$top/csrun
suites_dir=${CSRUN_SUITES_DIR:-/var/cache/csrun-suites}
out=${CSRUN_CONFORMANCE_OUT:-}
compare=no
only=()
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=${2:-}; shift 2 || usage ;;
    --suite) only+=("${2:-}"); shift 2 || usage ;;
    --suites) suites_dir=${2:-}; shift 2 || usage ;;
    --out) out=${2:-}; shift 2 || usage ;;
    --compare) compare=yes; shift ;;
    -h | --help) sed -n '2,24p' "$0"; exit 0 ;;
    *) usage ;;
  esac
done
all_suites=(crun runc runtime-tools)
[ ${#only[@]} -gt 0 ] || only=("${all_suites[@]}")
for s in "${only[@]}"; do
  case " ${all_suites[*]} " in *" $s "*) ;; *) echo "run.sh: unknown suite '$s' (crun, runc, runtime-tools)" >&2; exit 2 ;; esac
done
case $runtime in /*) ;; */*) runtime=$PWD/$runtime ;; *) runtime=$(command -v "$runtime" || echo "$runtime") ;; esac
if [ ! -x "$runtime" ]; then
  echo "run.sh: runtime not executable: $runtime (build the tree, or --runtime BIN)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "run.sh: run it as root (the suites need root; they run in a private mount namespace)" >&2
  exit 2
fi
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/csrun-conformance.XXXXXX") || exit 2
mkdir -p "$out" || exit 2

status=0
rows=()
failing=()
declare -A absent

# run_suite SUITE RUNTIME TAG: results in $out/SUITE-TAG.txt; prints nothing on success;
# returns 2 when the suite cannot run here (its one-line reason in $out/SUITE-TAG.why).
run_suite () {
  local s=$1 rt=$2 tag=$3 res=$out/$1-$3.txt rc=0 names=() select=()
  # select-SUITE.txt, when its owner keeps one, names the files/tests that run (the
  # CI time budget); without it the whole suite runs.
  if [ -f "$here/select-$s.txt" ]; then
    mapfile -t select < <(grep -v -E '^(#|[[:space:]]*$)' "$here/select-$s.txt" | cut -f1)
  fi
  CSRUN_SUITE_CRUN_NS=1 unshare -m --propagation private "$here/suite-$s.sh" --runtime "$rt" \
    --suites "$suites_dir" --results "$res" "${select[@]}" 2> "$out/$s-$tag.stderr" < /dev/null || rc=$?
  if [ "$rc" = 2 ]; then
    grep . "$out/$s-$tag.stderr" | tail -n 1 > "$out/$s-$tag.why"
    return 2
  fi
  # Re-run what failed unexpectedly (not in expected-SUITE.txt, or listed "flaky:"),
  # once, alone: the suite run under load can time out.  Known failures are not re-run.
  local expected=$here/expected-$s.txt
  [ -f "$expected" ] || expected=/dev/null
  mapfile -t names < <(awk -F'\t' 'FILENAME == ARGV[1] { if (!/^#/ && NF && $2 !~ /^flaky:/) known[$1] = 1; next }
    $1 == "fail" && !($2 in known) { print $2 }' "$expected" "$res")
  if [ ${#names[@]} -gt 0 ]; then
    CSRUN_SUITE_CRUN_NS=1 unshare -m --propagation private "$here/suite-$s.sh" --runtime "$rt" \
      --suites "$suites_dir" --results "$res.rerun" "${names[@]}" 2>> "$out/$s-$tag.stderr" < /dev/null
    if [ -f "$res.rerun" ]; then
      # A test that passes (or skips) on the re-run counts as such; the first log is kept.
      awk -F'\t' 'FILENAME == ARGV[1] { again[$2] = $0; next }
        ($1 == "fail" && ($2 in again)) { print again[$2]; next } { print }' \
        "$res.rerun" "$res" > "$res.merged" && mv "$res.merged" "$res"
    fi
  fi
  return 0
}

# log_of DIR NAME: the log file of test NAME in a suite's results directory
# (crun: NAME.log; runtime-tools: validation/X.t -> X.log; runc: FILE.bats:TEST -> FILE.bats.tap).
log_of () {
  local d=$1 n=$2 f
  for f in "$d/$n.log" "$d/$(basename "${n%.t}").log" "$d/${n%%:*}.tap"; do
    [ -f "$f" ] && { echo "$f"; return; }
  done
}

count () { awk -F'\t' -v s="$1" '$1 == s' "$2" | wc -l; }

for s in "${only[@]}"; do
  if [ ! -x "$here/suite-$s.sh" ]; then
    absent[$s]="not run: tests/conformance/suite-$s.sh missing"
    continue
  fi
  "$host_state" "$out/$s.host-before"
  rc=0
  t0=$SECONDS
  run_suite "$s" "$runtime" csrun || rc=$?
  took=$((SECONDS - t0))
  if [ "$rc" = 2 ]; then
    why=$(cat "$out/$s-csrun.why")
    case $s in
      runtime-tools) absent[$s]="not run: ${why:-source not present}; set CSRUN_RUNTIME_TOOLS_SRC and run fetch-suites.sh" ;;
      *) absent[$s]="not run: ${why:-suite not present}; run tests/conformance/fetch-suites.sh $suites_dir" ;;
    esac
    continue
  fi
  "$host_state" "$out/$s.host-after"
  host_changed=no
  if ! "$host_state" --diff "$out/$s.host-before" "$out/$s.host-after" > "$out/$s.host-diff"; then
    host_changed=yes
    status=1
  fi
  res=$out/$s-csrun.txt
  expected=$here/expected-$s.txt
  if [ ! -f "$expected" ]; then
    : > "$out/empty-expected"
    expected=$out/empty-expected
  fi
  # Unexpected: fail or skip not listed.  Now passing: listed, passed.
  awk -F'\t' 'FILENAME == ARGV[1] { if (!/^#/ && NF) known[$1] = 1; next }
    ($1 != "pass" && !($2 in known)) { print "unexpected " $1 ": " $2 " -- " $3 }' \
    "$expected" "$res" > "$out/$s.unexpected"
  awk -F'\t' 'FILENAME == ARGV[1] { if (!/^#/ && NF && $2 !~ /^flaky:/) known[$1] = 1; next }
    ($1 == "pass" && ($2 in known)) { print "now passes: remove from expected-'"$s"'.txt: " $2 }' \
    "$expected" "$res" > "$out/$s.nowpass"
  nexp=$(awk -F'\t' 'FILENAME == ARGV[1] { if (!/^#/ && NF) known[$1] = 1; next } ($1 != "pass" && ($2 in known))' "$expected" "$res" | wc -l)
  [ -s "$out/$s.unexpected" ] && status=1
  note=
  [ "$host_changed" = yes ] && note=" HOST STATE CHANGED"
  rows+=("$(printf '%-14s | %-8s | %5s | %5s | %5s | %8s | %5ss%s' "$s" csrun "$(count pass "$res")" \
    "$(count fail "$res")" "$(count skip "$res")" "$nexp" "$took" "$note")")
  while IFS= read -r l; do failing+=("$s: $l"); done < "$out/$s.unexpected"
  while IFS= read -r l; do failing+=("$s: $l"); done < "$out/$s.nowpass"
  if [ "$host_changed" = yes ]; then
    failing+=("$s: the host changed during the suite (diff in $out/$s.host-diff):")
    while IFS= read -r l; do failing+=("    $l"); done < <(grep '^[-+][^-+]' "$out/$s.host-diff" | head -n 20)
  fi
  if [ "$compare" = yes ]; then
    # The reference runtimes each suite is meant for (as in issue 12's table).
    case $s in crun) refs="crun" ;; runc) refs="runc" ;; *) refs="crun runc" ;; esac
    for ref in $refs; do
      refbin=$(command -v "$ref") || continue
      rc=0
      t0=$SECONDS
      run_suite "$s" "$refbin" "$ref" || rc=$?
      [ "$rc" = 0 ] || continue
      r=$out/$s-$ref.txt
      rows+=("$(printf '%-14s | %-8s | %5s | %5s | %5s | %8s | %5ss' "$s" "$ref" "$(count pass "$r")" \
        "$(count fail "$r")" "$(count skip "$r")" - "$((SECONDS - t0))")")
    done
  fi
done

echo
printf '%-14s | %-8s | %5s | %5s | %5s | %8s | %6s\n' suite runtime pass fail skip expected time
echo "---------------+----------+-------+-------+-------+----------+-------"
for r in "${rows[@]}"; do echo "$r"; done
for s in "${only[@]}"; do
  [ -n "${absent[$s]:-}" ] && printf '%-14s | %s\n' "$s" "${absent[$s]}"
done
if [ ${#failing[@]} -gt 0 ]; then
  echo
  for l in "${failing[@]}"; do echo "$l"; done
  # What each unexpected failure printed last (the CI log shows only this much).
  for s in "${only[@]}"; do
    [ -s "$out/$s.unexpected" ] || continue
    sed -n 's/^unexpected [a-z]*: \(.*\) -- .*$/\1/p' "$out/$s.unexpected" | head -n 8 | while IFS= read -r name; do
      log=$(log_of "$out/$s-csrun.txt.d" "$name")
      [ -n "$log" ] || continue
      echo "---- $s: $name: the end of $log"
      tail -n 12 "$log" | cut -c1-200
    done
  done
fi
echo
echo "results and logs: $out"
exit $status
