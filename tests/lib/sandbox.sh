# tests/lib/sandbox.sh — the frame of the csrun sandbox tests (after tap.sh):
#   . "$CSRUN_SRCDIR/tests/lib/sandbox.sh"
# T (a temporary directory), CSRUN_SANDBOX_DIR=$T/sbx (also $SBX), CSRUN_CHECKPOINT_DIR=$T/ck
# (also $CK: no test reads or collects the user's checkpoints), and at exit every sandbox
# there removed with rm --force (nothing of ours stays alive) after the commands a test puts in
# sbx_cleanup_hooks.  Helpers: wait_until SECONDS CMD... (poll CMD every 0.1 s until it
# succeeds: a generous bound), gone PID (exited, or a zombie), no_dir PATH, jget FILE EXPR
# (json_get with its errors), kill_keeper BOX (SIGKILL the keeper of the sandbox BOX, then wait
# 10 s at most for its jail's init to go: 0 when it went).

T=$(tmpdir)
export CSRUN_SANDBOX_DIR="$T/sbx"
export CSRUN_CHECKPOINT_DIR="$T/ck"
SBX="$CSRUN_SANDBOX_DIR"
CK="$CSRUN_CHECKPOINT_DIR"
sbx_cleanup_hooks=()

_sbx_cleanup () {
  local h d
  for h in "${sbx_cleanup_hooks[@]}"; do
    eval "$h"
  done
  for d in "$SBX"/*/; do
    [ -d "$d" ] && "$CSRUN" sandbox rm --force "$(basename "$d")" >/dev/null 2>&1
  done
}
trap '_sbx_cleanup; _tap_cleanup' EXIT

wait_until () {
  local n=$(($1 * 10))
  shift
  while [ $n -gt 0 ]; do
    "$@" && return 0
    sleep 0.1
    n=$((n - 1))
  done
  return 1
}
gone () { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
no_dir () { [ ! -e "$1" ]; }
jget () { json_get "$1" "$2" 2>&1; }
kill_keeper () {
  local kp init
  csrun sandbox inspect "$1" >"$T/kill-keeper.json" 2>&1
  kp=$(jget "$T/kill-keeper.json" 'j["keeper_pid"]')
  init=$(jget "$T/kill-keeper.json" 'j["init_pid"]')
  kill -KILL "$kp"
  wait_until 10 gone "$init"
}
