# tests/lib/tap.sh — a tiny TAP producer for the integration tests (bash).
#
#   . "$CSRUN_SRCDIR/tests/lib/tap.sh"
#   ok "description"                  # record a pass
#   not_ok "description" "details"    # record a failure (details become diagnostics)
#   check "description" cmd args...   # pass when the command exits 0
#   skip "description" "reason"       # a skip; a failure under CSRUN_MUST_WORK=1
#   done_testing                      # print the plan; exit non-zero if anything failed
#
# Helpers: csrun (the built binary, with a per-user test cache), tmpdir (a
# directory removed at exit), json_get FILE EXPR (host python3 reads the JSON).

set -u
TAP_N=0
TAP_FAILED=0
: "${CSRUN:?CSRUN must name the csrun binary (make check sets it)}"
: "${CSRUN_SRCDIR:?}"
: "${CSRUN_TEST_ROOTFS:?}"
export CSRUN_CACHE_DIR="${CSRUN_CACHE_DIR:-${CSRUN_BUILDDIR:-/tmp}/tests/cache-$(id -u)}"
export CSRUN_ROOTFS="$CSRUN_TEST_ROOTFS"

ok () {
  TAP_N=$((TAP_N + 1))
  echo "ok $TAP_N - $1"
}

not_ok () {
  TAP_N=$((TAP_N + 1))
  TAP_FAILED=$((TAP_FAILED + 1))
  echo "not ok $TAP_N - $1"
  shift
  local line
  for line in "$@"; do
    printf '%s\n' "$line" | head -c 4000 | sed 's/^/# /'
    echo
  done
}

check () {
  local desc=$1
  shift
  local out
  if out=$("$@" 2>&1); then
    ok "$desc"
  else
    not_ok "$desc" "command: $*" "$out"
  fi
}

skip () {
  # A reason starting with "n/a:" marks a test of another mode (root-only
  # when unprivileged, ...): the suite's other pass runs it, so it may skip.
  if [ "${CSRUN_MUST_WORK:-0}" = 1 ] && [ "${2#n/a:}" = "$2" ]; then
    not_ok "$1" "skipped, but CSRUN_MUST_WORK=1: $2"
  else
    TAP_N=$((TAP_N + 1))
    echo "ok $TAP_N - $1 # SKIP $2"
  fi
}

diag () {
  printf '%s\n' "$*" | sed 's/^/# /'
}

done_testing () {
  echo "1..$TAP_N"
  [ "$TAP_FAILED" -eq 0 ]
}

# Every temporary directory lives under one base made here (not in a
# subshell), so the EXIT trap can remove them all.
# They are world-searchable: some tests hand them to other users (nobody).
TAP_BASE=$(mktemp -d "${TMPDIR:-/tmp}/csrun-test.XXXXXX")
chmod 755 "$TAP_BASE"
tmpdir () {
  local d
  d=$(mktemp -d "$TAP_BASE/d.XXXXXX") && chmod 755 "$d" && echo "$d"
}
_tap_cleanup () {
  chmod -R u+rwX "$TAP_BASE" 2>/dev/null
  rm -rf "$TAP_BASE"
}
trap _tap_cleanup EXIT

csrun () {
  "$CSRUN" "$@"
}

# json_get FILE EXPR: evaluate the Python expression EXPR with `j` bound to the
# parsed JSON document in FILE and print the result.
json_get () {
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# expect_json FILE DESC WANT-RC EXPR WANT [FILE...]: a pass when $rc is
# WANT-RC and EXPR (a Python expression of j, FILE's JSON document) prints
# WANT; a failure shows both, FILE's head and the other FILEs.
expect_json () {
  local file=$1 desc=$2 want_rc=$3 expr=$4 want=$5 got
  shift 5
  got=$(json_get "$file" "$expr" 2>&1)
  if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc (want $want_rc)" "got:  $got" "want: $want" \
      "$(head -c 3000 "$file")" "$(cat "$@" 2>/dev/null)"
  fi
}

is_root () {
  [ "$(id -u)" = 0 ]
}
