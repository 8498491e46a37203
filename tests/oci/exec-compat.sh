#!/bin/bash
# `csrun exec` as runc and crun do it (runc's exec.bats, crun's
# test_exec.py): the exec'd process starts from the container's process
# (its capabilities, rlimits), --cap/--no-new-privs/--user/--additional-gids/
# --env/--cwd change it, --process reads a pipe, a paused container needs
# --ignore-paused, --cgroup picks a sub-cgroup, runtime failures exit 255.
# Runs as root and as an unprivileged user; what needs a cgroup or
# setgroups runs as root only.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT
. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
status_of () { "${C[@]}" state "$1" 2>/dev/null | json_get /dev/stdin 'j["status"]' 2>/dev/null; }
# The capability masks of /proc/self/status, as "CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs".
STATUS='import re; s = open("/proc/self/status").read(); print(" ".join(re.search(k + r":\s*(\S+)", s).group(1) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")))'
CGROUP=
is_root && CGROUP='c["linux"]["cgroupsPath"] = "/csrun-exec-test-'$$'/e1"'
make_bundle "$T/b" "$(args 'import time; time.sleep(120)'); c[\"process\"][\"capabilities\"] = {k: [\"CAP_KILL\", \"CAP_CHOWN\"] for k in (\"bounding\", \"effective\", \"permitted\")}; c[\"process\"][\"rlimits\"] = [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 321, \"hard\": 321}]; c[\"process\"][\"noNewPrivileges\"] = False; $CGROUP"
"${C[@]}" run -d -b "$T/b" e1 >"$T/run.out" 2>&1 </dev/null ||
  not_ok "run -d the container" "$(cat "$T/run.out")"
pid=$("${C[@]}" state e1 | json_get /dev/stdin 'j["pid"]')

# ---------------------------------------------------------------- the container's process
init_caps=$(python3 - "$pid" <<'PYEOF'
import re, sys
s = open("/proc/%s/status" % sys.argv[1]).read()
print(" ".join(re.search(k + r":\s*(\S+)", s).group(1) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")))
PYEOF
)
out=$("${C[@]}" exec e1 "$PY" -c "$STATUS" 2>&1)
if [ "$out" = "$init_caps" ] && [[ $out == "0000000000000000 0000000000000021 0000000000000021 0000000000000021 0000000000000000 0" ]]; then
  ok "exec: the process has the container's capabilities (CAP_CHOWN, CAP_KILL)"
else
  not_ok "exec: the process has the container's capabilities" "exec: $out" "init: $init_caps"
fi
out=$("${C[@]}" exec e1 "$PY" -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE))' 2>&1)
[ "$out" = "(321, 321)" ] && ok "exec: the container's rlimits apply" || not_ok "exec: rlimits" "$out"
out=$("${C[@]}" exec --cap CAP_SYS_ADMIN --cap CAP_NET_RAW e1 "$PY" -c "$STATUS" 2>&1)
[ "$out" = "0000000000000000 0000000000202021 0000000000202021 0000000000202021 0000000000000000 0" ] &&
  ok "exec --cap adds to the bounding, effective and permitted sets" || not_ok "exec --cap" "$out"
out=$("${C[@]}" exec --cap CAP_NOSUCH e1 "$PY" -c "$STATUS" 2>"$T/cap.err")
[ "$out" = "$init_caps" ] && grep -q "CAP_NOSUCH" "$T/cap.err" &&
  ok "exec --cap with an unknown name: a warning, ignored (crun)" || not_ok "exec --cap CAP_NOSUCH" "$out" "$(cat "$T/cap.err")"
out=$("${C[@]}" exec --no-new-privs e1 "$PY" -c "$STATUS" 2>&1)
[[ $out == *" 1" ]] && ok "exec --no-new-privs sets no_new_privs" || not_ok "exec --no-new-privs" "$out"
out=$("${C[@]}" exec -e FOO=bar --env X=y --cwd /tmp e1 "$PY" -c 'import os; print(os.environ["FOO"], os.environ["X"], os.getcwd(), "PATH" in os.environ)' 2>&1)
[ "$out" = "bar y /tmp True" ] && ok "exec --env adds to the container's environment, --cwd" ||
  not_ok "exec --env --cwd" "$out"
out=$("${C[@]}" exec --process <(printf '{"args": ["%s", "-c", "print(42)"], "cwd": "/", "user": {"uid": 0, "gid": 0}}' "$PY") e1 2>&1)
[ "$out" = 42 ] && ok "exec --process /dev/fd/N reads a pipe" || not_ok "exec --process from a pipe" "$out"
out=$("${C[@]}" exec --user 0x1 e1 true 2>&1)
rc=$?
[ "$rc" = 255 ] && [[ $out == *"--user"* ]] && ok "exec --user with a non-number: exit 255, says why" ||
  not_ok "exec --user 0x1" "exit $rc: $out"

# ---------------------------------------------------------------- runtime errors: 255 (runc)
out=$("${C[@]}" exec no-such-ctr true 2>&1)
rc=$?
[ "$rc" = 255 ] && ok "exec into a missing container exits 255" || not_ok "exec no-such-ctr" "exit $rc: $out"
out=$("${C[@]}" exec e1 /no/such/program 2>&1)
rc=$?
[ "$rc" = 255 ] && [[ $out == *"/no/such/program"* ]] && ok "exec of a missing program exits 255 and names it" ||
  not_ok "exec of a missing program" "exit $rc: $out"
out=$("${C[@]}" exec -d e1 /no/such/program 2>&1)
rc=$?
[ "$rc" = 255 ] && ok "exec -d of a missing program exits 255" || not_ok "exec -d of a missing program" "exit $rc: $out"
out=$("${C[@]}" exec --pid-file "$T/no/such/dir/pid" e1 true 2>&1)
rc=$?
[ "$rc" = 255 ] && ok "exec --pid-file in a missing directory exits 255" || not_ok "exec --pid-file in a missing directory" "exit $rc: $out"
"${C[@]}" exec e1 "$PY" -c 'raise SystemExit(254)'
rc=$?
[ "$rc" = 254 ] && ok "the process's own status still passes through (254)" || not_ok "exit 254" "exit $rc"
"${C[@]}" exec --pid-file "$T/x.pid" -d e1 "$PY" -c 'import time; time.sleep(2)'
xp=$(cat "$T/x.pid" 2>/dev/null)
[ -n "$xp" ] && [ "$xp" != "$pid" ] && [ -d "/proc/$xp" ] && ok "exec -d --pid-file: the new process's pid" ||
  not_ok "exec -d --pid-file" "pid file '$xp', init $pid"

# ---------------------------------------------------------------- terminals without --console-socket
# runc: `run` and `exec -t` in the foreground give the process a terminal of
# its own and copy it to their stdio (tty.bats).
TTYPROBE='import os; print(*[os.readlink("/proc/self/fd/%d" % i) for i in range(3)], os.isatty(0)); raise SystemExit(5)'
make_bundle "$T/bt" "$(args "$TTYPROBE"); c[\"process\"][\"terminal\"] = True"
out=$("${C[@]}" run -b "$T/bt" t1 </dev/null 2>&1)
rc=$?
out=${out//$'\r'/}
[ "$rc" = 5 ] && [ "$out" = "/dev/pts/0 /dev/pts/0 /dev/pts/0 True" ] &&
  ok "run with process.terminal and no --console-socket: a terminal, copied to stdout" ||
  not_ok "run with a terminal without --console-socket" "exit $rc: $out"
out=$("${C[@]}" exec -t e1 "$PY" -c "$TTYPROBE" </dev/null 2>&1)
rc=$?
out=${out//$'\r'/}
[ "$rc" = 5 ] && [[ $out == "/dev/pts/"*" True" ]] && ok "exec -t without --console-socket: a terminal, copied to stdout" ||
  not_ok "exec -t without --console-socket" "exit $rc: $out"
out=$(printf 'hello\n' | "${C[@]}" exec -t e1 "$PY" -c 'print("got", input())' 2>&1)
[[ ${out//$'\r'/} == *"got hello"* ]] && ok "exec -t: our stdin reaches the terminal" || not_ok "exec -t stdin" "$out"
# More input than a terminal buffers, while its echo flows back.
out=$(python3 -c 'print("\n".join("x" * 30 for _ in range(5000)))' |
  "${C[@]}" exec -t e1 "$PY" -c 'print("total", sum(len(input()) for _ in range(5000)))' 2>&1 | tail -c 100)
[[ ${out//$'\r'/} == *"total 150000"* ]] && ok "exec -t: 150 kB of input arrive whole" ||
  not_ok "exec -t: a lot of input" "$out"
# A reader that goes away: the terminal is drained into nothing, the status still passes.
"${C[@]}" exec -t e1 "$PY" -c 'import sys
for i in range(20000): print("x" * 100)
sys.stdout.flush(); raise SystemExit(7)' </dev/null 2>/dev/null | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" = 7 ] && ok "exec -t: stdout closed early, the process still finishes (status 7)" ||
  not_ok "exec -t with stdout closed early" "exit $rc"
out=$("${C[@]}" exec -t -d e1 true 2>&1)
rc=$?
[ "$rc" = 255 ] && [[ $out == *"--console-socket"* ]] && ok "exec -t -d without --console-socket is refused" ||
  not_ok "exec -t -d without --console-socket" "exit $rc: $out"
if command -v script >/dev/null; then
  # With a terminal as stdin (script(1) makes one): it is raw meanwhile, and restored.
  out=$(SHELL=/bin/sh script -q -e -c "stty -g; ${C[*]} exec -t e1 $PY -c 'print(42)'; stty -g" /dev/null 2>&1 </dev/null)
  out=${out//$'\r'/}
  a=$(sed -n 1p <<<"$out") b=$(sed -n 3p <<<"$out")
  [[ $(sed -n 2p <<<"$out") == *42 ]] && [ -n "$a" ] && [ "$a" = "$b" ] &&
    ok "exec -t from a terminal: output arrives, the terminal's settings are restored" ||
    not_ok "exec -t from a terminal" "$out"
else
  skip "exec -t from a terminal" "script(1) is not installed"
fi

# ---------------------------------------------------------------- root: groups, pause, --cgroup
if is_root; then
  out=$("${C[@]}" exec --user 1000:1000 --additional-gids 100 -g 65534 e1 "$PY" -c 'import os; print(os.getuid(), os.getgid(), *sorted(os.getgroups()))' 2>&1)
  [ "$out" = "1000 1000 100 65534" ] && ok "exec --user UID:GID --additional-gids" || not_ok "exec --additional-gids" "$out"
  out=$("${C[@]}" exec --user 1000 e1 "$PY" -c 'import os; print(os.getuid(), os.getgid())' 2>&1)
  [ "$out" = "1000 0" ] && ok "exec --user UID keeps the container's gid (runc)" || not_ok "exec --user UID" "$out"

  out=$("${C[@]}" exec -t --user 1000:100 e1 "$PY" -c 'import os; s = os.fstat(0); print(s.st_uid)' </dev/null 2>&1)
  [ "${out//$'\r'/}" = 1000 ] && ok "exec -t --user 1000: the process's user owns its terminal (runc)" ||
    not_ok "exec -t --user 1000: terminal owner" "$out"

  out=$("${C[@]}" exec --cgroup .. e1 true 2>&1)
  rc=$?
  [ "$rc" = 255 ] && [[ $out == *".. is not a sub cgroup path"* ]] && ok "exec --cgroup .. is refused" ||
    not_ok "exec --cgroup .." "exit $rc: $out"
  out=$("${C[@]}" exec --cgroup nonexistent e1 true 2>&1)
  [[ $out == *"/nonexistent/cgroup.procs: no such file"* ]] && ok "exec --cgroup into a missing sub-cgroup names it" ||
    not_ok "exec --cgroup nonexistent" "$out"
  out=$("${C[@]}" exec --cgroup whaaat:/ e1 true 2>&1)
  [[ $out == *"unknown controller whaaat"* ]] && ok "exec --cgroup with an unknown controller" ||
    not_ok "exec --cgroup whaaat:/" "$out"
  sub=
  for d in /sys/fs/cgroup/unified/csrun-exec-test-$$/e1 /sys/fs/cgroup/csrun-exec-test-$$/e1 /sys/fs/cgroup/pids/csrun-exec-test-$$/e1; do
    [ -d "$d" ] && mkdir -p "$d/sub" && sub=1
  done
  out=$("${C[@]}" exec --cgroup sub e1 cat /proc/self/cgroup 2>&1)
  [ -n "$sub" ] && [[ $out == *"/sub"* ]] && ok "exec --cgroup sub joins the sub-cgroup" ||
    not_ok "exec --cgroup sub" "$out"

  if "${C[@]}" pause e1 2>"$T/pause.err"; then
    out=$("${C[@]}" exec e1 true 2>&1)
    rc=$?
    [ "$rc" = 255 ] && [[ $out == *"paused"*"--ignore-paused"* ]] && ok "exec into a paused container is refused" ||
      not_ok "exec into a paused container" "exit $rc: $out"
    "${C[@]}" exec --ignore-paused e1 "$PY" -c 'print("ran")' >"$T/ign.out" 2>&1 &
    ign=$!
    sleep 0.5
    "${C[@]}" resume e1
    wait "$ign"
    rc=$?
    [ "$rc" = 0 ] && [ "$(cat "$T/ign.out")" = ran ] && ok "exec --ignore-paused runs once resumed" ||
      not_ok "exec --ignore-paused" "exit $rc: $(cat "$T/ign.out")"
  else
    not_ok "pause" "$(cat "$T/pause.err")"
  fi
  "${C[@]}" delete --force e1 >/dev/null 2>&1
  for d in /sys/fs/cgroup/*/csrun-exec-test-$$/e1/sub /sys/fs/cgroup/csrun-exec-test-$$/e1/sub /sys/fs/cgroup/*/csrun-exec-test-$$ /sys/fs/cgroup/csrun-exec-test-$$; do
    [ -d "$d" ] && rmdir "$d" 2>/dev/null
  done
fi
done_testing
