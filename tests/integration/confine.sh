#!/bin/bash
# Limits (cgroups, rlimits as the reported fallback), seccomp, network modes.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
runj () { # runj NAME CODE OPTIONS... -> $T/NAME.json, $rc
  local name=$1 code=$2
  shift 2
  printf '%s\n' "$code" > "$T/$name.py"
  csrun run --json --no-heal "$@" "$T/$name.py" > "$T/$name.json" 2> "$T/$name.err"
  rc=$?
}
q () { json_get "$T/$1.json" "$2"; }

runj plain 'print("hi")'
mech=$(q plain 'j["limits"]["mechanism"]')
diag "limits mechanism here: $mech (uid $(id -u))"
if is_root; then
  case $mech in
    cgroup-v1 | cgroup-v2) ok "as root the limits live in a cgroup ($mech)" ;;
    *) not_ok "as root the limits live in a cgroup" "$mech" ;;
  esac
else
  case $mech in
    cgroup-v2 | rlimit | cgroup-v2+rlimit) ok "rootless: $mech" ;;
    *) not_ok "rootless mechanism is a delegated cgroup or rlimits" "$mech" ;;
  esac
fi
[ "$(q plain '(j["limits"]["memory_bytes"], j["limits"]["memory_enforced"], j["limits"]["pids"], j["limits"]["pids_enforced"], j["limits"]["cpus"])')" = "(536870912, True, 128, True, 1.0)" ] \
  && ok "default limits: 512 MiB and 128 pids enforced, 1 CPU requested" || not_ok "default limits" "$(q plain 'j["limits"]')"
if [ "$(q plain 'j["limits"]["cpu_enforced"]')" = False ]; then
  # Without a limit on the command line the warning is said once per cache
  # directory and boot (report.sh); with one, every time.
  grep -q "^csrun run: warning: limits .*cpu not limited" <(csrun run --pids 128 "$T/plain.py" 2>&1 >/dev/null) \
    && ok "an unenforced default limit is reported on stderr" || not_ok "warning about cpu"
else
  ok "cpu limit enforced by $mech"
fi

# A memory bomb under --memory 64M: the kernel kills it (cgroup) or Python gets
# MemoryError (RLIMIT_DATA); either way it ends, and the result says which.
runj mem 'b = []
while True:
    b.append(bytearray(8 * 1024 * 1024))
    b[-1][::4096] = b"x" * (len(b[-1]) // 4096)' --memory 64M --timeout 10
got=$(q mem '(j["status"], j["diagnosis"]["error_type"], j["attempts"][0]["oom_killed"], j["limits"]["memory_limit_kind"])')
case "$mech:$got" in
  cgroup-*:"('failed', 'OutOfMemory', True, 'resident')") ok "a memory bomb is OOM-killed in its cgroup and reported as OutOfMemory" ;;
  *rlimit*:"('failed', 'MemoryError', False, 'private-data')") ok "a memory bomb hits RLIMIT_DATA (MemoryError), reported as a private-data limit" ;;
  *) not_ok "memory bomb" "$mech" "$got" "$(head -c 2000 "$T/mem.json")" ;;
esac

# A fork bomb under --pids 16 stays bounded.
runj fork 'import os, time
n = 0
kids = []
for i in range(200):
    try:
        pid = os.fork()
    except BlockingIOError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print(len(kids))' --pids 16 --timeout 20
n=$(q fork 'j["attempts"][0]["stdout"].strip()')
[ -n "$n" ] && [ "$n" -lt 16 ] && [ "$n" -ge 5 ] && ok "--pids 16 stops a fork bomb at $n children" || not_ok "--pids" "children: $n" "$(head -c 1500 "$T/fork.json")"

# An explicit limit that can't be enforced fails unless --best-effort-limits.
runj cpu 'print("cpu")' --cpus 0.5
if [ "$(q cpu 'j["status"]')" = ok ]; then
  [ "$(q cpu 'j["limits"]["cpu_enforced"]')" = True ] && ok "--cpus 0.5 enforced ($mech)" || not_ok "--cpus ok but not enforced"
else
  [ $rc = 125 ] && grep -q -- "cannot enforce --cpus" "$T/cpu.err" && ok "--cpus that can't be enforced is an error naming it" || not_ok "--cpus error" "exit $rc" "$(cat "$T/cpu.err")"
  runj cpube 'print("cpu")' --cpus 0.5 --best-effort-limits
  [ "$(q cpube '(j["status"], j["limits"]["cpu_enforced"])')" = "('ok', False)" ] && ok "--best-effort-limits runs and reports cpu_enforced false" || not_ok "--best-effort-limits" "$(cat "$T/cpube.json")"
fi

# No csrun cgroup is left behind by a csrun that has ended (other tests may be
# running csrun right now: their cgroups are alive and named after their pid).
left=""
for d in $(find /sys/fs/cgroup -maxdepth 4 -regextype posix-extended -regex '.*/csrun-[0-9]+-[0-9]+' 2>/dev/null); do
  pid=${d##*/csrun-}
  pid=${pid%%-*}
  [ -d "/proc/$pid" ] || left="$left $d"
done
[ -z "$left" ] && ok "no csrun cgroup left behind" || not_ok "leftover cgroups" "$left"

# Seccomp: the default profile denies keyctl (EPERM) and the result names it.
runj keyctl 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.syscall(250, 0, 0, 0, 0, 0)  # keyctl(KEYCTL_GET_KEYRING_ID...)
print(r, os.strerror(ctypes.get_errno()))'
[ "$(q keyctl '(j["attempts"][0]["stdout"], len(j["limits"]["seccomp"]))')" = "('-1 Operation not permitted\\n', 64)" ] \
  && ok "seccomp: keyctl is denied with EPERM; the result names the profile digest" || not_ok "seccomp keyctl" "$(head -c 1500 "$T/keyctl.json")"
runj unconf 'print("free")' --seccomp unconfined
[ "$(q unconf '(j["status"], j["limits"]["seccomp"])')" = "('ok', 'unconfined')" ] && ok "--seccomp unconfined is explicit in the result" || not_ok "unconfined" "$(cat "$T/unconf.json")"
printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["no_such_syscall"], "action": "SCMP_ACT_ERRNO"}]}' > "$T/bad-seccomp.json"
csrun run --seccomp "$T/bad-seccomp.json" "$T/plain.py" > /dev/null 2> "$T/bads.err"
rc=$?
[ $rc = 2 ] && grep -q "no_such_syscall" "$T/bads.err" && [ "$(wc -l < "$T/bads.err")" = 1 ] && ok "a profile with an unknown syscall is a one-line usage error" || not_ok "bad seccomp profile" "exit $rc" "$(cat "$T/bads.err")"

# Network: none by default; host only when allowed explicitly.
runj net 'import socket
print([n for _, n in socket.if_nameindex()])'
[ "$(q net 'j["attempts"][0]["stdout"].strip()')" = "['lo']" ] && ok "--net none (default): only lo" || not_ok "net none" "$(cat "$T/net.json")"
csrun run --net host "$T/net.py" > /dev/null 2> "$T/nethost.err"
rc=$?
[ $rc = 2 ] && grep -q -- "--allow-host-net" "$T/nethost.err" && ok "--net host is refused without --allow-host-net" || not_ok "--net host refused" "exit $rc" "$(cat "$T/nethost.err")"
want=$(python3 -c 'import socket; print(sorted(n for _, n in socket.if_nameindex()))')
out=$(csrun run --quiet --no-heal --net host --allow-host-net "$T/net.py" 2>&1 | python3 -c 'import sys, ast; print(sorted(ast.literal_eval(sys.stdin.read())))')
[ "$out" = "$want" ] && ok "--net host --allow-host-net shares the host's interfaces" || not_ok "--net host" "$out" "want $want"

# --user: the snippet runs as a non-zero uid mapped to a subordinate host id.
me=$(id -un)
if grep -q "^$me:" /etc/subuid 2>/dev/null && grep -q "^$me:" /etc/subgid 2>/dev/null; then
  runj user 'import os
print(os.getuid(), os.getgid(), open("/proc/self/uid_map").read().split(), os.stat("/work").st_uid)
open("/work/out", "w").write("ok")
open("/tmp/out", "w").write("ok")
print("written")' --user 1000
  start=$(sed -n "s/^$me:\([0-9]*\):.*/\1/p" /etc/subuid | head -1)
  out=$(q user 'j["attempts"][0]["stdout"]')
  outside0=$(id -u); is_root && outside0=65534
  want="1000 1000 ['0', '$outside0', '1', '1', '$start', '65535'] 1000
written"
  [ "$out" = "$want" ] && ok "--user 1000 runs as uid 1000, mapped to subordinate id $((start + 999)), owning /work" \
    || not_ok "--user" "$out" "want: $want" "$(cat "$T/user.err")"
else
  skip "--user" "n/a: no subordinate id range for $me in /etc/subuid and /etc/subgid"
fi
csrun run --user 0 "$T/plain.py" > /dev/null 2> "$T/user0.err"
rc=$?
[ $rc = 2 ] && grep -q -- "invalid --user" "$T/user0.err" && ok "--user 0 is a usage error" || not_ok "--user 0" "exit $rc" "$(cat "$T/user0.err")"

done_testing
