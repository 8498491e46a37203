#!/bin/bash
# podman with csrun as its OCI runtime (`podman --runtime $CSRUN ...`): run,
# stdin, tty, resource limits, networking, exit codes, and the life cycle of a
# detached container (exec, top, kill, pause/unpause, stop, rm -f).
#
# podman runs against a private store under a temporary directory (--root,
# --runroot, --tmpdir, --network-config-dir, --volumepath) with its own
# containers.conf, so the machine's images, containers and networks are never
# touched; the image is imported from $CSRUN_TEST_ROOTFS.  Root only.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/podman-cgroups.sh"

if ! is_root; then
  skip "podman with csrun as the OCI runtime" "n/a: podman tests run as root"
  done_testing
  exit
fi
for tool in podman conmon zstd; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    skip "podman with csrun as the OCI runtime" "$tool is not installed"
    done_testing
    exit
  fi
done
if [ ! -r "$CSRUN_TEST_ROOTFS" ]; then
  skip "podman with csrun as the OCI runtime" "no rootfs tarball at $CSRUN_TEST_ROOTFS"
  done_testing
  exit
fi

T=$(tmpdir)
IMAGE="localhost/csrun-podman-test-$$-$RANDOM:latest"
PY=/usr/bin/python3
S=
PODMAN_ARGS=()

# pm ARGS...: podman on the private store, bounded in time.  It runs in $T:
# conmon leaves a file named "oom" in its working directory when a container
# is OOM-killed.
pm () {
  (cd "$T" && exec timeout -k 5 "${PM_TIMEOUT:-90}" podman "${PODMAN_ARGS[@]}" "$@")
}

_podman_cleanup () {
  if [ -n "$S" ]; then
    pm rm -af -t 0 >/dev/null 2>&1
    pm rmi -af >/dev/null 2>&1
  fi
  podman_cgroups_restore
  # Whatever is still mounted under the stores (a podman killed by timeout,
  # an overlay store given up for vfs) would make the removal fail.
  awk -v t="$T/" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null
  done
  _tap_cleanup
}
trap _podman_cleanup EXIT
podman_cgroups_mark

# Limits at or below this shell's hard limits (see contrib/podman/containers.conf).
lim () { # lim VALUE CAP: VALUE, or CAP when VALUE is unlimited or above CAP
  case $1 in '' | *[!0-9]*) echo "$2" ;; *) [ "$1" -lt "$2" ] && echo "$1" || echo "$2" ;; esac
}
nofile=$(lim "$(ulimit -Hn)" 1048576)
nproc=$(lim "$(ulimit -Hu)" 32768)
export CONTAINERS_CONF="$T/containers.conf"
# podman 4 looks runtime_supports_* up by the name it was given: here that is
# the path $CSRUN (and "csrun" for the named runtime).
cat > "$CONTAINERS_CONF" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
events_logger = "file"
cgroup_manager = "cgroupfs"
runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", "csrun", "$CSRUN"]
runtime_supports_nocgroup = ["crun", "krun", "csrun", "$CSRUN"]

[engine.runtimes]
csrun = ["$CSRUN"]
EOF

# A private store; overlay when it works on this file system, else vfs
# (CSRUN_PODMAN_STORAGE_DRIVERS="vfs" forces one).
import_err=
for drv in ${CSRUN_PODMAN_STORAGE_DRIVERS:-overlay vfs}; do
  S="$T/$drv"
  mkdir -p "$S"/{root,runroot,tmp,net,volumes}
  PODMAN_ARGS=(--root "$S/root" --runroot "$S/runroot" --tmpdir "$S/tmp"
    --network-config-dir "$S/net" --volumepath "$S/volumes" --storage-driver "$drv"
    --cgroup-manager cgroupfs --events-backend file --runtime "$CSRUN")
  if import_err=$(zstd -dc "$CSRUN_TEST_ROOTFS" | pm import - "$IMAGE" 2>&1 >/dev/null); then
    break
  fi
  pm rmi -af >/dev/null 2>&1
  S=
done
if [ -z "$S" ]; then
  not_ok "podman import of $CSRUN_TEST_ROOTFS into a private store" "$import_err"
  done_testing
  exit
fi
ok "podman import of the test rootfs into a private $drv store"

# prun ARGS...: podman with the private store; stdin from $PIN (default
# /dev/null).  Sets cmd (for diagnostics), rc, out (stdout without \r: a tty
# writes \r\n) and err.
LAST_ARGS=()
prun () {
  LAST_ARGS=("$@")
  cmd=$(printf '%q ' podman "$@")
  [ -n "${PIN:-}" ] && cmd="$cmd< $PIN"
  pm "$@" <"${PIN:-/dev/null}" >"$T/stdout" 2>"$T/stderr"
  rc=$?
  out=$(tr -d '\r' <"$T/stdout")
  err=$(cat "$T/stderr")
}
# container_log: when the last command was `run --rm ...`, run it again kept
# (not --rm) and print what the container wrote: csrun's own error from inside
# the container (after create) lands there, while podman often reports only a
# consequence ("failed to connect to container's attach socket").
DBG_N=0
container_log () {
  [ "${LAST_ARGS[0]:-}" = run ] || return 0
  local a args=() name
  DBG_N=$((DBG_N + 1))
  name="csrun-debug-$DBG_N"
  for a in "${LAST_ARGS[@]:1}"; do
    [ "$a" = --rm ] || args+=("$a")
  done
  pm run --name "$name" "${args[@]}" </dev/null >/dev/null 2>&1
  echo "container log of the same command without --rm (podman logs):"
  pm logs "$name" 2>&1 | tail -n 20
  pm rm -f -t 0 "$name" >/dev/null 2>&1
}
# fail DESC [EXTRA...]: not_ok with the last command, its exit code and output.
fail () {
  local desc=$1
  shift
  local extra=("$@")
  # 125-127: podman or the runtime failed; what the container wrote says why.
  [ "$rc" -ge 125 ] 2>/dev/null && extra+=("$(container_log)")
  not_ok "$desc" "command: $cmd" "exit $rc" "stdout: $out" "stderr: $err" "${extra[@]}"
}
# expect DESC WANT_RC WANT_OUT: the last prun exited WANT_RC and printed WANT_OUT.
expect () {
  if [ "$rc" = "$2" ] && [ "$out" = "$3" ]; then
    ok "$1"
  else
    fail "$1" "want: exit $2, stdout '$3'"
  fi
}
# state NAME: the container's state as podman sees it.
state () {
  pm inspect -f '{{.State.Status}}' "$1" 2>&1
}
# host_cgroup_file PID CONTROLLER FILE_V1 FILE_V2: the file of PID's cgroup on the host.
host_cgroup_file () {
  local pid=$1 ctl=$2 path
  if [ -d "/sys/fs/cgroup/$ctl" ]; then
    path=$(awk -F: -v c="$ctl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$pid/cgroup")
    echo "/sys/fs/cgroup/$ctl$path/$3"
  else
    path=$(awk -F: '$1 == "0" { print $3 }' "/proc/$pid/cgroup")
    echo "/sys/fs/cgroup$path/$4"
  fi
}
now_ms () {
  echo $(($(date +%s%N) / 1000000))
}

# ---------------------------------------------------------------- run to completion
prun run --rm "$IMAGE" $PY -c 'print(42)'
expect "run --rm python3 -c 'print(42)' prints 42" 0 42

PIN="$T/stdin.txt"
printf 'hello csrun\nsecond line\n' > "$PIN"
prun run --rm -i "$IMAGE" $PY -c 'import sys; d = sys.stdin.read(); print(len(d.splitlines()), d.upper().strip())'
PIN=
expect "run -i: the container reads the piped stdin" 0 "2 HELLO CSRUN
SECOND LINE"

prun run --rm -t "$IMAGE" $PY -c 'import os; print(os.isatty(0), os.isatty(1))'
expect "run -t: stdin and stdout are a terminal (console socket), output arrives" 0 "True True"

PIN="$T/stdin.txt"
prun run --rm -i -t "$IMAGE" $PY -c 'import os; print(os.isatty(0), repr(input()))'
PIN=
# The tty echoes the input line back before the program's output.
if [ "$rc" = 0 ] && [ "$(printf '%s\n' "$out" | tail -n1)" = "True 'hello csrun'" ]; then
  ok "run -i -t: piped input reaches the program through the terminal"
else
  fail "run -i -t: piped input reaches the program through the terminal" "want last line: True 'hello csrun'"
fi

prun run --rm "$IMAGE" $PY -c 'raise SystemExit(7)'
expect "the exit code passes through (SystemExit(7) -> 7)" 7 ""

prun run --rm -t "$IMAGE" $PY -c 'raise SystemExit(5)'
expect "the exit code passes through with -t (5)" 5 ""

prun run --rm "$IMAGE" /no/such/program
if [ "$rc" = 127 ]; then
  ok "a missing executable: podman exits 127"
else
  fail "a missing executable: podman exits 127"
fi
if [ "$rc" = 127 ] && printf '%s' "$err" | grep -q '/no/such/program'; then
  ok "a missing executable: the error names the program"
else
  fail "a missing executable: the error names the program"
fi

prun run --rm --network none "$IMAGE" $PY -c 'import socket; print(sorted(n for i, n in socket.if_nameindex()))'
expect "--network none: only lo" 0 "['lo']"

# The bridge network makes podman (netavark) create a bridge and iptables
# chains on the host: only where that is wanted (CI sets it).
if [ "${CSRUN_TEST_BRIDGE:-0}" = 1 ]; then
  prun run --rm "$IMAGE" $PY -c 'import socket; print(sorted(n for i, n in socket.if_nameindex()))'
  expect "default (bridge) network: the container joins podman's network namespace (eth0, lo)" 0 "['eth0', 'lo']"
else
  skip "default (bridge) network joined by path" "n/a: it changes the host's network (set CSRUN_TEST_BRIDGE=1)"
fi

prun run --rm --network none -e FOO=bar -w /tmp --hostname csrun-host "$IMAGE" $PY -c 'import os, socket; print(os.environ.get("FOO"), os.getcwd(), socket.gethostname())'
expect "-e, -w and --hostname take effect" 0 "bar /tmp csrun-host"

prun run --rm --network none --user 1000:1000 "$IMAGE" $PY -c 'import os; print(os.getuid(), os.getgid(), os.getgroups())'
expect "--user 1000:1000 runs the program as uid/gid 1000" 0 "1000 1000 [1000]"

prun run --rm --network none --read-only "$IMAGE" $PY -c '
try:
    open("/x", "w")
    print("writable")
except OSError as e:
    print(e.errno)'
expect "--read-only: the root file system is read-only (EROFS)" 0 30

mkdir -p "$T/vol"
echo from-host > "$T/vol/in"
prun run --rm --network none -v "$T/vol:/data" "$IMAGE" $PY -c 'print(open("/data/in").read().strip()); open("/data/out", "w").write("from-container")'
if [ "$rc" = 0 ] && [ "$out" = from-host ] && [ "$(cat "$T/vol/out" 2>/dev/null)" = from-container ]; then
  ok "-v HOSTDIR:/data: a read-write bind mount, both ways"
else
  fail "-v HOSTDIR:/data: a read-write bind mount, both ways" "host file out: $(cat "$T/vol/out" 2>&1)"
fi

prun run --rm --network none --tmpfs /scratch "$IMAGE" $PY -c 'import os; open("/scratch/a", "w").write("x"); print(os.listdir("/scratch"), os.statvfs("/scratch").f_blocks > 0)'
expect "--tmpfs /scratch is writable" 0 "['a'] True"

CAPS='
caps = {}
for l in open("/proc/self/status"):
    k, v = l.split(":", 1)
    caps[k] = v.strip()
eff, bnd = int(caps["CapEff"], 16), int(caps["CapBnd"], 16)
print(eff == bnd, eff != 0, bool(eff & (1 << 21)), caps["Seccomp"])'
prun run --rm --network none "$IMAGE" $PY -c "$CAPS"
# podman's default set: effective = bounding, not empty, without CAP_SYS_ADMIN; seccomp filter mode.
expect "default capabilities (podman's set, no CAP_SYS_ADMIN) and a seccomp filter" 0 "True True False 2"

prun run --rm --network none --cap-drop ALL "$IMAGE" $PY -c "$CAPS"
expect "--cap-drop ALL: no capabilities" 0 "True False False 2"

prun run --rm --network none --init "$IMAGE" $PY -c 'import os; print(os.getpid() != 1, open("/proc/1/cmdline").read().split("\0")[0])'
expect "--init: podman's init is pid 1" 0 "True /run/podman-init"

prun run --rm --network none --cgroups=disabled "$IMAGE" $PY -c 'print("no cgroups")'
expect "--cgroups=disabled (csrun listed in runtime_supports_nocgroup)" 0 "no cgroups"

# ---------------------------------------------------------------- limits
MEMSEE='
import os
for f in ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"):
    if os.path.exists(f):
        print(open(f).read().strip())
        break
else:
    print("no memory cgroup file")'
prun run --rm --network none --memory 64m "$IMAGE" $PY -c "$MEMSEE"
expect "--memory 64m: the container sees its limit at /sys/fs/cgroup (as with runc)" 0 67108864

# The cgroup file systems in the container: read-only, rooted at the
# container's own cgroup (runc and crun bind only that), never the host's
# whole hierarchy.  The write test puts back the value it read.
CGMOUNTS='
import os
own = {}
for l in open("/proc/self/cgroup"):
    h, ctl, p = l.rstrip("\n").split(":", 2)
    for c in ctl.split(","):
        own[c] = p
bad = []
memfile = None
for m in open("/proc/self/mountinfo"):
    f = m.split()
    sep = f.index("-")
    fstype, root, mnt, opts = f[sep + 1], f[3], f[4], f[5].split(",")
    if fstype not in ("cgroup", "cgroup2"):
        continue
    key = "" if fstype == "cgroup2" else next((o for o in f[sep + 3].split(",") if o in own), None)
    p = own.get(key)
    if "ro" not in opts:
        bad.append(mnt + " is mounted rw")
    if p is not None and root != p:
        bad.append("%s shows cgroup %s, the container is in %s" % (mnt, root, p))
    if key == "memory" and p is not None and p.startswith(root):
        memfile = os.path.normpath(os.path.join(mnt, os.path.relpath(p, root), "memory.soft_limit_in_bytes"))
if memfile:
    # Write the value back unchanged: harmless, but it must fail (EROFS).
    try:
        v = open(memfile).read()
        fd = os.open(memfile, os.O_WRONLY)
        try:
            os.write(fd, v.strip().encode())
            bad.append("the container can write its own " + memfile)
        finally:
            os.close(fd)
    except OSError as e:
        pass
print("\n".join(bad) or "ok")
'
prun run --rm --network none --memory 64m "$IMAGE" $PY -c "$CGMOUNTS"
expect "/sys/fs/cgroup in the container: read-only, only the container's own cgroups (as with runc)" 0 ok

HOG='
b = []
for i in range(256):
    b.append(bytearray(16 << 20))
print("allocated", len(b) * 16, "MiB without being killed")'
prun run --rm --network none --memory 64m --memory-swap 64m "$IMAGE" $PY -c "$HOG"
expect "--memory 64m: a memory hog is OOM-killed (exit 137)" 137 ""

FORK='
import os, time
n, err = 0, None
for i in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        err = e.errno
        break
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    n += 1
print(n, err)'
prun run --rm --network none --pids-limit 20 "$IMAGE" $PY -c "$FORK"
read -r forks forkerr <<<"$out"
if [ "$rc" = 0 ] && [ "${forkerr:-}" = 11 ] && [ "${forks:-0}" -ge 1 ] 2>/dev/null && [ "$forks" -lt 20 ]; then
  ok "--pids-limit 20: a fork bomb is contained ($forks forks, then EAGAIN)"
else
  fail "--pids-limit 20: a fork bomb is contained" "want: fewer than 20 forks, then errno 11 (EAGAIN)"
fi

prun ps -aq
expect "run --rm left no container behind" 0 ""

# ---------------------------------------------------------------- a detached container
SERVER='
import signal, sys, time
def on(sig, frame):
    print("got", sig, flush=True)
    if sig == signal.SIGTERM:
        sys.exit(0)
signal.signal(signal.SIGTERM, on)
signal.signal(signal.SIGUSR1, on)
print("ready", flush=True)
while True:
    time.sleep(0.05)'
# wait_log NAME TEXT: wait up to 10 s for TEXT in the container's log.
wait_log () {
  local i
  for i in $(seq 100); do
    pm logs "$1" 2>/dev/null | grep -qx "$2" && return 0
    sleep 0.1
  done
  return 1
}

prun run -d --name c1 --network none --memory 64m --pids-limit 20 "$IMAGE" $PY -u -c "$SERVER"
c1_ok=0
if [ "$rc" = 0 ] && wait_log c1 ready; then
  ok "run -d: the detached container starts and logs (podman logs)"
  c1_ok=1
else
  fail "run -d: the detached container starts and logs (podman logs)" "logs: $(pm logs c1 2>&1)"
fi

if [ $c1_ok = 1 ]; then
  prun ps --format '{{.Names}} {{.Status}}'
  if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^c1 Up'; then
    ok "podman ps shows it running"
  else
    fail "podman ps shows it running"
  fi
  s=$(state c1)
  [ "$s" = running ] && ok "podman inspect: running" || not_ok "podman inspect: running" "state: $s"

  pid=$(pm inspect -f '{{.State.Pid}}' c1)
  f=$(host_cgroup_file "$pid" memory memory.limit_in_bytes memory.max)
  v=$(cat "$f" 2>&1)
  [ "$v" = 67108864 ] && ok "--memory 64m: the host cgroup has the limit" \
    || not_ok "--memory 64m: the host cgroup has the limit" "pid $pid: $f: $v" "$(cat "/proc/$pid/cgroup" 2>&1)"
  f=$(host_cgroup_file "$pid" pids pids.max pids.max)
  v=$(cat "$f" 2>&1)
  [ "$v" = 20 ] && ok "--pids-limit 20: the host cgroup has the limit" \
    || not_ok "--pids-limit 20: the host cgroup has the limit" "pid $pid: $f: $v" "$(cat "/proc/$pid/cgroup" 2>&1)"

  prun exec c1 $PY -c 'import os; print(6 * 7, os.getpid() != 1)'
  expect "podman exec: runs a process in the container" 0 "42 True"

  prun exec c1 $PY -c 'raise SystemExit(3)'
  expect "podman exec: the exit code passes through (3)" 3 ""

  # csrun exec exits 255 for a program it can't start (runc); podman maps
  # the message to its own statuses.
  prun exec c1 /no/such/program
  [ "$rc" = 127 ] && ok "podman exec of a missing program: 127" ||
    fail "podman exec of a missing program: 127" "exit $rc: $err"
  prun exec c1 no-such-program
  [ "$rc" = 127 ] && ok "podman exec of a program not in PATH: 127" ||
    fail "podman exec of a program not in PATH: 127" "exit $rc: $err"

  PIN="$T/stdin.txt"
  prun exec -i c1 $PY -c 'import sys; print(sys.stdin.readline().strip()[::-1])'
  PIN=
  expect "podman exec -i: stdin reaches the process" 0 "nursc olleh"

  prun exec -t c1 $PY -c 'import os; print(os.isatty(1))'
  expect "podman exec -t: the process has a terminal" 0 "True"

  prun top c1
  if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q python3; then
    ok "podman top lists the container's processes"
  elif printf '%s' "$err" | grep -qi 'not supported\|unsupported'; then
    skip "podman top lists the container's processes" "not supported here: $err"
  else
    fail "podman top lists the container's processes"
  fi

  prun kill -s USR1 c1
  if [ "$rc" = 0 ] && wait_log c1 "got 10"; then
    ok "podman kill -s USR1: the signal arrives"
  else
    fail "podman kill -s USR1: the signal arrives" "logs: $(pm logs c1 2>&1)"
  fi

  freezer=$(host_cgroup_file "$pid" freezer freezer.state cgroup.freeze)
  prun pause c1
  s=$(state c1)
  fz=$(cat "$freezer" 2>&1)
  if [ "$rc" = 0 ] && [ "$s" = paused ] && { [ "$fz" = FROZEN ] || [ "$fz" = 1 ]; }; then
    ok "podman pause: paused, and the cgroup is frozen"
  else
    fail "podman pause: paused, and the cgroup is frozen" "state: $s" "$freezer: $fz"
  fi
  prun ps -a --format '{{.Names}} {{.Status}}'
  printf '%s\n' "$out" | grep -q '^c1 Paused' && ok "podman ps -a shows it paused" || fail "podman ps -a shows it paused"

  prun unpause c1
  s=$(state c1)
  fz=$(cat "$freezer" 2>&1)
  if [ "$rc" = 0 ] && [ "$s" = running ] && { [ "$fz" = THAWED ] || [ "$fz" = 0 ]; }; then
    ok "podman unpause: running again, the cgroup is thawed"
  else
    fail "podman unpause: running again, the cgroup is thawed" "state: $s" "$freezer: $fz"
  fi

  t0=$(now_ms)
  prun stop -t 10 c1
  t=$(($(now_ms) - t0))
  s=$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' c1 2>&1)
  # Exit 0, not 137: SIGTERM did it; podman's SIGKILL would come at 10 s.
  if [ "$rc" = 0 ] && [ "$s" = "exited 0" ] && [ $t -lt 10000 ] && pm logs c1 2>/dev/null | grep -qx "got 15"; then
    ok "podman stop: SIGTERM reaches the program, which exits 0 (${t} ms)"
  else
    fail "podman stop: SIGTERM reaches the program, which exits 0" "took $t ms; state: $s" "logs: $(pm logs c1 2>&1)"
  fi

  prun start c1
  if [ "$rc" = 0 ] && [ "$(state c1)" = running ]; then
    ok "podman start: a stopped container starts again"
  else
    fail "podman start: a stopped container starts again" "state: $(state c1)"
  fi
fi

prun run -d --name c2 --network none "$IMAGE" $PY -c 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)'
if [ "$rc" = 0 ]; then
  sleep 0.5
  t0=$(now_ms)
  prun stop -t 2 c2
  t=$(($(now_ms) - t0))
  s=$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' c2 2>&1)
  if [ "$rc" = 0 ] && [ "$s" = "exited 137" ] && [ $t -ge 1900 ] && [ $t -lt 15000 ]; then
    ok "podman stop -t 2: a program ignoring SIGTERM gets SIGKILL after 2 s (${t} ms, exit 137)"
  else
    fail "podman stop -t 2: a program ignoring SIGTERM gets SIGKILL after 2 s" "took $t ms; state: $s"
  fi
else
  fail "podman stop -t 2: a program ignoring SIGTERM gets SIGKILL after 2 s (run -d)"
fi

prun run -d --name c3 --network none "$IMAGE" $PY -c 'import time; time.sleep(120)'
if [ "$rc" = 0 ]; then
  pid=$(pm inspect -f '{{.State.Pid}}' c3 2>/dev/null)
  prun rm -f c3
  gone=1
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || { gone=0; break; }
    sleep 0.1
  done
  left=$(pm ps -a -q --filter name=c3 2>&1)
  if [ "$rc" = 0 ] && [ -z "$left" ] && [ "$gone" = 0 ]; then
    ok "podman rm -f: a running container is killed and removed"
  else
    fail "podman rm -f: a running container is killed and removed" "still listed: $left" "pid $pid alive: $((1 - gone))"
  fi
else
  fail "podman rm -f: a running container is killed and removed (run -d)"
fi

prun run -d --name c4 --network none "$IMAGE" $PY -c 'import time; print("bye", flush=True); time.sleep(0.5); raise SystemExit(4)'
if [ "$rc" = 0 ]; then
  prun wait c4
  expect "podman wait: returns the exit code of a detached container (4)" 0 4
  prun logs c4
  expect "podman logs: the output of an exited container" 0 bye
else
  fail "podman wait: returns the exit code of a detached container (run -d)"
fi

prun run -d --name c5 --network none "$IMAGE" $PY -c 'import time; time.sleep(120)'
if [ "$rc" = 0 ]; then
  prun kill c5
  k=$rc
  prun wait c5
  if [ "$k" = 0 ] && [ "$out" = 137 ]; then
    ok "podman kill: SIGKILL, exit 137"
  else
    fail "podman kill: SIGKILL, exit 137" "kill exit: $k"
  fi
else
  fail "podman kill: SIGKILL, exit 137 (run -d)"
fi

prun rm -af -t 0
left=$(pm ps -aq 2>&1)
[ "$rc" = 0 ] && [ -z "$left" ] && ok "podman rm -af removes every container" \
  || fail "podman rm -af removes every container" "left: $left"

# ---------------------------------------------------------------- devices
# podman sends "deny all" and an allow rule per --device: csrun enforces them
# (tests/oci/devices.sh has the details).  /dev/kmsg is opened for writing
# only (nothing is written).
KMSG_PROBE='import os
try:
    os.close(os.open("/dev/kmsg", os.O_WRONLY)); print("ok")
except OSError as e:
    print(e.strerror)'
prun run --rm --device /dev/kmsg "$IMAGE" $PY -c "$KMSG_PROBE"
expect "--device /dev/kmsg: the device cgroup lets the container open it" 0 ok
prun run --rm --device /dev/kmsg:/dev/kmsg:r "$IMAGE" $PY -c "$KMSG_PROBE"
expect "--device /dev/kmsg:/dev/kmsg:r: not for writing (EPERM from the device cgroup)" 0 "Operation not permitted"

# ---------------------------------------------------------------- sd_notify (fix-crun2)
# --sdnotify=container: podman hands NOTIFY_SOCKET on to the runtime; csrun
# gives the container a socket of its own and forwards its READY=1.
rm -f "$T/pm-notify.sock" "$T/pm-notify.got"
python3 - "$T/pm-notify.sock" "$T/pm-notify.got" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
try:
    while True:
        d = s.recv(4096)
        with open(sys.argv[2], "a") as f:
            f.write(d.decode() + "\n")
except socket.timeout:
    pass
PYEOF
notify_recv=$!
for _ in $(seq 100); do [ -S "$T/pm-notify.sock" ] && break; sleep 0.05; done
NOTIFY_PY='import os, socket
p = os.environ.get("NOTIFY_SOCKET", "")
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"READY=1", p)
print("sent")'
NOTIFY_SOCKET=$T/pm-notify.sock prun run --rm --sdnotify=container "$IMAGE" $PY -c "$NOTIFY_PY"
for _ in $(seq 100); do grep -q '^READY=1$' "$T/pm-notify.got" 2>/dev/null && break; sleep 0.05; done
if [ "$rc" = 0 ] && [ "$out" = sent ] && grep -q '^READY=1$' "$T/pm-notify.got" 2>/dev/null; then
  ok "run --sdnotify=container: the container's READY=1 reaches podman's NOTIFY_SOCKET"
else
  fail "run --sdnotify=container: the container's READY=1 reaches podman's NOTIFY_SOCKET" \
    "received: $(cat "$T/pm-notify.got" 2>/dev/null)"
fi
kill "$notify_recv" 2>/dev/null
wait "$notify_recv" 2>/dev/null

# ---------------------------------------------------------------- configuration
prun --runtime csrun info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}'
expect "the runtime named csrun in [engine.runtimes] resolves to \$CSRUN" 0 "csrun $CSRUN"

# contrib/podman/containers.conf parses, every key is known to this podman
# (unknown keys are ignored silently, only a debug message names them), and
# the runtime named csrun resolves (from its paths or, failing them, $PATH).
CONF="$CSRUN_SRCDIR/contrib/podman/containers.conf"
cmd="CONTAINERS_CONF=$CONF podman --log-level debug --runtime csrun info"
out=$(PATH="$(dirname "$CSRUN"):$PATH" CONTAINERS_CONF="$CONF" timeout 60 podman "${PODMAN_ARGS[@]:0:${#PODMAN_ARGS[@]}-2}" \
  --log-level debug --runtime csrun info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}' 2>"$T/stderr")
rc=$?
err=$(grep -v 'level=debug' "$T/stderr" | tail -n 20)
undecoded=$(grep 'Failed to decode' "$T/stderr")
if [ "$rc" = 0 ] && [ -z "$undecoded" ] && [ "${out%% *}" = csrun ] && [ "${out##*/}" = csrun ]; then
  ok "contrib/podman/containers.conf: podman accepts every key and finds csrun"
else
  fail "contrib/podman/containers.conf: podman accepts every key and finds csrun" "$undecoded"
fi

# What conmon made in the host's cgroup tree goes again (see tests/lib/podman-cgroups.sh).
if [ -n "$S" ]; then
  pm rm -af -t 0 >/dev/null 2>&1
  podman_cgroups_restore
  left=$(find /sys/fs/cgroup -maxdepth 3 -type d 2>/dev/null | LC_ALL=C sort \
    | LC_ALL=C comm -13 "$PODMAN_CGROUPS_BEFORE" - | grep libpod_parent)
  [ -z "$left" ] && ok "podman leaves no libpod_parent cgroup of its own behind" \
    || not_ok "podman leaves no libpod_parent cgroup of its own behind" "$left"
fi

done_testing
