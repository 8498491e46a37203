#!/bin/bash
# csrun sandbox (csrun-sandbox(1)): create, exec, ls, inspect, stop, start, rm, gc; the writable
# layer, the clean environment, exec timeouts and exit statuses, 16 concurrent execs, the idle
# timeout, a keeper killed with SIGKILL, the confinement of an exec.  Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"

# ---------------------------------------------------------------- create, ls, inspect
id=$(csrun sandbox create --name box1 --idle-timeout 120s 2>"$T/c.err")
rc=$?
[ $rc = 0 ] && [ ${#id} = 32 ] && [ -d "$SBX/$id/upper" ] && [ -S "$SBX/$id/ctl.sock" ] \
  && [ "$(stat -c %a "$SBX/$id/ctl.sock")" = 600 ] && [ "$(stat -c %a "$SBX")" = 700 ] \
  && ok "create prints a 32-digit id; state directory 0700 with upper/ and a 0600 control socket" \
  || not_ok "create" "exit $rc, id '$id'" "$(cat "$T/c.err")" "$(ls -la "$SBX" "$SBX/$id" 2>&1)"
# A limit that is not applied is said (rootless without a writable cgroup: rlimits, no cpu).
mech=$(json_get "$SBX/$id/spec.json" 'j["mechanism"]' 2>&1)
if [ "${mech#*rlimit}" != "$mech" ] || [ "$mech" = none ]; then
  grep -q "warning: limits" "$T/c.err" && ok "create warns that limits are rlimits here ($mech)" \
    || not_ok "create warning" "$mech" "$(cat "$T/c.err")"
else
  [ ! -s "$T/c.err" ] && ok "create is silent when every limit is in a cgroup ($mech)" \
    || not_ok "create stderr" "$mech" "$(cat "$T/c.err")"
fi

csrun sandbox ls --json > "$T/ls.json" 2>&1
got=$(jget "$T/ls.json" '[(s["id"], s["name"], s["status"], s["idle_timeout_s"]) for s in j]')
[ "$got" = "[('$id', 'box1', 'running', 120)]" ] && csrun sandbox ls | grep -q "^$id  box1 *running" \
  && ok "ls and ls --json: id, name, running, idle timeout" || not_ok "ls" "$got" "$(csrun sandbox ls 2>&1)"

csrun sandbox inspect box1 > "$T/in.json" 2>&1
got=$(jget "$T/in.json" '(j["id"], j["state_dir"], j["status"], len(j["pids"]) >= 1, j["limits"]["mechanism"] != "", j["spec"]["workdir"], j["spec"]["net"])')
[ "$got" = "('$id', '$SBX/$id', 'running', True, True, '/work', 'none')" ] \
  && ok "inspect (by name): state dir, pids, limits and how, spec" || not_ok "inspect" "$got" "$(cat "$T/in.json")"

out=$(csrun sandbox create --name box1 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "named 'box1' exists" && [ "$(ls "$SBX" | grep -c .)" = 1 ] \
  && ok "a duplicate name: exit 2, a clear error, nothing left" || not_ok "duplicate name" "exit $rc" "$out" "$(ls "$SBX")"

out=$(csrun sandbox exec nosuchbox -- python3 -c pass 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such sandbox: 'nosuchbox'" \
  && ok "an unknown id: exit 2, 'no such sandbox'" || not_ok "unknown id" "exit $rc" "$out"

out=$(csrun sandbox create --rootfs "$T/nope" 2>&1)
rc=$?
[ $rc = 2 ] && [ "$(ls "$SBX" | grep -c .)" = 1 ] && ok "a missing --rootfs: exit 2, nothing left" \
  || not_ok "missing rootfs" "exit $rc" "$out" "$(ls "$SBX")"
mkdir -p "$T/notroot"
out=$(csrun sandbox create --rootfs "$T/notroot" 2>&1)
rc=$?
[ $rc = 125 ] && [ -n "$out" ] && [ "$(ls "$SBX" | grep -c .)" = 1 ] \
  && ok "a rootfs that is not one: exit 125 with the reason, nothing left" \
  || not_ok "not a rootfs" "exit $rc" "$out" "$(ls "$SBX")"

# ---------------------------------------------------------------- exec, the writable layer
out=$(csrun sandbox exec "$id" -- python3 -c 'import sys; print("hello"); open("/work/a.txt","w").write("kept"); sys.exit(7)' 2>&1)
rc=$?
[ $rc = 7 ] && [ "$out" = hello ] && ok "exec python3 -c: its output and its exit status (7)" \
  || not_ok "exec" "exit $rc" "$out"
out=$(csrun sandbox exec box1 -- python3 -c 'import os; print(open("/work/a.txt").read(), os.getcwd())' 2>&1)
[ "$out" = "kept /work" ] && ok "a file written by one exec is there for the next (/work on the layer)" \
  || not_ok "layer" "$out"
out=$(csrun sandbox exec box1 -- python3 -c '
import os
os.makedirs("/work/d/e"); open("/work/d/e/f", "w").write("deep")
try:
    open("/usr/lib/hello", "w"); print("rootfs writable")
except PermissionError:
    print("rootfs read-only")' 2>&1)
[ "$out" = "rootfs read-only" ] && [ "$(cat "$SBX/$id/upper/work/d/e/f" 2>&1)" = deep ] \
  && ok "writes land in the layer (upper/work); the rootfs's own directories keep their modes (no capabilities)" \
  || not_ok "layer write" "$out" "$(ls -laR "$SBX/$id/upper" 2>&1 | head -20)"

csrun sandbox exec box1 --json -- python3 -c 'import sys; print("out"); print("err", file=sys.stderr); sys.exit(3)' > "$T/e.json" 2>&1
got=$(jget "$T/e.json" '(j["returncode"], j["stdout"], j["stderr"], j["timed_out"], type(j["duration_ms"]).__name__)')
[ "$got" = "(3, 'out\n', 'err\n', False, 'int')" ] && ok "exec --json: returncode, stdout, stderr, timed_out, duration_ms" \
  || not_ok "exec --json" "$got" "$(cat "$T/e.json")"
csrun sandbox exec box1 --json --max-output 1000 -- python3 -c 'print("x" * 100000)' > "$T/big.json" 2>&1
got=$(jget "$T/big.json" '(len(j["stdout"]) <= 1000, j["stdout_dropped_bytes"] > 90000)')
[ "$got" = "(True, True)" ] && ok "exec --json output is bounded (bbuf), dropped bytes counted" || not_ok "bounded" "$got"

out=$(csrun sandbox exec box1 -- no-such-program 2>&1)
rc=$?
[ $rc = 127 ] && echo "$out" | grep -q "no-such-program: No such file or directory" \
  && ok "exec of a missing program: 127 and a clear message" || not_ok "127" "exit $rc" "$out"
out=$(csrun sandbox exec box1 --sh 'echo "$((6*7))"; exit 4' 2>&1)
rc=$?
[ $rc = 4 ] && [ "$out" = 42 ] && ok "exec --sh runs /bin/sh -c" || not_ok "--sh" "exit $rc" "$out"

export SECRET=hunter2-$$
out=$(csrun sandbox exec box1 --env EXTRA=1 -- python3 -c 'import os; print(sorted(os.environ)); print(os.environ.get("EXTRA"))' 2>&1)
unset SECRET
want="['EXTRA', 'HOME', 'LANG', 'PATH', 'PYTHONDONTWRITEBYTECODE', 'PYTHONUNBUFFERED', 'TMPDIR']
1"
[ "$out" = "$want" ] && ! grep -rqs "hunter2-$$" "$SBX/$id/spec.json" \
  && ok "nothing of the caller's environment leaks in (SECRET), --env adds" || not_ok "env" "$out"

# ---------------------------------------------------------------- timeouts, concurrency
csrun sandbox exec box1 --json --timeout 1s -- python3 -c 'import time; print("started", flush=True); time.sleep(60)' > "$T/t.json" 2>&1
rc=$?
got=$(jget "$T/t.json" '(j["returncode"], j["timed_out"], j["stdout"], "Command timed out after 1 seconds" in j["stderr"])')
out=$(csrun sandbox exec box1 -- python3 -c 'print("still here")' 2>&1)
[ $rc = 124 ] && [ "$got" = "(-1, True, 'started\n', True)" ] && [ "$out" = "still here" ] \
  && ok "a timeout kills that exec only: returncode -1, 'Command timed out', exit 124; the sandbox lives" \
  || not_ok "timeout" "exit $rc" "$got" "$out"

for i in $(seq 16); do
  csrun sandbox exec box1 --json -- python3 -c "import time; time.sleep(0.5); print($i)" > "$T/cc.$i" 2>&1 &
done
wait
n=0
for i in $(seq 16); do
  [ "$(jget "$T/cc.$i" '(j["returncode"], j["stdout"])')" = "(0, '$i\n')" ] && n=$((n + 1))
done
[ $n = 16 ] && ok "16 concurrent execs" || not_ok "16 concurrent execs: $n ok" "$(cat "$T"/cc.* | head -20)"

# ---------------------------------------------------------------- confinement of an exec
cat > "$T/esc.py" <<'EOF'
import os
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print(st["CapEff"].strip(), st["NoNewPrivs"].strip(), st["Seccomp"].strip())
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(len(pids) < 20, 1 in pids)
try:
    os.setuid(12345)
    print("setuid worked")
except OSError as e:
    print("setuid refused")
try:
    import socket
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    print("network")
except OSError:
    print("no network")
EOF
out=$(csrun sandbox exec box1 -- python3 -c "$(cat "$T/esc.py")" 2>&1)
want="0000000000000000 1 2
True True
setuid refused
no network"
[ "$out" = "$want" ] && ok "an exec has no capabilities, no_new_privs, seccomp on, sees only the sandbox's pids, no network" \
  || not_ok "confinement" "$out"
kp=$(jget "$T/in.json" 'j["keeper_pid"]')
out=$(csrun sandbox exec box1 -- python3 -c "import os; print(os.path.exists('/proc/$kp'), os.path.exists('/proc/$$'))" 2>&1)
[ "$out" = "False False" ] && ok "the host's pids (keeper, test shell) are not visible" || not_ok "host pids" "$out"

# ---------------------------------------------------------------- stop, start, rm
out=$(csrun sandbox rm box1 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "is running" && [ -d "$SBX/$id" ] \
  && ok "rm of a running sandbox without --force: refused (exit 1)" || not_ok "rm refused" "exit $rc" "$out"
init=$(jget "$T/in.json" 'j["init_pid"]')
csrun sandbox stop box1 > /dev/null 2>&1
rc=$?
st=$(csrun sandbox ls --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["status"])' 2>&1)
out=$(csrun sandbox exec box1 -- python3 -c pass 2>&1)
xrc=$?
[ $rc = 0 ] && [ "$st" = stopped ] && wait_until 10 gone "$init" && [ $xrc = 1 ] && echo "$out" | grep -q stopped \
  && ok "stop: processes gone, status stopped, exec refused (exit 1)" || not_ok "stop" "exit $rc, $st, exec $xrc: $out"
csrun sandbox start box1 > /dev/null 2>&1
rc=$?
out=$(csrun sandbox exec box1 -- python3 -c 'print(open("/work/a.txt").read())' 2>&1)
[ $rc = 0 ] && [ "$out" = kept ] && ok "start: a new init on the same layer, files kept" || not_ok "start" "exit $rc" "$out"

csrun sandbox inspect box1 > "$T/in2.json" 2>&1
kp=$(jget "$T/in2.json" 'j["keeper_pid"]')
init=$(jget "$T/in2.json" 'j["init_pid"]')
cgs=$(jget "$T/in2.json" '" ".join(([j["cgroup"]["v2"]] if "v2" in j["cgroup"] else []) + j["cgroup"]["v1"])')
csrun sandbox rm --force box1 > /dev/null 2>&1
rc=$?
left=""
for c in $cgs; do [ -e "$c" ] && left="$left $c"; done
[ $rc = 0 ] && [ ! -e "$SBX/$id" ] && wait_until 10 gone "$kp" && wait_until 10 gone "$init" && [ -z "$left" ] \
  && ok "rm --force leaves nothing: state dir, keeper, jail, cgroup ($(echo $cgs | wc -w) cgroup dirs)" \
  || not_ok "rm" "exit $rc" "left: $left" "$(ls -la "$SBX" 2>&1)"

# ---------------------------------------------------------------- idle timeout, keeper killed
id2=$(csrun sandbox create --idle-timeout 2s 2>"$T/c2.err")
csrun sandbox exec "$id2" -- python3 -c pass > /dev/null 2>&1
wait_until 30 no_dir "$SBX/$id2" && ok "the idle timeout (2s) removes the sandbox" || not_ok "idle" "$(ls -la "$SBX/$id2" 2>&1)"

id3=$(csrun sandbox create --name victim 2>"$T/c3.err")
kill_keeper victim
igone=$?
csrun sandbox gc > "$T/gc.out" 2>&1
rc=$?
[ $igone = 0 ] && [ $rc = 0 ] && grep -qx "$id3" "$T/gc.out" && [ ! -e "$SBX/$id3" ] \
  && ok "keeper SIGKILLed: the jail dies with it, gc cleans up and names it" \
  || not_ok "keeper kill" "init gone: $igone, gc exit $rc" "$(cat "$T/gc.out")" "$(ls "$SBX")"
csrun sandbox gc --json > "$T/gc.json" 2>&1
[ "$(jget "$T/gc.json" 'j["removed"]')" = "[]" ] && ok "gc --json: nothing more to remove" || not_ok "gc --json" "$(cat "$T/gc.json")"

id4=$(csrun sandbox create --ttl 2s 2>"$T/c4.err")
wait_until 30 no_dir "$SBX/$id4" && ok "--ttl removes the sandbox when it expires" || not_ok "ttl" "$id4"

done_testing
