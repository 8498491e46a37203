#!/bin/bash
# csrun sandbox exec --detach / wait / exec ls, exec -i and -t, create --with and --disk
# (csrun-sandbox(1)).  Root and rootless.  The pty tests run csrun under script(1) and tmux (a
# private server); the --with tests download python3-numpy's closure (~25 MB) into a cache of
# their own, as tests/integration/layers.sh does, and skip when apt can't reach the archive.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"
TMUX_SOCK="csrun-sbx-test-$$"
command -v tmux >/dev/null && sbx_cleanup_hooks+=('tmux -L "$TMUX_SOCK" kill-server >/dev/null 2>&1')

# exec_state BOX EXEC: its state in exec ls --json ("" when not listed).
exec_state () {
  csrun sandbox exec ls "$1" --json 2>/dev/null |
    python3 -c 'import json,sys; print(next((e["state"] for e in json.load(sys.stdin) if e["exec"] == sys.argv[1]), ""))' "$2"
}
is_state () { [ "$(exec_state "$1" "$2")" = "$3" ]; }

id=$(csrun sandbox create --name box --idle-timeout 600s 2>"$T/c.err")
if [ -z "$id" ]; then
  not_ok "create a sandbox" "$(cat "$T/c.err")"
  done_testing
  exit
fi

# ---------------------------------------------------------------- exec --detach, wait
x=$(csrun sandbox exec --detach box -- python3 -c '
import sys, time
print("out 1", flush=True)
print("err 1", file=sys.stderr, flush=True)
time.sleep(3)
print("out 2")
sys.exit(5)' 2>"$T/d.err")
rc=$?
st=$(exec_state box "$x")
[ $rc = 0 ] && [[ $x =~ ^[0-9a-f]{16}$ ]] && [ "$st" = running ] && [ -d "$SBX/$id/execs/$x" ] \
  && ok "exec --detach prints a 16-digit exec id at once; exec ls shows it running; its files in execs/ID" \
  || not_ok "exec --detach" "exit $rc, '$x', state '$st'" "$(cat "$T/d.err")" "$(ls -la "$SBX/$id/execs" 2>&1)"
wait_until 10 grep -q "out 1" "$SBX/$id/execs/$x/stdout"
grep -qx "out 1" "$SBX/$id/execs/$x/stdout" && [ "$(stat -c %a "$SBX/$id/execs/$x/stdout")" = 600 ] \
  && ok "its output goes to execs/ID/stdout (0600) as it comes" || not_ok "output file" "$(ls -la "$SBX/$id/execs/$x" 2>&1)"

csrun sandbox wait box "$x" --timeout 0.3s --json >"$T/w0.json" 2>&1
rc=$?
got=$(jget "$T/w0.json" '(j["status"], j["exec"], "still running" in j["error"])')
[ $rc = 124 ] && [ "$got" = "('running', '$x', True)" ] && is_state box "$x" running \
  && ok "wait --timeout while it runs: exit 124, status running; the exec goes on" \
  || not_ok "wait --timeout" "exit $rc" "$got" "$(cat "$T/w0.json")"

csrun sandbox wait box "$x" --json >"$T/w1.json" 2>"$T/w1.err"
rc=$?
got=$(jget "$T/w1.json" '(j["returncode"], j["stdout"], j["stderr"], j["timed_out"], j["signal"], j["exec"], j["status"], j["sandbox"], j["duration_ms"] >= 2000, j["stdout_dropped_bytes"])')
[ $rc = 5 ] && [ "$got" = "(5, 'out 1\nout 2\n', 'err 1\n', False, 0, '$x', 'exited', '$id', True, 0)" ] \
  && ok "wait --json: returncode, stdout, stderr, ... as exec --json; its exit status (5)" \
  || not_ok "wait --json" "exit $rc" "$got" "$(cat "$T/w1.json" "$T/w1.err")"
out=$(csrun sandbox wait box "$x" 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such exec" && [ ! -e "$SBX/$id/execs/$x" ] && [ -z "$(exec_state box "$x")" ] \
  && ok "a result is collected once: its record and files are gone (exit 2 after)" \
  || not_ok "collected once" "exit $rc" "$out" "$(ls -la "$SBX/$id/execs" 2>&1)"

# wait without --json: the output on ours, the exit status ours; an exec that ended before wait.
x=$(csrun sandbox exec -d box -- python3 -c 'import sys; sys.stdout.write("A\n"); sys.stderr.write("B\n"); sys.exit(3)')
wait_until 10 is_state box "$x" exited
csrun sandbox wait box "$x" >"$T/w2.out" 2>"$T/w2.err"
rc=$?
[ $rc = 3 ] && [ "$(cat "$T/w2.out")" = A ] && [ "$(cat "$T/w2.err")" = B ] \
  && ok "wait: an exec that is over already; its stdout on ours, stderr on ours, exit 3" \
  || not_ok "wait plain" "exit $rc" "$(cat "$T/w2.out" "$T/w2.err")"

# A killed one: SIGKILL from another exec.
x=$(csrun sandbox exec -d box -- python3 -c 'import os, time; open("/work/victim.pid", "w").write(str(os.getpid())); time.sleep(60)')
wait_until 10 csrun sandbox exec box -- python3 -c 'import os; os.stat("/work/victim.pid")' 2>/dev/null
csrun sandbox exec box -- python3 -c 'import os, signal; os.kill(int(open("/work/victim.pid").read()), signal.SIGKILL)'
csrun sandbox wait box "$x" --json --timeout 30s >"$T/w3.json" 2>&1
rc=$?
got=$(jget "$T/w3.json" '(j["returncode"], j["signal"], j["timed_out"])')
[ $rc = 137 ] && [ "$got" = "(-9, 9, False)" ] && ok "a detached exec killed (SIGKILL): returncode -9, signal 9, exit 137" \
  || not_ok "killed" "exit $rc" "$got" "$(cat "$T/w3.json")"

# Its own --timeout.
x=$(csrun sandbox exec -d box --timeout 1s -- python3 -c 'import time; print("started", flush=True); time.sleep(60)')
csrun sandbox wait box "$x" --json --timeout 30s >"$T/w4.json" 2>&1
rc=$?
got=$(jget "$T/w4.json" '(j["returncode"], j["timed_out"], j["stdout"], "Command timed out after 1 seconds" in j["stderr"])')
[ $rc = 124 ] && [ "$got" = "(-1, True, 'started\n', True)" ] \
  && ok "exec --detach --timeout: killed after it; wait says timed out (returncode -1, exit 124)" \
  || not_ok "detached timeout" "exit $rc" "$got" "$(cat "$T/w4.json")"

# Bounded: the first and the last half of --max-output, the middle counted.
x=$(csrun sandbox exec -d box --max-output 1000 -- python3 -c 'import sys; sys.stdout.write("<" + "x" * 100000 + ">")')
csrun sandbox wait box "$x" --json --timeout 30s >"$T/w5.json" 2>&1
got=$(jget "$T/w5.json" '(len(j["stdout"]), j["stdout"][0], j["stdout"][-1], j["stdout_dropped_bytes"])')
[ "$got" = "(1000, '<', '>', 99002)" ] \
  && ok "detached output is bounded: head and tail kept (1000 bytes), 99002 dropped bytes counted" \
  || not_ok "bounded" "$got" "$(head -c 300 "$T/w5.json")"

# A missing program: 127 as exec.
x=$(csrun sandbox exec -d box -- no-such-program)
csrun sandbox wait box "$x" --json --timeout 30s >"$T/w6.json" 2>&1
rc=$?
[ $rc = 127 ] && [ "$(jget "$T/w6.json" 'j["not_found"]')" = True ] \
  && ok "a detached exec of a missing program: 127, not_found" || not_ok "127" "exit $rc" "$(cat "$T/w6.json")"

# exec ls: text and JSON; uncollected results are bounded (32 kept, the oldest goes).
first=$(csrun sandbox exec -d box -- python3 -c pass)
for i in $(seq 33); do csrun sandbox exec -d box -- python3 -c pass >/dev/null; done
n_exited () {
  [ "$(csrun sandbox exec ls box --json | python3 -c 'import json,sys; print(sum(e["state"] == "exited" for e in json.load(sys.stdin)))')" = "$1" ]
}
wait_until 30 n_exited 32
n=$(csrun sandbox exec ls box --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>&1)
csrun sandbox exec ls box >"$T/ls.out" 2>&1
[ "$n" = 32 ] && [ -z "$(exec_state box "$first")" ] && head -1 "$T/ls.out" | grep -q "^EXEC *STATE *PID" \
  && grep -q "exited .*exit 0 *python3 -c pass" "$T/ls.out" && [ "$(ls "$SBX/$id/execs" | wc -l)" = 32 ] \
  && ok "exec ls (text, --json); at most 32 uncollected results, the oldest removed with its files" \
  || not_ok "exec ls / bound" "n=$n" "$(head -5 "$T/ls.out")" "$(ls "$SBX/$id/execs" | wc -l)"
csrun sandbox inspect box >"$T/in.json" 2>&1
[ "$(jget "$T/in.json" 'len(j["execs"])')" = 32 ] && ok "inspect lists the detached execs (\"execs\")" \
  || not_ok "inspect execs" "$(jget "$T/in.json" 'j.get("execs")' | head -c 300)"

# Usage errors.
out1=$(csrun sandbox exec -d -i box -- python3 -c pass 2>&1)
rc1=$?
out2=$(csrun sandbox exec -t --json box -- python3 -c pass 2>&1)
rc2=$?
out3=$(csrun sandbox wait box 2>&1)
rc3=$?
[ $rc1 = 2 ] && [ $rc2 = 2 ] && [ $rc3 = 2 ] && echo "$out1" | grep -q -- "--detach can't take -i" \
  && ok "usage errors: --detach with -i, -t with --json, wait without EXEC (exit 2)" \
  || not_ok "usage" "$rc1 $rc2 $rc3" "$out1" "$out2" "$out3"

# Detached execs keep the sandbox busy (the idle timeout does not reclaim it meanwhile).
id2=$(csrun sandbox create --idle-timeout 2s 2>/dev/null)
x=$(csrun sandbox exec -d "$id2" -- python3 -c 'import time; time.sleep(5)')
sleep 3.5
busy=no
[ -d "$SBX/$id2" ] && is_state "$id2" "$x" running && busy=yes
wait_until 40 no_dir "$SBX/$id2"
[ $busy = yes ] && [ ! -e "$SBX/$id2" ] \
  && ok "a running detached exec keeps the sandbox busy past --idle-timeout 2s; idle after it, reclaimed" \
  || not_ok "busy" "busy at 5 s: $busy" "$(ls -la "$SBX" 2>&1)"

# Stopped: refused; a running one is killed by stop and collected after.
x=$(csrun sandbox exec -d box -- python3 -c 'import time; time.sleep(60)')
csrun sandbox stop box >/dev/null 2>&1
out=$(csrun sandbox exec -d box -- python3 -c pass 2>&1)
rc=$?
csrun sandbox wait box "$x" --json --timeout 30s >"$T/w7.json" 2>&1
wrc=$?
[ $rc = 1 ] && echo "$out" | grep -q stopped && [ $wrc = 137 ] \
  && ok "exec --detach into a stopped sandbox: exit 1; stop killed the running one (wait: 137)" \
  || not_ok "stopped" "exit $rc ($out), wait $wrc" "$(cat "$T/w7.json")"
csrun sandbox start box >/dev/null 2>&1

# ---------------------------------------------------------------- exec -i
head -c 1048576 /dev/urandom >"$T/bin.in"
printf '\0\1\2\r\n\377' >>"$T/bin.in"
csrun sandbox exec -i box -- python3 -c 'import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())' <"$T/bin.in" >"$T/bin.out" 2>"$T/bin.err"
rc=$?
[ $rc = 0 ] && cmp -s "$T/bin.in" "$T/bin.out" \
  && ok "exec -i: 1 MiB of binary data through stdin and back, byte for byte" \
  || not_ok "exec -i" "exit $rc" "$(cat "$T/bin.err")" "$(cmp "$T/bin.in" "$T/bin.out" 2>&1)"
out=$(echo data | csrun sandbox exec box -- python3 -c 'import sys; print(repr(sys.stdin.read()))' 2>&1)
[ "$out" = "''" ] && ok "without -i the exec's stdin is /dev/null" || not_ok "no -i" "$out"
out=$(printf 'abc' | csrun sandbox exec -i box --json -- python3 -c 'import sys; print(sys.stdin.read().upper())' 2>&1)
[ "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["stdout"])' 2>&1)" = ABC ] \
  && ok "exec -i --json" || not_ok "-i --json" "$out"

# ---------------------------------------------------------------- exec -t
cat >"$T/tty.py" <<'EOF'
import os, sys
print(os.isatty(0), os.isatty(1), os.isatty(2), os.tcgetpgrp(0) == os.getpgrp(), os.get_terminal_size())
name = input("name? ")
print("hello", name)
sys.exit(4)
EOF
csrun sandbox exec -i box -- python3 -c 'import sys; open("/work/tty.py", "w").write(sys.stdin.read())' <"$T/tty.py"
if ! command -v script >/dev/null; then
  skip "exec -t under script(1)" "no script(1) on this machine"
else
  # A prompt answered through the pty; the caller's terminal settings restored.
  (sleep 2; printf 'Bob\r'; sleep 3) | SHELL=/bin/sh script -q -e -c \
    "stty cols 100 rows 30; stty -g; $CSRUN sandbox exec -t box -- python3 /work/tty.py; echo rc=\$?; stty -g" \
    /dev/null >"$T/tty.out" 2>&1
  tr -d '\r' <"$T/tty.out" >"$T/tty.txt"
  s1=$(sed -n 1p "$T/tty.txt")
  s2=$(tail -1 "$T/tty.txt")
  grep -q "^True True True True os.terminal_size(columns=100, lines=30)$" "$T/tty.txt" \
    && ok "exec -t: stdin, stdout, stderr are a terminal, its controlling one (foreground), the caller's size" \
    || not_ok "exec -t isatty" "$(cat -v "$T/tty.out")"
  grep -q "^name? Bob$" "$T/tty.txt" && grep -q "^hello Bob$" "$T/tty.txt" && grep -q "^rc=4$" "$T/tty.txt" \
    && ok "exec -t: a prompt answered through the pty (echoed), the exit status (4)" \
    || not_ok "exec -t prompt" "$(cat -v "$T/tty.out")"
  [ -n "$s1" ] && [ "$s1" = "$s2" ] && ok "exec -t: the caller's terminal settings are restored (stty -g)" \
    || not_ok "terminal restored" "before '$s1' after '$s2'"
fi
# -t with a pipe for stdin: its end reaches the process as the terminal's end of file.
printf 'one\ntwo' | timeout 60 "$CSRUN" sandbox exec -t box -- python3 -c 'import sys; d = sys.stdin.read(); print("got", repr(d))' >"$T/pipe.out" 2>&1
rc=$?
[ $rc = 0 ] && tr -d '\r' <"$T/pipe.out" | grep -qF "got 'one\\ntwo'" \
  && ok "exec -t, stdin a pipe: its end is the terminal's end of file for the process (no hang)" \
  || not_ok "-t piped stdin" "exit $rc" "$(cat -v "$T/pipe.out")"
if ! command -v tmux >/dev/null; then
  skip "exec -t: SIGWINCH" "no tmux on this machine"
else
  cat >"$T/winch.py" <<'EOF'
import os, signal, sys, time
got = []
signal.signal(signal.SIGWINCH, lambda *a: got.append(1))
c, l = os.get_terminal_size()
open("/work/winch.pid", "w").write(str(os.getpid()))
print("size %dx%d" % (c, l), flush=True)
end = time.time() + 60
while not got and time.time() < end:
    time.sleep(0.05)
c, l = os.get_terminal_size()
print("winch %dx%d" % (c, l), flush=True)
time.sleep(60)
EOF
  csrun sandbox exec -i box -- python3 -c 'import sys; open("/work/winch.py", "w").write(sys.stdin.read())' <"$T/winch.py"
  tm () { tmux -L "$TMUX_SOCK" -f /dev/null "$@"; }
  tm new-session -d -s w -x 80 -y 24 "$CSRUN sandbox exec -t box -- python3 /work/winch.py" 2>"$T/tmux.err"
  pane_has () { tm capture-pane -p -t w 2>/dev/null | grep -q "$1"; }
  wait_until 30 pane_has "size 80x24"
  first=$?
  tm resize-window -t w -x 100 -y 30 2>>"$T/tmux.err"
  wait_until 30 pane_has "winch 100x30"
  second=$?
  [ $first = 0 ] && [ $second = 0 ] \
    && ok "exec -t under tmux: the window's size (80x24), a resize reaches the exec (SIGWINCH, 100x30)" \
    || not_ok "SIGWINCH" "$first $second" "$(tm capture-pane -p -t w 2>&1)" "$(cat "$T/tmux.err")"
  # The caller goes away (its terminal hangs up): the keeper kills the exec.
  alive () { csrun sandbox exec box -- python3 -c 'import os; os.kill(int(open("/work/winch.pid").read()), 0)' 2>/dev/null; }
  alive
  before=$?
  tm kill-server >/dev/null 2>&1
  wait_until 20 eval '! alive'
  after=$?
  [ $before = 0 ] && [ $after = 0 ] && ok "exec -t: the caller's terminal hung up, the exec is killed" \
    || not_ok "hang-up kills the exec" "alive before: $before, gone after: $after"
fi

# ---------------------------------------------------------------- create --disk
for bad in 0 1k nonsense; do
  out=$(csrun sandbox create --disk "$bad" 2>&1)
  rc=$?
  [ $rc = 2 ] || break
done
[ $rc = 2 ] && echo "$out" | grep -q "invalid --disk" && ok "create --disk: 0, 1k, nonsense refused (exit 2)" \
  || not_ok "bad --disk" "exit $rc" "$out"

did=$(csrun sandbox create --name dbox --disk 16M 2>"$T/dc.err")
if [ -z "$did" ]; then
  not_ok "create --disk 16M" "$(cat "$T/dc.err")"
else
  csrun sandbox exec dbox --json -- python3 -c '
import errno, os
open("/work/keep.txt", "w").write("kept")
try:
    with open("/work/big", "wb") as f:
        for i in range(32):
            f.write(b"x" * (1 << 20))
    print("no error")
except OSError as e:
    print(errno.errorcode[e.errno], e.strerror)
    raise SystemExit(9)' >"$T/enospc.json" 2>&1
  got=$(jget "$T/enospc.json" '(j["returncode"], j["stdout"])')
  [ "$got" = "(9, 'ENOSPC No space left on device\n')" ] \
    && ok "--disk 16M: writing 32 MiB fails inside with ENOSPC (No space left on device)" \
    || not_ok "ENOSPC" "$got" "$(cat "$T/enospc.json")"
  out=$(csrun sandbox exec dbox -- python3 -c '
import os
os.remove("/work/big")
open("/work/four", "wb").write(b"y" * (4 << 20))
print(open("/work/keep.txt").read())' 2>&1)
  csrun sandbox inspect dbox >"$T/din.json" 2>&1
  got=$(jget "$T/din.json" '(j["spec"]["disk_bytes"], j["disk"]["mechanism"], j["disk"]["size_bytes"], 4 << 20 <= j["disk"]["used_bytes"] < 6 << 20)')
  [ "$out" = kept ] && [ "$got" = "(16777216, 'tmpfs', 16777216, True)" ] \
    && ok "the sandbox stays usable (space freed, 4 MiB written again); inspect: cap 16M, its use" \
    || not_ok "usable / inspect" "$out" "$got" "$(jget "$T/din.json" 'j.get("disk")')"
  [ -d "$SBX/$did/disk" ] && [ -z "$(ls -A "$SBX/$did/disk")" ] && [ ! -e "$SBX/$did/upper" ] \
    && ! grep -q " $SBX/$did" /proc/self/mountinfo \
    && ok "the layer is not on the host: disk/ is empty there, nothing mounted in the host's namespace" \
    || not_ok "host view" "$(ls -la "$SBX/$did" "$SBX/$did/disk" 2>&1)" "$(grep "$SBX" /proc/self/mountinfo)"
  csrun sandbox stop dbox >/dev/null 2>&1
  csrun sandbox start dbox >/dev/null 2>&1
  out=$(csrun sandbox exec dbox -- python3 -c 'import os; print(open("/work/keep.txt").read(), os.path.getsize("/work/four"))' 2>&1)
  [ "$out" = "kept 4194304" ] && ok "--disk: stop and start keep the files" || not_ok "stop/start" "$out"
  # A checkpoint of the capped layer, restored: the new sandbox has the files and the same cap.
  export CSRUN_CHECKPOINT_DIR="$T/ckpt"
  ck=$(csrun sandbox checkpoint dbox --leave-running 2>"$T/ck.err")
  rid=$(csrun sandbox restore "$ck" 2>"$T/rs.err")
  out=$(csrun sandbox exec "$rid" -- python3 -c 'import os; print(open("/work/keep.txt").read(), os.path.getsize("/work/four"))' 2>&1)
  csrun sandbox inspect "$rid" >"$T/rin.json" 2>&1
  got=$(jget "$T/rin.json" '(j["spec"]["disk_bytes"], j["disk"]["size_bytes"], j["disk"]["used_bytes"] >= 4 << 20)')
  csrun sandbox exec "$rid" -- python3 -c 'open("/work/big", "wb").write(b"x" * (16 << 20))' >"$T/rbig.out" 2>&1
  rc=$?
  [ -n "$ck" ] && [ "$out" = "kept 4194304" ] && [ "$got" = "(16777216, 16777216, True)" ] && [ $rc = 1 ] \
    && grep -q "No space left on device" "$T/rbig.out" \
    && ok "--disk: checkpoint and restore: the restored sandbox has the files, the same cap, ENOSPC past it" \
    || not_ok "--disk checkpoint/restore" "ck '$ck' ($(cat "$T/ck.err")), restored '$rid' ($(cat "$T/rs.err"))" "$out" "$got" "exit $rc: $(tail -1 "$T/rbig.out")"
  [ -n "$rid" ] && csrun sandbox rm --force "$rid" >/dev/null 2>&1
  # The processes that hold the disk's user namespace (the keeper, the jail's): none of them
  # holds it after rm.  (Its inode number may be reused at once by a namespace of someone else:
  # only the holders seen before count.)
  kp=$(jget "$T/din.json" 'j["keeper_pid"]')
  u=$(readlink "/proc/$kp/fd/"* 2>/dev/null | grep '^user:' | sort -u)
  holders () {
    local f
    for f in /proc/[0-9]*/ns/user /proc/[0-9]*/fd/*; do
      [ "$(readlink "$f" 2>/dev/null)" = "$1" ] && { f=${f#/proc/}; echo "${f%%/*}"; }
    done | sort -u
  }
  before=$(holders "$u")
  csrun sandbox rm --force dbox >/dev/null 2>&1
  wait_until 10 gone "$kp"
  left=$(comm -12 <(echo "$before") <(holders "$u"))
  [ -n "$u" ] && [ "$(echo "$u" | wc -l)" = 1 ] && echo "$before" | grep -qx "$kp" && [ -z "$left" ] \
    && [ ! -e "$SBX/$did" ] \
    && ok "rm frees the disk: none of the $(echo $before | wc -w) processes that held its namespaces does any more" \
    || not_ok "rm frees" "namespace: $u, holders before: $before" "left: $left"
fi
csrun sandbox inspect box >"$T/in0.json" 2>&1
[ "$(jget "$T/in0.json" '(j["spec"]["disk_bytes"], "disk" in j)')" = "(0, False)" ] && [ -d "$SBX/$id/upper" ] \
  && ok "without --disk nothing changes: upper/ in the state directory, no disk in inspect" \
  || not_ok "no disk" "$(jget "$T/in0.json" 'j["spec"]')"
# The keeper killed: the jail dies with it (it is the keeper's child also when it joins the
# disk's namespaces), gc cleans up.
vid=$(csrun sandbox create --disk 8M 2>/dev/null)
kill_keeper "$vid"
igone=$?
csrun sandbox gc >"$T/gc.out" 2>&1
[ $igone = 0 ] && grep -qx "$vid" "$T/gc.out" && [ ! -e "$SBX/$vid" ] \
  && ok "--disk, keeper SIGKILLed: the jail dies with it, gc cleans up" \
  || not_ok "--disk keeper kill" "init gone: $igone" "$(cat "$T/gc.out")"

# ---------------------------------------------------------------- create --with
out=$(csrun sandbox create --with 'Bad_Name' 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "not a Debian package name" && ok "--with a bad name: exit 2" \
  || not_ok "--with bad name" "exit $rc" "$out"
if [ ! -r "$CSRUN_TEST_ROOTFS" ] || ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  skip "create --with" "no rootfs tarball, apt-get or dpkg-deb here"
else
  C=$T/cache
  mkdir -m 0700 "$C"
  CSRUN_CACHE_DIR=$C csrun sandbox create --name np --with python3-numpy >"$T/np.id" 2>"$T/np.err"
  rc=$?
  if [ $rc = 2 ] && grep -qE "Failed to fetch|Could not resolve|Temporary failure|Unable to connect|apt knows no packages|Unable to locate package python3-numpy|Network is unreachable" "$T/np.err"; then
    skip "create --with python3-numpy" "apt can't get python3-numpy here: $(head -c 300 "$T/np.err")"
  else
    nid=$(cat "$T/np.id")
    out=$(csrun sandbox exec np -- python3 -c 'import numpy; print(int(numpy.arange(12).sum()), round(float(numpy.linalg.det(numpy.array([[2.0, 1.0], [1.0, 3.0]]))), 6))' 2>&1)
    [ $rc = 0 ] && [ "$out" = "66 5.0" ] && ok "create --with python3-numpy: numpy (and LAPACK) import in the sandbox's execs" \
      || not_ok "--with numpy" "exit $rc" "$out" "$(cat "$T/np.err")"
    out=$(csrun sandbox exec box -- python3 -c 'import numpy' 2>&1)
    [ $? = 1 ] && echo "$out" | grep -q "No module named 'numpy'" && ok "a sandbox without --with has no numpy" \
      || not_ok "no numpy without --with" "$out"
    csrun sandbox inspect np >"$T/npin.json" 2>&1
    L=$(jget "$T/npin.json" 'j["spec"]["layer"]["dir"]')
    dg=$(jget "$T/npin.json" 'j["spec"]["layer"]["digest"]')
    [ "$(jget "$T/npin.json" 'j["spec"]["with"]')" = "['python3-numpy']" ] && [ "$(dirname "$L")" = "$C/layers" ] \
      && [ "$dg" = "$(json_get "$C/layers/$(basename "$L").json" 'j["digest"]' 2>&1)" ] \
      && [ "$(json_get "$SBX/$nid/spec.json" 'j["with"], j["layer"]["digest"]' 2>&1)" = "(['python3-numpy'], '$dg')" ] \
      && ok "spec.json and inspect record --with and the layer (its dir and digest)" \
      || not_ok "--with recorded" "$(jget "$T/npin.json" 'j["spec"]')" "$(cat "$SBX/$nid/spec.json")"
    csrun cache prune --cache-dir "$C" >"$T/prune1.out" 2>&1
    out=$(csrun sandbox exec np -- python3 -c 'import numpy; print("still")' 2>&1)
    [ -d "$L" ] && grep -q "kept *layer.*in use" "$T/prune1.out" && [ "$out" = still ] \
      && ok "cache prune keeps the layer while the sandbox lives (its use lock is held)" \
      || not_ok "prune while alive" "$(cat "$T/prune1.out")" "$out"
    csrun sandbox stop np >/dev/null 2>&1
    csrun sandbox start np >/dev/null 2>&1
    out=$(csrun sandbox exec np -- python3 -c 'import numpy; print("again")' 2>&1)
    # Restored from a checkpoint: the same packages.
    export CSRUN_CHECKPOINT_DIR="$T/ckpt"
    ck=$(CSRUN_CACHE_DIR=$C csrun sandbox checkpoint np --leave-running 2>"$T/nck.err")
    rid=$(CSRUN_CACHE_DIR=$C csrun sandbox restore "$ck" 2>"$T/nrs.err")
    rout=$(csrun sandbox exec "$rid" -- python3 -c 'import numpy; print("restored")' 2>&1)
    rwith=$(csrun sandbox inspect "$rid" 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"]["with"])' 2>&1)
    [ "$rout" = restored ] && [ "$rwith" = "['python3-numpy']" ] \
      && ok "a sandbox restored from a checkpoint of a --with one has the same package layer" \
      || not_ok "--with restored" "ck '$ck' ($(cat "$T/nck.err")), '$rid' ($(cat "$T/nrs.err"))" "$rout" "$rwith"
    [ -n "$rid" ] && csrun sandbox rm --force "$rid" >/dev/null 2>&1
    csrun sandbox rm --force np >/dev/null 2>&1
    csrun cache prune --cache-dir "$C" >"$T/prune2.out" 2>&1
    [ "$out" = again ] && [ ! -e "$L" ] && grep -q "removed *layer" "$T/prune2.out" \
      && ok "the layer survives stop/start; after rm, prune removes it (the lock went with the keeper)" \
      || not_ok "after rm" "$out" "$(cat "$T/prune2.out")"
    out=$(CSRUN_CACHE_DIR=$C csrun sandbox create --with no-such-package-csrun 2>&1)
    rc=$?
    [ $rc = 2 ] && echo "$out" | grep -q "no-such-package-csrun" && [ "$(ls "$SBX" | grep -c .)" = 1 ] \
      && ok "--with a package apt does not know: exit 2, named, nothing left" \
      || not_ok "--with unknown" "exit $rc" "$out" "$(ls "$SBX")"
  fi
fi

done_testing
