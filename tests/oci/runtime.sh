#!/bin/bash
# The OCI runtime command line without a client: bundles made here from the
# test rootfs, driven with create/start/state/kill/delete/exec/run/list/ps/
# pause/resume/spec/features, config.json hooks, --preserve-fds, the log
# file.  Runs as root and as an unprivileged user (a rootless bundle with a
# user namespace); what needs a cgroup runs as root only.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
PY=/usr/bin/python3
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT

# A bundle: BUNDLE/rootfs from the test rootfs, config.json from `csrun spec`.
. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
status_of () { "${C[@]}" state "$1" 2>/dev/null | json_get /dev/stdin 'j["status"]' 2>/dev/null; }

# ---------------------------------------------------------------- spec, features, version
S=$T/spec
mkdir -p "$S"
if (cd "$S" && "$CSRUN" spec) && json_get "$S/config.json" 'j["process"]["args"]' | grep -q sh; then
  ok "spec writes a default config.json"
else
  not_ok "spec writes a default config.json"
fi
out=$(cd "$S" && "$CSRUN" spec 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ $out == *"already exists"* ]] && ok "spec refuses to overwrite config.json" ||
  not_ok "spec refuses to overwrite config.json" "exit $rc: $out"
rm -f "$S/config.json"
if (cd "$S" && "$CSRUN" spec --rootless) &&
  [ "$(json_get "$S/config.json" '[n["type"] for n in j["linux"]["namespaces"] if n["type"] == "user"], j["linux"]["uidMappings"][0]["hostID"]')" = "(['user'], $(id -u))" ]; then
  ok "spec --rootless maps the caller to root in a user namespace"
else
  not_ok "spec --rootless" "$(cat "$S/config.json")"
fi
if "$CSRUN" features | json_get /dev/stdin '(j["ociVersionMax"], "prestart" in j["hooks"], j["linux"]["seccomp"]["enabled"])' | grep -qx "('1.2.0', True, True)"; then
  ok "features prints the runtime-spec features document"
else
  not_ok "features" "$("$CSRUN" features 2>&1)"
fi
v=$("$CSRUN" --version)
if [[ $(sed -n 1p <<<"$v") == "csrun version "* && $(sed -n 2p <<<"$v") == "commit: "* &&
  $(sed -n 3p <<<"$v") == "spec: 1."* ]]; then
  ok "--version keeps runc's three-line shape"
else
  not_ok "--version keeps runc's three-line shape" "$v"
fi

# ---------------------------------------------------------------- lifecycle
B=$T/b1
make_bundle "$B" "$(args 'import time; time.sleep(60)')"
# The container keeps create's stdio: never capture it with $(...).
"${C[@]}" create -b "$B" --pid-file "$T/b1.pid" c1 >"$T/create.out" 2>&1 </dev/null
rc=$?
out=$(cat "$T/create.out")
if [ "$rc" = 0 ] && [ -z "$out" ] && [ "$(status_of c1)" = created ]; then
  ok "create: exit 0, prints nothing, the container is 'created'"
else
  not_ok "create" "exit $rc: $out" "$("${C[@]}" state c1 2>&1)"
fi
pid=$("${C[@]}" state c1 | json_get /dev/stdin 'j["pid"]')
if [ "$(cat "$T/b1.pid" 2>/dev/null)" = "$pid" ] && [ -d "/proc/$pid" ]; then
  ok "the pid file holds the container's host pid"
else
  not_ok "the pid file holds the container's host pid" "file: $(cat "$T/b1.pid" 2>&1), state: $pid"
fi
"${C[@]}" create -b "$B" c1 >"$T/create2.out" 2>&1 </dev/null
out=$(cat "$T/create2.out")
[[ $out == *"already exists"* ]] && ok "create with a taken id: already exists" ||
  not_ok "create with a taken id" "$out"
"${C[@]}" start c1 && [ "$(status_of c1)" = running ] && ok "start: running" ||
  not_ok "start" "$("${C[@]}" state c1 2>&1)"
out=$("${C[@]}" start c1 2>&1)
[[ $out == *"not created"* ]] && ok "start twice is refused" || not_ok "start twice is refused" "$out"
"${C[@]}" list | grep -q "^c1 .*running" && ok "list shows it running" ||
  not_ok "list" "$("${C[@]}" list 2>&1)"
ps_json=$("${C[@]}" ps --format json c1)
[ "$ps_json" = "[$pid]" ] && ok "ps --format json lists the container's process" ||
  not_ok "ps --format json" "$ps_json (pid $pid)"
out=$("${C[@]}" exec c1 "$PY" -c 'import os; print(os.getpid() != 1, os.path.exists("/proc/1"))' 2>&1)
[ "$out" = "True True" ] && ok "exec runs a second process in the container's pid namespace" ||
  not_ok "exec" "$out"
"${C[@]}" exec c1 "$PY" -c 'raise SystemExit(9)'
rc=$?
[ "$rc" = 9 ] && ok "exec exits with the process's status" || not_ok "exec exit status" "exit $rc"
printf '{"args": ["%s", "-c", "import os; print(os.environ[\\"X\\"], os.getcwd())"], "env": ["X=from-process-json"], "cwd": "/tmp", "user": {"uid": 0, "gid": 0}}' "$PY" >"$T/proc.json"
out=$("${C[@]}" exec --process "$T/proc.json" c1 2>&1)
[ "$out" = "from-process-json /tmp" ] && ok "exec --process takes a runtime-spec process object" ||
  not_ok "exec --process" "$out"
out=$("${C[@]}" exec c1 /no/such/program 2>&1)
rc=$?
[ "$rc" = 255 ] && ok "exec of a missing program exits 255 (runc)" || not_ok "exec of a missing program" "exit $rc: $out"
out=$("${C[@]}" kill c1 NOSUCH 2>&1)
[[ $out == *"unknown signal"* ]] && ok "kill with an unknown signal name is refused" ||
  not_ok "kill NOSUCH" "$out"
out=$("${C[@]}" delete c1 2>&1)
[[ $out == *"not stopped"* ]] && ok "delete of a running container is refused without --force" ||
  not_ok "delete without --force" "$out"
"${C[@]}" kill c1 SIGKILL
for _ in $(seq 100); do [ "$(status_of c1)" = stopped ] && break; sleep 0.05; done
[ "$(status_of c1)" = stopped ] && ok "kill SIGKILL: stopped" || not_ok "kill SIGKILL" "$(status_of c1)"
"${C[@]}" delete c1 && ! "${C[@]}" state c1 >/dev/null 2>&1 && ok "delete removes it" ||
  not_ok "delete"
out=$("${C[@]}" state c1 2>&1)
[[ $out == *"does not exist"* ]] && ok "state of an unknown id: does not exist" || not_ok "state unknown" "$out"
"${C[@]}" delete --force nosuch && ok "delete --force of an unknown id exits 0" ||
  not_ok "delete --force unknown"

# ---------------------------------------------------------------- kill --all, list --format json, --no-pivot
make_bundle "$T/b9" "$(args 'import os, time
if os.fork() == 0:
    time.sleep(60)
time.sleep(60)')"
"${C[@]}" create -b "$T/b9" c9 >/dev/null 2>&1 </dev/null && "${C[@]}" start c9
for _ in $(seq 50); do [ "$("${C[@]}" ps --format json c9 | tr -cd , | wc -c)" -ge 1 ] && break; sleep 0.05; done
n=$("${C[@]}" ps --format json c9 | json_get /dev/stdin 'len(j)')
if [ "$n" = 2 ] && "${C[@]}" list --format json | json_get /dev/stdin '[c["id"] for c in j]' | grep -q "'c9'"; then
  ok "ps lists both processes; list --format json lists the container"
else
  not_ok "ps / list --format json" "ps: $("${C[@]}" ps --format json c9)" "$("${C[@]}" list --format json)"
fi
"${C[@]}" kill --all c9 KILL
for _ in $(seq 100); do [ "$(status_of c9)" = stopped ] && break; sleep 0.05; done
[ "$(status_of c9)" = stopped ] && ok "kill --all KILL stops every process of the container" ||
  not_ok "kill --all" "$(status_of c9)"
"${C[@]}" delete c9
make_bundle "$T/b10" "$(args 'import os; print(os.path.exists("/usr/bin/python3"), os.getcwd())')"
out=$("${C[@]}" run --no-pivot -b "$T/b10" c10 2>&1)
[ "$out" = "True /" ] && ok "--no-pivot: the rootfs moved to / and chrooted into" || not_ok "--no-pivot" "$out"

# ---------------------------------------------------------------- sysctl, oomScoreAdj, a joined namespace
adj=500
# (lowering it needs CAP_SYS_RESOURCE, which root lacks on some hosts, these VMs among them)
make_bundle "$T/b11" "$(args 'print(open("/proc/sys/net/ipv4/ip_default_ttl").read().strip(), open("/proc/self/oom_score_adj").read().strip())'); c[\"linux\"][\"sysctl\"] = {\"net.ipv4.ip_default_ttl\": \"33\"}; c[\"process\"][\"oomScoreAdj\"] = $adj"
out=$("${C[@]}" run -b "$T/b11" c11 2>&1)
[ "$out" = "33 $adj" ] && ok "linux.sysctl is written (before /proc/sys turns read-only) and oomScoreAdj set ($adj)" ||
  not_ok "sysctl and oomScoreAdj" "$out"
if is_root; then
  make_bundle "$T/b12" "$(args 'import time; time.sleep(60)'); c[\"hostname\"] = \"alpha\""
  "${C[@]}" create -b "$T/b12" c12 >/dev/null 2>&1 </dev/null && "${C[@]}" start c12
  p12=$("${C[@]}" state c12 | json_get /dev/stdin 'j["pid"]')
  make_bundle "$T/b13" "$(args 'import socket; print(socket.gethostname())'); c[\"hostname\"] = None; c[\"linux\"][\"namespaces\"] = [n if n[\"type\"] != \"uts\" else {\"type\": \"uts\", \"path\": \"/proc/$p12/ns/uts\"} for n in c[\"linux\"][\"namespaces\"]]"
  out=$("${C[@]}" run -b "$T/b13" c13 2>&1)
  [ "$out" = alpha ] && ok "a namespace joined by path (the uts namespace of another container)" ||
    not_ok "join a namespace by path" "$out"
  # A pid namespace by path (a pod's shared process namespace): the second
  # container's process is not pid 1 and sees the first one's.
  make_bundle "$T/b14" "$(args 'import os; print(os.getpid() != 1, open("/proc/1/cmdline").read().split(chr(0))[-2])'); c[\"linux\"][\"namespaces\"] = [n if n[\"type\"] != \"pid\" else {\"type\": \"pid\", \"path\": \"/proc/$p12/ns/pid\"} for n in c[\"linux\"][\"namespaces\"]]"
  out=$("${C[@]}" run -b "$T/b14" c14 2>&1)
  [ "$out" = "True import time; time.sleep(60)" ] &&
    ok "a pid namespace joined by path: the process sees the other container's pid 1" ||
    not_ok "join a pid namespace by path" "$out"
  "${C[@]}" delete --force c12
else
  skip "join a namespace by path" "n/a: root only (another container's namespaces belong to root)"
  # Rootless: a user namespace by path (the first container's), the second
  # container's other namespaces made inside it.
  make_bundle "$T/b12" "$(args 'import time; time.sleep(60)')"
  "${C[@]}" create -b "$T/b12" c12 >/dev/null 2>&1 </dev/null && "${C[@]}" start c12
  p12=$("${C[@]}" state c12 | json_get /dev/stdin 'j["pid"]')
  make_bundle "$T/b15" "$(args 'import os; print(open("/proc/self/uid_map").read().split()[:2], os.getuid())'); c[\"linux\"][\"namespaces\"] = [n if n[\"type\"] != \"user\" else {\"type\": \"user\", \"path\": \"/proc/$p12/ns/user\"} for n in c[\"linux\"][\"namespaces\"]]; c[\"linux\"].pop(\"uidMappings\"); c[\"linux\"].pop(\"gidMappings\")"
  out=$("${C[@]}" run -b "$T/b15" c15 2>&1)
  [ "$out" = "['0', '$(id -u)'] 0" ] &&
    ok "a user namespace joined by path: the other container's id map, root inside" ||
    not_ok "join a user namespace by path" "$out"
  "${C[@]}" delete --force c12
fi

# ---------------------------------------------------------------- run, errors, log
make_bundle "$T/b2" "$(args 'import os; print("pid", os.getpid()); raise SystemExit(7)')"
out=$("${C[@]}" run -b "$T/b2" c2 2>&1)
rc=$?
[ "$rc" = 7 ] && [[ $out == "pid 1" ]] && ok "run: the process is pid 1 and its status passes through" ||
  not_ok "run" "exit $rc: $out"
"${C[@]}" state c2 >/dev/null 2>&1 && not_ok "run deletes the container when it ends" ||
  ok "run deletes the container when it ends"
make_bundle "$T/b3" 'c["process"]["args"] = ["no-such-program"]'
"${C[@]}" --log "$T/log.json" --log-format json create -b "$T/b3" c3 >"$T/create3.out" 2>&1 </dev/null
rc=$?
out=$(cat "$T/create3.out")
if [ "$rc" = 1 ] && [[ $out == *"not found"* ]] && ! "${C[@]}" state c3 >/dev/null 2>&1 &&
  json_get "$T/log.json" 'j["level"], "not found" in j["msg"], "time" in j' 2>/dev/null | grep -qx "('error', True, True)"; then
  ok "a missing executable fails create ('not found'), leaves nothing, and is logged as JSON"
else
  not_ok "missing executable at create" "exit $rc: $out" "$(cat "$T/log.json" 2>&1)"
fi
mkdir -p "$T/xdg"
out=$(env -i XDG_RUNTIME_DIR="$T/xdg" "$CSRUN" list -q 2>&1)
[ $? = 0 ] && [ -d "$T/xdg/csrun" ] && ok "the state directory defaults to \$XDG_RUNTIME_DIR/csrun (nothing else in the environment)" ||
  not_ok "XDG_RUNTIME_DIR default" "$out"

# ---------------------------------------------------------------- seccomp (cached)
make_bundle "$T/b8" "$(args 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.unshare(0x10000000)
print("unshare allowed" if r == 0 else "unshare denied %d" % ctypes.get_errno())'); import json as J; c[\"linux\"][\"seccomp\"] = J.load(open(\"$CSRUN_SRCDIR/policies/seccomp/default.json\"))"
out1=$("${C[@]}" run -b "$T/b8" c8 2>&1)
out2=$("${C[@]}" run -b "$T/b8" c8 2>&1)
cached=$(find "$R/@cache" -name '*.bpf' 2>/dev/null | wc -l)
if [ "$out1" = "unshare denied 1" ] && [ "$out2" = "$out1" ] && [ "$cached" -ge 1 ] &&
  ! "${C[@]}" list -q | grep -q cache; then
  ok "linux.seccomp is enforced, and its compiled filter is cached under the state root"
else
  not_ok "linux.seccomp (cached)" "first: $out1" "second: $out2" "cached files: $cached" "$("${C[@]}" list -q)"
fi
# The cache is trusted only as csrun wrote it, in a directory only we can write.
for f in "$R"/@cache/seccomp/*.bpf; do
  python3 -c 'import struct, sys
sys.stdout.buffer.write(struct.pack("<HBBI", 0x20, 0, 0, 4) + struct.pack("<HBBI", 6, 0, 0, 0x7fff0000))' >"$f"
done
out3=$("${C[@]}" run -b "$T/b8" c8 2>&1)
[ "$out3" = "unshare denied 1" ] && ok "an allow-all program planted in the OCI seccomp cache is rebuilt, not loaded" ||
  not_ok "a planted OCI seccomp cache entry is not loaded" "$out3"
chmod 777 "$R/@cache"
out4=$("${C[@]}" run -b "$T/b8" c8 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out4 == *"'$R/@cache': refused: writable by group or others"* ]] &&
  ! "${C[@]}" list -q | grep -q c8 &&
  ok "a seccomp cache under the state root that others can write is refused, naming it" ||
  not_ok "an untrusted OCI seccomp cache is refused" "exit $rc" "$out4"
chmod 700 "$R/@cache"
if is_root; then
  chown -R nobody "$R/@cache"
  out5=$("${C[@]}" run -b "$T/b8" c8 2>&1)
  rc=$?
  [ "$rc" != 0 ] && [[ $out5 == *"'$R/@cache': refused: owned by nobody (uid 65534)"* ]] &&
    ok "root: a seccomp cache under the state root owned by another user is refused" ||
    not_ok "root: another user's OCI seccomp cache is refused" "exit $rc" "$out5"
  chown -R root "$R/@cache"
fi

# ---------------------------------------------------------------- preserved fds
make_bundle "$T/b4" "$(args 'import os; os.write(3, b"through fd 3\n")')"
"${C[@]}" run -b "$T/b4" --preserve-fds 1 c4 3>"$T/fd3.out"
[ "$(cat "$T/fd3.out")" = "through fd 3" ] && ok "--preserve-fds 1: the process writes to fd 3" ||
  not_ok "--preserve-fds" "$(cat "$T/fd3.out")"

# ---------------------------------------------------------------- hooks
H=$T/hooks
mkdir -p "$H"
# record STAGE: the state on stdin, the cwd, the mount namespace.  Python:
# startContainer hooks run inside the container, whose image has no shell tools.
cat >"$H/record" <<EOF
#!/usr/bin/python3
import os, sys
stage = sys.argv[1]
open("$H/" + stage + ".state", "w").write(sys.stdin.read())
open("$H/" + stage + ".out", "w").write(os.getcwd() + "\\n" + os.readlink("/proc/self/ns/mnt") + "\\n")
EOF
cat >"$H/slow" <<'EOF'
#!/bin/sh
exec sleep 30
EOF
chmod +x "$H/record" "$H/slow"
hooks='c["hooks"] = {s: [{"path": "'$H'/record", "args": ["record", s]}] for s in ["prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"]}; c["mounts"].append({"destination": "'$H'", "type": "bind", "source": "'$H'", "options": ["rbind"]})'
make_bundle "$T/b5" "$(args 'print("ran")'); $hooks"
out=$("${C[@]}" run -b "$T/b5" c5 2>&1)
rc=$?
missing=
for s in prestart createRuntime createContainer startContainer poststart poststop; do
  [ -s "$H/$s.out" ] || missing+=" $s"
done
if [ "$rc" = 0 ] && [ "$out" = ran ] && [ -z "$missing" ]; then
  ok "all six hook stages run"
else
  not_ok "all six hook stages run" "exit $rc: $out" "missing:$missing"
fi
if [ -s "$H/prestart.state" ] && json_get "$H/prestart.state" '(j["id"], j["pid"] > 0, j["status"])' | grep -qx "('c5', True, 'created')" &&
  [ "$(sed -n 1p "$H/prestart.out")" = "$T/b5" ]; then
  ok "prestart: the state on stdin (id, pid, status created, as crun says) and the bundle as working directory"
else
  not_ok "prestart state and cwd" "$(cat "$H/prestart.state" "$H/prestart.out" 2>&1)"
fi
host_mnt=$(readlink /proc/self/ns/mnt)
if [ -s "$H/createContainer.out" ] && [ "$(sed -n 2p "$H/createContainer.out")" != "$host_mnt" ] &&
  [ "$(sed -n 2p "$H/createRuntime.out")" = "$host_mnt" ]; then
  ok "createRuntime runs in the runtime's mount namespace, createContainer in the container's"
else
  not_ok "hook namespaces" "host $host_mnt" "$(cat "$H/createRuntime.out" "$H/createContainer.out" 2>&1)"
fi
make_bundle "$T/b6" "$(args 'print("must not run")'); c[\"hooks\"] = {\"prestart\": [{\"path\": \"$H/slow\", \"timeout\": 1}]}"
start=$SECONDS
out=$("${C[@]}" run -b "$T/b6" c6 2>&1)
rc=$?
# The message says the 1 s timeout fired; the wall-clock bound only has to
# tell that from the hook's 30 s sleep (a loaded machine needs room).
if [ "$rc" != 0 ] && [[ $out == *"timed out after 1 s"* ]] && [[ $out != *"must not run"* ]] &&
  [ $((SECONDS - start)) -lt 25 ] && ! "${C[@]}" state c6 >/dev/null 2>&1; then
  ok "a prestart hook past its timeout fails the container (and leaves nothing)"
else
  not_ok "hook timeout" "exit $rc after $((SECONDS - start)) s: $out"
fi

# ---------------------------------------------------------------- cgroups: pause, resume, limits
if is_root; then
  make_bundle "$T/b7" "$(args 'import time; time.sleep(60)'); c[\"linux\"][\"resources\"] = {\"memory\": {\"limit\": 67108864}, \"pids\": {\"limit\": 16}}; c[\"linux\"][\"cgroupsPath\"] = \"/csrun-test-$$/c7\""
  "${C[@]}" create -b "$T/b7" c7 >/dev/null 2>&1 </dev/null && "${C[@]}" start c7
  mem=$(cat /sys/fs/cgroup/memory/csrun-test-$$/c7/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/csrun-test-$$/c7/memory.max 2>/dev/null)
  [ "$mem" = 67108864 ] && ok "linux.resources.memory.limit is written at linux.cgroupsPath" ||
    not_ok "memory limit at cgroupsPath" "got '$mem'"
  printf '{"memory": {"limit": 134217728}, "pids": {"limit": 32}}' >"$T/res.json"
  "${C[@]}" update --resources "$T/res.json" c7
  mem=$(cat /sys/fs/cgroup/memory/csrun-test-$$/c7/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/csrun-test-$$/c7/memory.max 2>/dev/null)
  pids=$(cat /sys/fs/cgroup/pids/csrun-test-$$/c7/pids.max 2>/dev/null || cat /sys/fs/cgroup/csrun-test-$$/c7/pids.max 2>/dev/null)
  [ "$mem $pids" = "134217728 32" ] && ok "update --resources changes the running container's limits" ||
    not_ok "update --resources" "memory $mem pids $pids"
  "${C[@]}" update --pids-limit 48 c7
  pids=$(cat /sys/fs/cgroup/pids/csrun-test-$$/c7/pids.max 2>/dev/null || cat /sys/fs/cgroup/csrun-test-$$/c7/pids.max 2>/dev/null)
  [ "$pids" = 48 ] && ok "update --pids-limit" || not_ok "update --pids-limit" "pids $pids"
  "${C[@]}" pause c7 && [ "$(status_of c7)" = paused ] && ok "pause: paused" || not_ok "pause"
  "${C[@]}" resume c7 && [ "$(status_of c7)" = running ] && ok "resume: running" || not_ok "resume"
  "${C[@]}" delete --force c7
  if [ -e /sys/fs/cgroup/memory/csrun-test-$$/c7 ] || [ -e /sys/fs/cgroup/csrun-test-$$/c7 ]; then
    not_ok "delete removes the container's cgroup"
  else
    ok "delete --force kills the container and removes its cgroup"
  fi
  for d in /sys/fs/cgroup/*/csrun-test-$$ /sys/fs/cgroup/csrun-test-$$; do [ -d "$d" ] && rmdir "$d"; done
else
  make_bundle "$T/b7" "$(args 'import time; time.sleep(60)')"
  "${C[@]}" create -b "$T/b7" c7 >/dev/null 2>&1 </dev/null && "${C[@]}" start c7
  out=$("${C[@]}" pause c7 2>&1)
  [[ $out == *"no cgroup"* ]] && ok "rootless without a writable cgroup: pause says why it can't" ||
    not_ok "rootless pause" "$out"
  "${C[@]}" delete --force c7
  skip "cgroup limits at linux.cgroupsPath" "n/a: root only (no writable cgroup for this user)"
fi

done_testing
