#!/bin/bash
# The jail, observed from inside by a probe snippet run through the real binary.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
marker="csrun-host-marker-$$"
touch "${TMPDIR:-/tmp}/$marker"
trap 'rm -f "${TMPDIR:-/tmp}/$marker"; _tap_cleanup' EXIT

cat > "$T/probe.py" <<'PY'
import errno, json, os, socket, sys
r = {}
r["pid"] = os.getpid()
r["hostname"] = socket.gethostname()
r["ifaces"] = [n for _, n in socket.if_nameindex()]
r["sys_class_net"] = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else None
r["env"] = dict(os.environ)
r["cwd"] = os.getcwd()
r["work"] = sorted(os.listdir("/work"))
r["tmp"] = sorted(os.listdir("/tmp"))
def try_write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
r["write_usr"] = try_write("/usr/lib/csrun-probe")
r["write_etc"] = try_write("/etc/passwd")
r["write_tmp"] = try_write("/tmp/probe")
r["write_work"] = try_write("/work/probe")
def fd_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
r["open_fds"] = [fd for fd in range(3, 1024) if fd_open(fd)]
status = {}
for line in open("/proc/self/status"):
    k, _, v = line.partition(":")
    status[k] = v.strip()
r["status"] = {k: status.get(k) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Uid", "Gid")}
masked = {}
for p in ("/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats", "/proc/interrupts"):
    try:
        with open(p, "rb") as f:
            masked[p] = len(f.read(4096))
    except OSError as e:
        masked[p] = errno.errorcode.get(e.errno, str(e.errno))
r["masked"] = masked
r["write_proc_sys"] = try_write("/proc/sys/kernel/hostname")
r["uid_map"] = open("/proc/self/uid_map").read().split()
r["dev"] = sorted(os.listdir("/dev"))
r["mounts"] = {l.split()[1]: l.split()[3].split(",") for l in open("/proc/self/mounts")}
r["ppid"] = os.getppid()
r["sid_is_self"] = os.getsid(0) == os.getpid()
print(json.dumps(r))
PY

out="$T/out.json"
err="$T/err.txt"
SECRET_TOKEN="s3cr3t-$$-host-only" CSRUN_TEST_SECRET="s3cr3t-$$" \
  csrun run "$T/probe.py" >"$out" 2>"$err" 3</dev/null 7<"$T/probe.py"
rc=$?
if [ $rc -ne 0 ]; then
  not_ok "probe snippet runs in the jail" "exit $rc" "$(cat "$err")"
  done_testing
  exit 1
fi
ok "probe snippet runs in the jail"
p () { json_get "$out" "$1"; }

[ "$(p 'j["pid"] in (1, 2)')" = True ] && ok "pid inside is 1 or 2 ($(p 'j["pid"]'))" || not_ok "pid inside is 1 or 2" "$(p 'j["pid"]')"
[ "$(p 'j["ppid"]')" = 1 ] && ok "the snippet's parent is the jail's init" || not_ok "parent is init" "$(p 'j["ppid"]')"
[ "$(p 'j["sid_is_self"]')" = True ] && ok "the snippet leads its own session" || not_ok "new session" "$(p 'j["sid_is_self"]')"
[ "$(p 'j["hostname"]')" = csrun ] && ok "hostname is csrun" || not_ok "hostname is csrun" "$(p 'j["hostname"]')"
[ "$(p 'j["ifaces"]')" = "['lo']" ] && ok "only lo in the network namespace" || not_ok "only lo" "$(p 'j["ifaces"]')"
[ "$(p 'j["sys_class_net"] in (None, ["lo"])')" = True ] && ok "no sysfs, or only lo in /sys/class/net" || not_ok "sysfs" "$(p 'j["sys_class_net"]')"
if grep -q "s3cr3t-$$" "$out"; then
  not_ok "no host environment variable reaches the jail" "$(p 'j["env"]')"
else
  ok "no host environment variable reaches the jail"
fi
[ "$(p 'sorted(j["env"])')" = "['HOME', 'LANG', 'PATH', 'PYTHONDONTWRITEBYTECODE', 'PYTHONUNBUFFERED', 'TMPDIR']" ] \
  && ok "environment is exactly the allowlist" || not_ok "environment allowlist" "$(p 'j["env"]')"
[ "$(p 'j["write_usr"]')" = EROFS ] && ok "rootfs is read-only (EROFS on /usr)" || not_ok "rootfs read-only /usr" "$(p 'j["write_usr"]')"
[ "$(p 'j["write_etc"]')" = EROFS ] && ok "rootfs is read-only (EROFS on /etc/passwd)" || not_ok "rootfs read-only /etc" "$(p 'j["write_etc"]')"
[ "$(p 'j["tmp"]')" = "[]" ] && ok "/tmp starts empty (the host's /tmp is not visible)" || not_ok "/tmp empty" "$(p 'j["tmp"]')"
[ "$(p 'j["write_tmp"]')" = ok ] && ok "/tmp is writable" || not_ok "/tmp writable" "$(p 'j["write_tmp"]')"
[ "$(p 'j["cwd"]')" = /work ] && ok "cwd is /work" || not_ok "cwd is /work" "$(p 'j["cwd"]')"
[ "$(p 'j["work"]')" = "['snippet.py']" ] && ok "/work holds only snippet.py" || not_ok "/work content" "$(p 'j["work"]')"
[ "$(p 'j["write_work"]')" = ok ] && ok "/work is writable" || not_ok "/work writable" "$(p 'j["write_work"]')"
[ "$(p 'j["open_fds"]')" = "[]" ] && ok "no file descriptor beyond 0-2 (host fds 3 and 7 were open)" || not_ok "fds closed" "$(p 'j["open_fds"]')"
caps=$(p '",".join(j["status"][k] for k in ("CapInh","CapPrm","CapEff","CapBnd","CapAmb"))')
[ "$caps" = "0000000000000000,0000000000000000,0000000000000000,0000000000000000,0000000000000000" ] \
  && ok "all capability sets are empty" || not_ok "capabilities empty" "$caps"
[ "$(p 'j["status"]["NoNewPrivs"]')" = 1 ] && ok "NoNewPrivs is 1" || not_ok "NoNewPrivs" "$(p 'j["status"]')"
[ "$(p 'j["write_proc_sys"]')" = EROFS ] && ok "/proc/sys is read-only" || not_ok "/proc/sys read-only" "$(p 'j["write_proc_sys"]')"
for path in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug /proc/latency_stats /proc/interrupts; do
  if [ -e "$path" ]; then
    v=$(p "j['masked']['$path']")
    [ "$v" = 0 ] && ok "$path is masked (reads empty)" || not_ok "$path masked" "$v"
  else
    [ "$(p "j['masked']['$path']")" = ENOENT ] && ok "$path does not exist on this kernel, nor in the jail" \
      || not_ok "$path absent" "$(p "j['masked']['$path']")"
  fi
done
if is_root; then
  [ "$(p 'j["uid_map"]')" = "['0', '65534', '1']" ] && ok "as root, the jail's root is host uid 65534" || not_ok "root id map" "$(p 'j["uid_map"]')"
else
  [ "$(p 'j["uid_map"]')" = "['0', '$(id -u)', '1']" ] && ok "rootless, the jail's root is the invoking user" || not_ok "rootless id map" "$(p 'j["uid_map"]')"
fi
[ "$(p 'j["status"]["Uid"].split()[0]')" = 0 ] && ok "the snippet runs as uid 0 of its namespace" || not_ok "uid 0 inside" "$(p 'j["status"]')"
[ "$(p 'sorted(set(j["dev"]) - {"null","zero","full","random","urandom","tty","fd","stdin","stdout","stderr","ptmx","pts","shm"})')" = "[]" ] \
  && ok "/dev holds only the minimal set" || not_ok "/dev minimal" "$(p 'j["dev"]')"
# mount_flags PATH FLAG...: the mount at PATH inside the jail has every FLAG.
mount_flags () {
  local path=$1
  shift
  local want
  want=$(printf '"%s",' "$@")
  [ "$(p "all(f in j['mounts'].get('$path', []) for f in [$want])")" = True ] \
    && ok "$path is mounted $*" || not_ok "$path mounted $*" "$(p "j['mounts'].get('$path')")"
}
mount_flags / ro nosuid nodev
mount_flags /proc nosuid nodev noexec
mount_flags /tmp rw nosuid nodev
mount_flags /work rw nosuid nodev
mount_flags /dev ro nosuid noexec
mount_flags /dev/null nosuid noexec
mount_flags /dev/urandom nosuid noexec
mount_flags /dev/shm nosuid nodev noexec
mount_flags /proc/sys ro nosuid nodev noexec
mount_flags /proc/keys ro nosuid noexec

# A snippet that double-forks and setsid()s leaves nothing behind on the host.
token="csrun-daemon-$$-$RANDOM"
cat > "$T/daemon.py" <<'PY'
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
        os._exit(0)
    os._exit(0)
time.sleep(300)
PY
start=$(date +%s%N)
csrun run --timeout 1 "$T/daemon.py" "$token" >/dev/null 2>&1
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 124 ] && ok "a sleeping snippet is timed out (exit 124 after ${elapsed} ms)" || not_ok "timeout exit 124" "exit $rc"
left=""
for d in /proc/[0-9]*; do
  if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -q -- "$token"; then
    left="$left ${d#/proc/}"
  fi
done
[ -z "$left" ] && ok "no process of a double-forked, setsid() daemon is left on the host" || not_ok "daemon left behind" "pids:$left"

# A snippet that closes stdout and stderr and sleeps is still timed out.
printf 'import os, time\nos.close(1)\nos.close(2)\ntime.sleep(300)\n' > "$T/close.py"
csrun run --timeout 1 --json "$T/close.py" >"$T/close.json" 2>/dev/null
rc=$?
[ $rc -eq 124 ] && [ "$(json_get "$T/close.json" 'j["status"], j["attempts"][0]["timed_out"]')" = "('timeout', True)" ] \
  && ok "closing stdout and sleeping does not escape the timeout" || not_ok "closed stdout timeout" "exit $rc" "$(cat "$T/close.json")"

# The jail dies with csrun: kill the supervisor, the snippet goes too.
token2="csrun-orphan-$$-$RANDOM"
printf 'import time\ntime.sleep(300)\n' > "$T/sleep.py"
"$CSRUN" run "$T/sleep.py" "$token2" >/dev/null 2>&1 &
sup=$!
for _ in $(seq 50); do
  grep -lq -- "$token2" /proc/[0-9]*/cmdline 2>/dev/null && break
  sleep 0.1
done
kill -9 $sup
{ wait $sup; } 2>/dev/null
# The kernel delivers the parent-death signal asynchronously: allow 3 s.
for _ in $(seq 30); do
  left=""
  for d in /proc/[0-9]*; do
    if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -q -- "$token2"; then
      left="$left ${d#/proc/}"
    fi
  done
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] && ok "killing csrun kills the jail (parent-death signal)" || not_ok "jail outlived csrun" "pids:$left"

# A stale cgroup of root's (a root csrun killed with -9 leaves csrun-<pid>-<n>
# under csrun/ of each v1 hierarchy, which every user's run looks at):
# another user's run can't remove it and says nothing (it warned once per
# hierarchy, every run); root's next run removes it.
if is_root && command -v setpriv >/dev/null; then
  mkdir -p "$T/nobody/cache"
  chown 65534:65534 "$T/nobody/cache"
  chmod 755 "$T" "$T/nobody"
  printf 'print("hi")\n' > "$T/nobody/hi.py"
  chmod 644 "$T/nobody/hi.py"
  csrun run --quiet "$T/nobody/hi.py" >/dev/null 2>&1 # makes the csrun/ directories
  v1dirs=$(ls -d /sys/fs/cgroup/*/csrun 2>/dev/null | grep -v '^/sys/fs/cgroup/unified/')
  if [ -n "$v1dirs" ]; then
    # Other root csruns on a shared host may clean the directories during the
    # run: try again until they survived it (not --quiet: it hides warnings).
    for try in 1 2 3 4 5; do
      sh -c 'exit 0' &
      dead=$!
      wait $dead
      made=""
      for d in $v1dirs; do mkdir "$d/csrun-$dead-1" 2>/dev/null && made="$made $d/csrun-$dead-1"; done
      setpriv --reuid 65534 --regid 65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent \
        CSRUN_CACHE_DIR="$T/nobody/cache" "$CSRUN" run "$T/nobody/hi.py" >"$T/nobody/out" 2>"$T/nobody/err"
      rc=$?
      survived=true
      for d in $made; do [ -d "$d" ] || survived=false; done
      $survived && break
    done
    [ $rc = 0 ] && [ "$(cat "$T/nobody/out")" = hi ] && $survived && ! grep -q 'stale cgroup' "$T/nobody/err" \
      && ok "another user's run leaves root's stale cgroups alone, silently" \
      || not_ok "stale cgroups of root, seen by another user" "exit $rc (survived: $survived)" "$(cat "$T/nobody/err")" "$made"
    csrun run --quiet "$T/nobody/hi.py" >/dev/null 2>&1
    left=""
    for d in $made; do [ -d "$d" ] && left="$left $d" && rmdir "$d"; done
    [ -z "$left" ] && ok "root's next run removes its stale cgroups" || not_ok "stale cgroups left" "$left"
  else
    skip "stale cgroups of root, seen by another user" "no cgroup v1 hierarchy: root's and other users' cgroups share no directory"
  fi
fi

# Exit status and signals of the snippet.
printf 'import sys\nsys.exit(3)\n' > "$T/exit3.py"
csrun run --json "$T/exit3.py" >"$T/exit3.json"
rc=$?
[ $rc -eq 1 ] && [ "$(json_get "$T/exit3.json" 'j["status"], j["attempts"][0]["exit_code"], j["attempts"][0]["signal"]')" = "('failed', 3, None)" ] \
  && ok "a snippet exiting 3 fails with exit 1 and exit_code 3" || not_ok "exit 3" "exit $rc" "$(cat "$T/exit3.json")"
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n' > "$T/kill.py"
csrun run --json "$T/kill.py" >"$T/kill.json"
rc=$?
[ $rc -eq 1 ] && [ "$(json_get "$T/kill.json" 'j["attempts"][0]["exit_code"], j["attempts"][0]["signal"]')" = "(None, 'SIGKILL')" ] \
  && ok "a snippet killed by SIGKILL reports signal SIGKILL" || not_ok "signal" "exit $rc" "$(cat "$T/kill.json")"

# Tracebacks point into snippet.py, not into the launcher.
printf 'def f():\n    return 1 / 0\n\nf()\n' > "$T/zero.py"
csrun run --quiet "$T/zero.py" >/dev/null 2>"$T/zero.err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'File "snippet.py", line 2, in f' "$T/zero.err" && ! grep -q '<string>' "$T/zero.err" \
  && tail -n1 "$T/zero.err" | grep -q '^ZeroDivisionError: division by zero$'; then
  ok "a traceback shows snippet.py frames only"
else
  not_ok "traceback" "exit $rc" "$(cat "$T/zero.err")"
fi

# The snippet may come from stdin; arguments after FILE reach sys.argv.
out=$(printf 'import sys\nprint(sys.argv)\n' | csrun run --quiet - one --two 2>&1)
[ "$out" = "['snippet.py', 'one', '--two']" ] && ok "snippet from stdin, arguments in sys.argv" || not_ok "stdin + argv" "$out"

# When the code comes from stdin, the snippet's stdin is empty (/dev/null); stdin-live.sh tests
# the snippet reading csrun's stdin.
out=$(printf 'import sys\nprint(repr(sys.stdin.read()))\n' | csrun run --quiet - 2>&1)
[ "$out" = "''" ] && ok "the snippet's stdin is empty when the code came from stdin" || not_ok "stdin" "$out"

# The stdlib's native modules work inside the jail.
printf 'import decimal, hashlib, sqlite3, ssl, ctypes, zlib, uuid, json, lzma, bz2\nprint(hashlib.sha256(b"x").hexdigest()[:8], sqlite3.connect(":memory:").execute("select 6*7").fetchone()[0], decimal.Decimal(1)/decimal.Decimal(8), len(zlib.compress(b"a"*1000)) < 100, ctypes.sizeof(ctypes.c_int))\n' > "$T/native.py"
out=$(csrun run --quiet "$T/native.py" 2>&1)
[ "$out" = "2d711642 42 0.125 True 4" ] && ok "decimal, hashlib, sqlite3, ssl, ctypes, zlib, uuid, json import and work" || not_ok "native modules" "$out"

# Set-up errors inside the jail reach the user as a normal error: a rootfs
# whose mount target is a symlink aborts the run.
R=$(tmpdir)
chmod 755 "$R"
mkdir -p "$R/proc" "$R/dev" "$R/tmp" "$R/usr/bin"
ln -s /etc "$R/work"
csrun run --rootfs "$R" "$T/exit3.py" >/dev/null 2>"$T/symlink.err"
rc=$?
[ $rc -eq 125 ] && [ "$(wc -l <"$T/symlink.err")" = 1 ] && grep -q 'work is a symlink' "$T/symlink.err" \
  && ok "a symlinked /work in the rootfs aborts the run with a clear error" || not_ok "symlinked mount target" "exit $rc" "$(cat "$T/symlink.err")"
rm "$R/work"
mkdir "$R/work"
rm -rf "$R/proc"
ln -s /proc "$R/proc"
csrun run --rootfs "$R" "$T/exit3.py" >/dev/null 2>"$T/symlink.err"
rc=$?
[ $rc -eq 125 ] && grep -q 'proc is a symlink' "$T/symlink.err" \
  && ok "a symlinked /proc in the rootfs aborts the run" || not_ok "symlinked proc" "exit $rc" "$(cat "$T/symlink.err")"
rm "$R/proc"
mkdir "$R/proc"
csrun run --rootfs "$R" "$T/exit3.py" >/dev/null 2>"$T/noexec.err"
rc=$?
[ $rc -eq 125 ] && grep -q 'execve /usr/bin/python3: No such file or directory' "$T/noexec.err" \
  && ok "a rootfs without python fails with the step and errno" || not_ok "missing python" "exit $rc" "$(cat "$T/noexec.err")"

done_testing
