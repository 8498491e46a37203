#!/bin/bash
# config.mounts as runc and crun make them, where the suites (runc's
# mounts*.bats, mask.bats, no_pivot.bats, hooks.bats; crun's test_mounts.py)
# found csrun differing: a destination that is a dangling symlink made where
# it points (inside the rootfs), a read-only tmpfs (/dev) still filled,
# "rbind,ro" read-only on top only and "rro" on every submount, proc/sysfs
# only on a real directory, --no-pivot hiding the old root's procfs, the
# createContainer hooks' working directory.  Root and rootless (what needs
# root says so).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
PY=/usr/bin/python3
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
run_bundle () {
  "${C[@]}" run "${@:3}" -b "$2" "$1" >"$T/$1.out" 2>&1 </dev/null
  rc=$?
  out=$(cat "$T/$1.out")
}
mnt () { # mnt DEST TYPE SOURCE OPTION...: the EDIT appending that mount
  local d=$1 t=$2 s=$3
  shift 3
  printf 'c["mounts"].append({"destination": "%s", "type": "%s", "source": "%s", "options": %s})' \
    "$d" "$t" "$s" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$@")"
}

# ---------------------------------------------------------------- a dangling symlink as destination
ln -sfn ../csr-made/by/link "$T/rootfs/etc/csr-dangling"
make_bundle "$T/dl" "$(args 'import os; print(os.path.ismount("/csr-made/by/link"), os.path.islink("/etc/csr-dangling"))'); $(mnt /etc/csr-dangling tmpfs tmpfs size=64k)"
run_bundle dl "$T/dl"
[ "$rc" = 0 ] && [ "$out" = "True True" ] &&
  ok "a destination that is a dangling symlink: its target is made inside the rootfs and mounted (crun)" ||
  not_ok "a dangling symlink destination" "exit $rc: $out"
ln -sfn /../../../../tmp "$T/rootfs/etc/csr-escape"
make_bundle "$T/esc" "$(args 'import os; print(os.path.ismount("/tmp/csr-x"))'); $(mnt /etc/csr-escape/csr-x tmpfs tmpfs size=64k)"
run_bundle esc "$T/esc"
[ "$rc" = 0 ] && [ "$out" = True ] && [ ! -e /tmp/csr-x ] &&
  ok "a symlink climbing out of the rootfs resolves inside it (the host's /tmp untouched)" ||
  not_ok "a climbing symlink destination" "exit $rc: $out"

# ---------------------------------------------------------------- read-only tmpfs
RO_DEV='for m in c["mounts"]:
    if m["destination"] == "/dev":
        m["options"].append("ro")'
make_bundle "$T/rodev" "$(args 'import os
try:
    open("/dev/csr-x", "w")
    print("writable")
except OSError as e:
    print(e.errno == 30, os.path.exists("/dev/null"), os.path.ismount("/dev/pts") or not os.path.exists("/dev/pts"))')
$RO_DEV"
run_bundle rodev "$T/rodev"
[ "$rc" = 0 ] && [ "$out" = "True True True" ] &&
  ok "a read-only /dev tmpfs: its nodes and submounts are made, then it turns read-only (runc)" ||
  not_ok "a read-only /dev tmpfs" "exit $rc: $out"

# ---------------------------------------------------------------- proc / sysfs on a symlink
ln -sfn /tmp "$T/rootfs/csr-proc-link"
make_bundle "$T/plink" "$(args 'print("ran")'); $(mnt /csr-proc-link proc proc)"
run_bundle plink "$T/plink"
[ "$rc" != 0 ] && [[ $out == *"must be mounted on ordinary directory"* ]] && [[ $out != *ran* ]] &&
  ok "proc is never mounted through a symlink (runc: 'must be mounted on ordinary directory')" ||
  not_ok "proc through a symlink" "exit $rc: $out"

# ---------------------------------------------------------------- createContainer's cwd
make_bundle "$T/ccwd" "$(args 'pass'); c[\"hooks\"] = {\"createContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"pwd > $T/ccwd.pwd\"]}]}"
run_bundle ccwd "$T/ccwd"
[ "$rc" = 0 ] && [ "$(cat "$T/ccwd.pwd" 2>/dev/null)" = "$(realpath "$T/rootfs")" ] &&
  ok "createContainer hooks run with the rootfs as working directory (runc)" ||
  not_ok "createContainer's working directory" "exit $rc: $out" "$(cat "$T/ccwd.pwd" 2>&1)"

# ---------------------------------------------------------------- rbind,ro vs rro; --no-pivot
if is_root; then
  # A source with a submount, made in a mount namespace of the test's own.
  mkdir -p "$T/rb/sub"
  WRITE=$(args 'import sys
r = []
for p in ("/mnt/top", "/mnt/sub/low"):
    try:
        open(p, "w").close()
        r.append("rw")
    except OSError:
        r.append("ro")
print(*r)')
  make_bundle "$T/rbro" "$WRITE; $(mnt /mnt bind "$T/rb" rbind ro)"
  make_bundle "$T/rrro" "$WRITE; $(mnt /mnt bind "$T/rb" rbind rro)"
  out=$(unshare -m --propagation private bash -c '
    mount -t tmpfs tmpfs "$1/rb/sub" || exit 9
    "${@:2}" run -b "$1/rbro" rbro </dev/null 2>&1
    "${@:2}" run -b "$1/rrro" rrro </dev/null 2>&1' - "$T" "${C[@]}")
  [ "$out" = "ro rw"$'\n'"ro ro" ] &&
    ok "rbind,ro is read-only on top only, rbind,rro on every submount too (runc)" ||
    not_ok "rbind,ro and rro" "$out"
  PROBE=$(args 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000 | 0x00020000 | 0x20000000) != 0:  # user, mount, pid
    print("unshare", os.strerror(ctypes.get_errno()))
    raise SystemExit(0)
pid = os.fork()
if pid == 0:
    libc.mount(b"none", b"/proc", b"proc", 0, None)
    print("mount proc:", os.strerror(ctypes.get_errno()) if ctypes.get_errno() else "allowed", flush=True)
    os._exit(0)
os.waitpid(pid, 0)')
  make_bundle "$T/np" "$PROBE"
  run_bundle np "$T/np" --no-pivot
  [ "$rc" = 0 ] && [[ $out == "mount proc: Operation not permitted" ]] &&
    ok "--no-pivot: the old root's procfs is hidden, so a nested user namespace can't mount a new one (runc)" ||
    not_ok "--no-pivot hides the old root's procfs" "exit $rc: $out"
else
  skip "rbind,ro and rro" "n/a: root only (a submount in the source)"
  skip "--no-pivot hides the old root's procfs" "n/a: root only (--no-pivot)"
fi

done_testing
