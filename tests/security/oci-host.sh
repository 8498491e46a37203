#!/bin/bash
# Hostile OCI configs that must not change the host (issue 11): linux.sysctl
# outside the container's own namespaces, a config without a mount
# namespace, a /dev bind-mounted from the host, a pre-existing frozen
# cgroup, `exec -d` of a missing program, a rootfs whose /dev is a symlink
# to /, a NUL in a hook's state, the default masked paths.
#
# Safe on a broken runtime too: every sysctl the runtime must refuse is given
# the host's current value (written by mistake, it changes nothing), and
# whatever could touch the mount table runs inside
# `unshare -m --propagation private` (as root).  Runs as root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
# Runs are bounded: a runtime that hangs fails its test instead of the suite.
TO=(timeout -k 5 120)
PY=/usr/bin/python3
CG=csrun-oci-host-$$
cleanup () {
  for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done
  if is_root; then
    [ -f /sys/fs/cgroup/freezer/$CG/frz/freezer.state ] &&
      echo THAWED >/sys/fs/cgroup/freezer/$CG/frz/freezer.state 2>/dev/null
    [ -f /sys/fs/cgroup/$CG/frz/cgroup.freeze ] && echo 0 >/sys/fs/cgroup/$CG/frz/cgroup.freeze 2>/dev/null
    for d in /sys/fs/cgroup/*/$CG/frz /sys/fs/cgroup/$CG/frz /sys/fs/cgroup/*/$CG /sys/fs/cgroup/$CG; do
      [ -d "$d" ] && rmdir "$d" 2>/dev/null
    done
  fi
  _tap_cleanup
}
trap cleanup EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
echo in-the-rootfs >"$T/rootfs/csrun-rootfs-marker"
jstr () { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
N=0
# run_cfg EDIT: run a fresh bundle (the process prints what EDIT's args say);
# sets $out and $rc, and $left to the ids left in the state directory.
run_cfg () {
  N=$((N + 1))
  make_bundle "$T/b$N" "$1" "${2:-$T/rootfs}"
  out=$("${TO[@]}" "${C[@]}" run -b "$T/b$N" "oh$$-$N" 2>&1 </dev/null)
  rc=$?
  left=$("${C[@]}" list -q 2>/dev/null)
  for id in $left; do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done
}

# ---------------------------------------------------------------- linux.sysctl
KEYS="kernel.core_pattern vm.overcommit_memory net.ipv4.ip_default_ttl kernel.shm_rmid_forced kernel.msgmax fs.mqueue.msg_max kernel.domainname kernel.hostname"
host_sysctls () {
  local k
  for k in $KEYS; do printf '%s=%s\n' "$k" "$(cat "/proc/sys/${k//.//}" 2>&1)"; done
}
before=$(host_sysctls)
hv () { cat "/proc/sys/${1//.//}"; } # the host's value of KEY
read_in () { # the process prints the container's value of each KEY
  local k code="import sys"
  for k in "$@"; do code+="; print(open('/proc/sys/${k//.//}').read().strip())"; done
  args "$code"
}

# Accepted: each class in the container's own namespace of its kind.
ttl=$(( $(hv net.ipv4.ip_default_ttl) == 42 ? 43 : 42 ))
rmid=$(( 1 - $(hv kernel.shm_rmid_forced) ))
msgmax=$(( $(hv kernel.msgmax) + 17 ))
mqmax=$(( $(hv fs.mqueue.msg_max) + 3 ))
run_cfg "$(read_in net.ipv4.ip_default_ttl); c['linux']['sysctl'] = {'net.ipv4.ip_default_ttl': '$ttl'}"
[ "$rc" = 0 ] && [ "$out" = "$ttl" ] && ok "net.* with the container's own network namespace: written" ||
  not_ok "net.* in its own network namespace" "exit $rc: $out"
run_cfg "$(read_in net.ipv4.ip_default_ttl); c['linux']['sysctl'] = {'net/ipv4/ip_default_ttl': '$ttl'}"
[ "$rc" = 0 ] && [ "$out" = "$ttl" ] && ok "the '/' spelling of a key (net/ipv4/ip_default_ttl), as runc and sysctl(8) take it" ||
  not_ok "net/ipv4/ip_default_ttl" "exit $rc: $out"
run_cfg "$(read_in kernel.shm_rmid_forced kernel.msgmax fs.mqueue.msg_max); c['linux']['sysctl'] = {'kernel.shm_rmid_forced': '$rmid', 'kernel.msgmax': '$msgmax', 'fs.mqueue.msg_max': '$mqmax'}"
[ "$rc" = 0 ] && [ "$out" = "$rmid"$'\n'"$msgmax"$'\n'"$mqmax" ] &&
  ok "kernel.shm*, kernel.msg*, fs.mqueue.* with the container's own IPC namespace: written" ||
  not_ok "IPC sysctls in their own IPC namespace" "exit $rc: $out"
# The UTS names go through sethostname/setdomainname (their /proc/sys files
# stay the host root's even in a user-owned UTS namespace): root and rootless.
run_cfg "$(read_in kernel.domainname); c.pop('hostname', None); c['linux']['sysctl'] = {'kernel.domainname': 'csrun-oci-test'}"
[ "$rc" = 0 ] && [ "$out" = csrun-oci-test ] &&
  ok "kernel.domainname with the container's own UTS namespace: set" ||
  not_ok "kernel.domainname in its own UTS namespace" "exit $rc: $out"

# Refused: without the namespace, keys no namespace covers, path tricks.
# refused DESC EDIT WANT: create fails (exit != 0) with WANT in the message,
# the key named, and no container left.
refused () {
  local desc=$1 edit=$2 want=$3
  run_cfg "$(args 'print("ran")'); $edit"
  if [ "$rc" != 0 ] && [[ $out == *"$want"* ]] && [[ $out != *ran* ]] && [ -z "$left" ]; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc: $out" "left: $left"
  fi
}
refused "net.* without a network namespace of its own is refused" \
  "without('network'); c['linux']['sysctl'] = {'net.ipv4.ip_default_ttl': '$(hv net.ipv4.ip_default_ttl)'}" \
  "net.ipv4.ip_default_ttl"
refused "net.* in the caller's network namespace joined by path is refused" \
  "without('network'); c['linux']['namespaces'].append({'type': 'network', 'path': '/proc/$$/ns/net'}); c['linux']['sysctl'] = {'net.ipv4.ip_default_ttl': '$(hv net.ipv4.ip_default_ttl)'}" \
  "network namespace"
refused "kernel.shm_rmid_forced without an IPC namespace of its own is refused" \
  "without('ipc'); c['linux']['sysctl'] = {'kernel.shm_rmid_forced': '$(hv kernel.shm_rmid_forced)'}" \
  "IPC namespace"
refused "fs.mqueue.* without an IPC namespace is refused" \
  "without('ipc'); c['mounts'] = [m for m in c['mounts'] if m['type'] != 'mqueue']; c['linux']['sysctl'] = {'fs.mqueue.msg_max': '$(hv fs.mqueue.msg_max)'}" \
  "fs.mqueue.msg_max"
refused "kernel.domainname without a UTS namespace is refused" \
  "without('uts'); c.pop('hostname', None); c['linux']['sysctl'] = {'kernel.domainname': $(jstr "$(hv kernel.domainname)")}" \
  "UTS namespace"
refused "kernel.core_pattern is refused (no namespace covers it)" \
  "c['linux']['sysctl'] = {'kernel.core_pattern': $(jstr "$(hv kernel.core_pattern)")}" \
  "kernel.core_pattern"
refused "vm.overcommit_memory is refused (no namespace covers it)" \
  "c['linux']['sysctl'] = {'vm.overcommit_memory': '$(hv vm.overcommit_memory)'}" \
  "vm.overcommit_memory"
refused "kernel.hostname without a UTS namespace is refused" \
  "without('uts'); c.pop('hostname', None); c['linux']['sysctl'] = {'kernel.hostname': $(jstr "$(hv kernel.hostname)")}" \
  "UTS namespace"
refused "kernel.hostname that says otherwise than the hostname field is refused" \
  "c['hostname'] = 'a'; c['linux']['sysctl'] = {'kernel.hostname': 'b'}" "conflicts"
refused "kernel.hostname is refused even with a UTS namespace (runc, crun: use hostname)" \
  "c.pop('hostname', None); c['linux']['sysctl'] = {'kernel.hostname': 'b'}" "conflicts"
refused "'net/../kernel/core_pattern' is refused" \
  "c['linux']['sysctl'] = {'net/../kernel/core_pattern': $(jstr "$(hv kernel.core_pattern)")}" \
  "net/../kernel/core_pattern"
refused "'net.ipv4..conf' (an empty component) is refused" \
  "c['linux']['sysctl'] = {'net.ipv4..conf': '1'}" "net.ipv4..conf"
refused "'net./proc' is refused" \
  "c['linux']['sysctl'] = {'net./proc': '1'}" "net./proc"
after=$(host_sysctls)
[ "$before" = "$after" ] && ok "the host's sysctls are as they were ($(echo $KEYS | wc -w) keys read before and after)" ||
  not_ok "the host's sysctls changed" "before: $before" "after: $after"

# ---------------------------------------------------------------- no mount namespace
# Root: inside a private mount namespace of the test's own, so that a broken
# runtime can only spoil that one; compared are its mount table and /.
nomnt_run () { # nomnt_run BUNDLE ID: prints the result and the before/after checks
  local b=$1 id=$2
  if is_root; then
    unshare -m --propagation private bash -c '
      before=$(cat /proc/self/mountinfo; stat -c "%d %i" /)
      out=$("$@" 2>&1 </dev/null); rc=$?
      after=$(cat /proc/self/mountinfo; stat -c "%d %i" /)
      printf "%s\n" "rc=$rc" "$out"
      [ "$before" = "$after" ] && echo SAME || printf "%s\n" CHANGED "$before" ---- "$after"' \
      _ "${TO[@]}" "${C[@]}" run -b "$b" "$id"
  else
    local before after out rc
    before=$(cat /proc/self/mountinfo; stat -c "%d %i" /)
    out=$("${TO[@]}" "${C[@]}" run -b "$b" "$id" 2>&1 </dev/null)
    rc=$?
    after=$(cat /proc/self/mountinfo; stat -c "%d %i" /)
    printf '%s\n' "rc=$rc" "$out"
    [ "$before" = "$after" ] && echo SAME || printf '%s\n' CHANGED "$before" ---- "$after"
  fi
}
N=$((N + 1))
make_bundle "$T/b$N" "$(args 'import os; print(open("/csrun-rootfs-marker").read().strip(), os.getcwd())'); without('mount'); c['mounts'] = []; c['linux']['maskedPaths'] = []; c['linux']['readonlyPaths'] = []; c['root']['readonly'] = False"
res=$(nomnt_run "$T/b$N" "oh$$-$N")
if [ "$res" = $'rc=0\nin-the-rootfs /\nSAME' ]; then
  ok "no mount namespace: the process runs chrooted in the rootfs; the caller's mount table and / are untouched"
else
  not_ok "no mount namespace, no mounts" "$res"
fi
N=$((N + 1))
make_bundle "$T/b$N" "$(args 'print("ran")'); without('mount')"
res=$(nomnt_run "$T/b$N" "oh$$-$N")
if [[ $res == rc=1$'\n'*"mount namespace"* && $res == *$'\nSAME' && $res != *ran* ]] && [ -z "$("${C[@]}" list -q)" ]; then
  ok "no mount namespace but mounts, masked paths: refused with a clear error, nothing mounted"
else
  not_ok "no mount namespace with mounts" "$res"
fi

# exec into such a container: chrooted into its rootfs as well.
N=$((N + 1))
make_bundle "$T/b$N" "$(args 'import time; time.sleep(60)'); without('mount'); c['mounts'] = []; c['linux']['maskedPaths'] = []; c['linux']['readonlyPaths'] = []; c['root']['readonly'] = False"
nomnt_exec='"$@" create -b "$B" "$ID" >/dev/null 2>&1 </dev/null && "$@" start "$ID" &&
  "$@" exec "$ID" '"$PY"' -c "print(open(\"/csrun-rootfs-marker\").read().strip())" </dev/null 2>&1
  "$@" delete --force "$ID"'
if is_root; then
  out=$(B=$T/b$N ID=oh$$-$N unshare -m --propagation private bash -c "$nomnt_exec" _ "${TO[@]}" "${C[@]}")
else
  out=$(B=$T/b$N ID=oh$$-$N bash -c "$nomnt_exec" _ "${TO[@]}" "${C[@]}")
fi
[ "$out" = in-the-rootfs ] && ok "exec into a container without a mount namespace: chrooted into its rootfs too" ||
  not_ok "exec into a container without a mount namespace" "$out"

# A mount namespace given by path that is the caller's own: refused (setting
# the container up there would replace the caller's root).  One that is
# another process's: joined, and the container is set up in it (as runc does):
# its mount namespace is the one given.
if is_root; then
  N=$((N + 1))
  make_bundle "$T/b$N" "$(args 'print(open("/csrun-rootfs-marker").read().strip())'); without('mount'); c['linux']['namespaces'].append({'type': 'mount', 'path': '/proc/self/ns/mnt'})"
  res=$(nomnt_run "$T/b$N" "oh$$-$N")
  if [[ $res == rc=1$'\n'*"caller's own"* && $res == *$'\nSAME' && $res != *in-the-rootfs* ]]; then
    ok "the caller's own mount namespace joined by path: refused, the caller's untouched"
  else
    not_ok "the caller's mount namespace joined by path" "$res"
  fi
  unshare -m --propagation private sleep 120 &
  holder=$!
  for _ in $(seq 50); do
    [ "$(readlink /proc/$holder/ns/mnt 2>/dev/null)" != "$(readlink /proc/self/ns/mnt)" ] && break
    sleep 0.1
  done
  want=$(readlink /proc/$holder/ns/mnt)
  N=$((N + 1))
  make_bundle "$T/b$N" "$(args 'import os; print(open("/csrun-rootfs-marker").read().strip(), os.readlink("/proc/self/ns/mnt"))'); without('mount'); c['linux']['namespaces'].append({'type': 'mount', 'path': '/proc/$holder/ns/mnt'})"
  res=$(nomnt_run "$T/b$N" "oh$$-$N")
  kill "$holder" 2>/dev/null
  wait "$holder" 2>/dev/null
  if [ "$res" = "rc=0"$'\n'"in-the-rootfs $want"$'\n'"SAME" ]; then
    ok "another process's mount namespace joined by path: the container is set up in it, the caller's untouched"
  else
    not_ok "another mount namespace joined by path" "want $want" "$res"
  fi
else
  skip "the caller's mount namespace joined by path" "n/a: root only (a user namespace can't join a mount namespace of the initial one)"
  skip "another mount namespace joined by path" "n/a: root only (a user namespace can't join a mount namespace of the initial one)"
fi

# ---------------------------------------------------------------- /dev bound from the host
# The "host /dev" is a scratch directory: a ptmx file, pts/ptmx, null, a
# dangling fd link.  Nothing in it may change: names, types, link targets, inodes.
D=$T/fakedev
mkdir -p "$D/pts"
echo fake >"$D/ptmx"
: >"$D/pts/ptmx"
: >"$D/null"
ln -s /nowhere "$D/fd"
snap () { (cd "$1" && find . -printf '%p %y %l %i %m\n' | sort); }
dev_before=$(snap "$D")
dev_edit="c['mounts'] = [m for m in c['mounts'] if not m['destination'].startswith('/dev')] + [{'destination': '/dev', 'type': 'bind', 'source': '$D', 'options': ['rbind']}]"
run_cfg "$(args 'import os; print(sorted(os.listdir("/dev")))'); $dev_edit"
dev_after=$(snap "$D")
if [ "$rc" = 0 ] && [ "$out" = "['fd', 'null', 'ptmx', 'pts']" ] && [ "$dev_before" = "$dev_after" ]; then
  ok "a /dev bind-mounted from the host: csrun's /dev set-up is skipped, nothing in the bound directory changes"
  dev_ok=1
else
  not_ok "/dev bind-mounted from the host" "exit $rc: $out" "before: $dev_before" "after: $dev_after"
  dev_ok=0
fi
# The real /dev (what crun's tests do), only once the scratch case passed.
# Root: inside a private mount namespace.
hostdev () { stat -c '%n %F %i %t:%T' /dev/ptmx /dev/null /dev/zero 2>&1; ls -l /dev/core /dev/fd /dev/stdin 2>&1; }
if [ "$dev_ok" = 1 ]; then
  hd_before=$(hostdev)
  N=$((N + 1))
  make_bundle "$T/b$N" "$(args 'import os; print(os.path.exists("/dev/null"))'); ${dev_edit//$D//dev}"
  if is_root; then
    out=$(unshare -m --propagation private "${TO[@]}" "${C[@]}" run -b "$T/b$N" "oh$$-$N" 2>&1 </dev/null)
  else
    out=$("${TO[@]}" "${C[@]}" run -b "$T/b$N" "oh$$-$N" 2>&1 </dev/null)
  fi
  rc=$?
  hd_after=$(hostdev)
  [ "$rc" = 0 ] && [ "$out" = True ] && [ "$hd_before" = "$hd_after" ] &&
    ok "the host's own /dev bound at /dev: /dev/ptmx, /dev/core, /dev/fd unchanged" ||
    not_ok "the host's /dev bound at /dev" "exit $rc: $out" "before: $hd_before" "after: $hd_after"
else
  not_ok "the host's own /dev bound at /dev" "not tried: the scratch /dev case failed"
fi

# ---------------------------------------------------------------- a frozen cgroup
if is_root; then
  made=
  if [ -d /sys/fs/cgroup/freezer ]; then
    mkdir -p /sys/fs/cgroup/freezer/$CG/frz && echo FROZEN >/sys/fs/cgroup/freezer/$CG/frz/freezer.state && made+=" v1"
  fi
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    mkdir -p /sys/fs/cgroup/$CG/frz && echo 1 >/sys/fs/cgroup/$CG/frz/cgroup.freeze && made+=" v2"
  fi
  if [ -z "$made" ]; then
    skip "a pre-existing frozen cgroup" "no cgroup freezer here"
  else
    N=$((N + 1))
    make_bundle "$T/b$N" "$(args 'import time; time.sleep(30)'); c['linux']['cgroupsPath'] = '/$CG/frz'"
    start=$SECONDS
    out=$(timeout -k 5 100 "${C[@]}" run -d -b "$T/b$N" "oh$$-$N" 2>&1 </dev/null)
    rc=$?
    took=$((SECONDS - start))
    procs=$(cat /sys/fs/cgroup/freezer/$CG/frz/cgroup.procs /sys/fs/cgroup/$CG/frz/cgroup.procs 2>/dev/null)
    if [ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$took" -lt 15 ] && [[ $out == *frozen* ]] &&
      [ -z "$procs" ] && [ -z "$("${C[@]}" list -q)" ]; then
      ok "a pre-existing frozen cgroup ($made ): refused at once ($took s), no process left in it"
    else
      not_ok "a pre-existing frozen cgroup ($made )" "exit $rc after $took s: $out" "processes in it: $procs"
    fi
  fi
else
  skip "a pre-existing frozen cgroup" "n/a: root only (no writable cgroup for this user)"
fi

# ---------------------------------------------------------------- exec -d of a missing program
N=$((N + 1))
make_bundle "$T/b$N" "$(args 'import time; time.sleep(60)')"
"${C[@]}" create -b "$T/b$N" "oh$$-$N" >/dev/null 2>&1 </dev/null && "${C[@]}" start "oh$$-$N"
out=$("${TO[@]}" "${C[@]}" exec -d "oh$$-$N" /no/such/program 2>&1 </dev/null)
rc=$?
[ "$rc" = 255 ] && [[ $out == *"/no/such/program"* ]] && ok "exec -d of a missing program exits 255 (runc) and says why" ||
  not_ok "exec -d of a missing program" "exit $rc: $out"
out=$("${C[@]}" exec -d "oh$$-$N" "$PY" -c 'import time; time.sleep(1)' 2>&1 </dev/null)
rc=$?
[ "$rc" = 0 ] && [ -z "$out" ] && ok "exec -d of a program that runs still exits 0 at once" ||
  not_ok "exec -d of a program that runs" "exit $rc: $out"
"${C[@]}" delete --force "oh$$-$N"

# ---------------------------------------------------------------- dev -> / in the rootfs
cp -al "$T/rootfs" "$T/rootfs-devlink"
rm -rf "$T/rootfs-devlink/dev" && ln -s / "$T/rootfs-devlink/dev"
run_cfg "$(args 'print("ran")')" "$T/rootfs-devlink"
if [ "$rc" != 0 ] && [[ $out == *"/dev"*"symlink"* ]] && [[ $out != *ran* && $out != *"No such file"* ]] && [ -z "$left" ]; then
  ok "a rootfs with dev -> /: refused, naming the symlinked /dev (never mounted over the root)"
else
  not_ok "a rootfs with dev -> /" "exit $rc: $out"
fi
refused "a mount over the container's root itself (destination /) is refused" \
  "c['mounts'].append({'destination': '/', 'type': 'tmpfs', 'source': 'tmpfs'})" "container's root"

# ---------------------------------------------------------------- csrun hook: a NUL in the state
out=$(printf '{"ociVersion": "1.0.2", "id": "a\\u0000b", "status": "creating", "pid": 1, "bundle": "%s"}' "$T" |
  "$CSRUN" hook prestart 2>&1)
rc=$?
[ "$rc" = 2 ] && [[ $out == *"\\u0000"* ]] && ok "csrun hook refuses a state whose strings hold a NUL (\\u0000)" ||
  not_ok "csrun hook with a NUL in the id" "exit $rc: $out"

# ---------------------------------------------------------------- csrun spec: masked paths
mkdir -p "$T/spec" && (cd "$T/spec" && "$CSRUN" spec)
masked=$(json_get "$T/spec/config.json" '" ".join(j["linux"]["maskedPaths"])')
missing=
for p in /proc/acpi /proc/asound /proc/interrupts /proc/kcore /proc/keys /proc/latency_stats \
  /proc/sched_debug /proc/scsi /proc/timer_list /proc/timer_stats /sys/devices/virtual/powercap /sys/firmware; do
  [[ " $masked " == *" $p "* ]] || missing+=" $p"
done
[ -z "$missing" ] && ok "csrun spec masks what runc, crun and Docker mask" ||
  not_ok "csrun spec's masked paths" "missing:$missing"

done_testing
