#!/bin/bash
# The container's process set up as runc and crun do it, where the suites
# (runtime-tools, crun's tests, runc's bats) found csrun differing: HOME from
# the container's passwd, a missing cwd made, umask 0022 by default, unknown
# capability names ignored with a warning, LISTEN_FDS handed on, hooks' PATH
# and the status they see, linux.rootfsPropagation applied after pivot_root,
# kernel.hostname refused, device nodes with their mode and owner.  Root and
# rootless (what needs root says so).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
PY=/usr/bin/python3
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
# run_bundle ID DIR: csrun run, output (stdout+stderr) in $out, status in $rc
run_bundle () {
  "${C[@]}" run -b "$2" "$1" >"$T/$1.out" 2>&1 </dev/null
  rc=$?
  out=$(cat "$T/$1.out")
}
NO_HOME='c["process"]["env"] = [e for e in c["process"]["env"] if not e.startswith("HOME=")]'
# A passwd of our own bound over the rootfs's (the shared test rootfs stays as it is).
printf 'root:x:0:0:root:/root/home:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$T/passwd"
PASSWD="c[\"mounts\"].append({\"destination\": \"/etc/passwd\", \"type\": \"bind\", \"source\": \"$T/passwd\", \"options\": [\"bind\", \"ro\"]})"
printf 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$T/passwd-noroot"
PASSWD_NOROOT="c[\"mounts\"].append({\"destination\": \"/etc/passwd\", \"type\": \"bind\", \"source\": \"$T/passwd-noroot\", \"options\": [\"bind\", \"ro\"]})"
SHOW_HOME=$(args 'import os; print("HOME=" + os.environ.get("HOME", "<unset>"))')

# ---------------------------------------------------------------- HOME
make_bundle "$T/home1" "$SHOW_HOME; $NO_HOME; $PASSWD"
run_bundle home1 "$T/home1"
[ "$rc" = 0 ] && [ "$out" = "HOME=/root/home" ] &&
  ok "HOME unset in the config: the user's home from the container's /etc/passwd" ||
  not_ok "HOME from the container's /etc/passwd" "exit $rc: $out"
make_bundle "$T/home2" "$SHOW_HOME; $NO_HOME; $PASSWD_NOROOT"
run_bundle home2 "$T/home2"
[ "$rc" = 0 ] && [ "$out" = "HOME=/" ] &&
  ok "HOME unset and the user not in /etc/passwd: HOME=/ (runc, crun)" ||
  not_ok "HOME=/ for a user not in passwd" "exit $rc: $out"
make_bundle "$T/home3" "$SHOW_HOME; $NO_HOME; c[\"process\"][\"env\"].append(\"HOME=/given\"); $PASSWD"
run_bundle home3 "$T/home3"
[ "$rc" = 0 ] && [ "$out" = "HOME=/given" ] && ok "a HOME in the config stays" ||
  not_ok "a HOME in the config stays" "exit $rc: $out"

# ---------------------------------------------------------------- cwd, umask
make_bundle "$T/cwd" "$(args 'import os; print(os.getcwd(), oct(os.stat(".").st_mode & 0o777))'); c[\"process\"][\"cwd\"] = \"/no/such/cwd-$$\""
run_bundle cwd "$T/cwd"
[ "$rc" = 0 ] && [ "$out" = "/no/such/cwd-$$ 0o755" ] &&
  ok "a missing process.cwd is made (0755), as runc does, even with a read-only root" ||
  not_ok "a missing cwd is made" "exit $rc: $out"
make_bundle "$T/umask" "$(args 'import os; print(oct(os.umask(0)))')"
out=$(umask 077 && "${C[@]}" run -b "$T/umask" umask 2>&1 </dev/null)
rc=$?
[ "$rc" = 0 ] && [ "$out" = "0o22" ] && ok "without process.user.umask the process gets 0022, not the caller's (077)" ||
  not_ok "default umask 0022" "exit $rc: $out"

# ---------------------------------------------------------------- capabilities
make_bundle "$T/caps" "$(args 'print([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapBnd")][0])'); c[\"process\"][\"capabilities\"] = {s: [\"CAP_UNKNOWN\", \"CAP_KILL\"] for s in (\"bounding\", \"effective\", \"permitted\")}"
run_bundle caps "$T/caps"
[ "$rc" = 0 ] && grep -qx 0000000000000020 <<<"$out" && grep -q "CAP_UNKNOWN" <<<"$out" &&
  ok "an unknown capability name is ignored with a warning (crun); the known ones apply" ||
  not_ok "unknown capability names" "exit $rc: $out"

# ---------------------------------------------------------------- LISTEN_FDS
make_bundle "$T/listen" "$(args 'import os; print(os.environ.get("LISTEN_FDS"), os.environ.get("LISTEN_PID"), os.read(3, 5).decode())')"
echo hello >"$T/listen.in"
out=$(LISTEN_FDS=1 "${C[@]}" run -b "$T/listen" listen 3<"$T/listen.in" 2>&1 </dev/null)
rc=$?
[ "$rc" = 0 ] && [ "$out" = "1 1 hello" ] &&
  ok "LISTEN_FDS=1: fd 3 is handed on, LISTEN_FDS and LISTEN_PID=1 set (socket activation)" ||
  not_ok "LISTEN_FDS" "exit $rc: $out"

# ---------------------------------------------------------------- hooks
H=$T/hooks
mkdir -p "$H"
hook_edit () { # hook_edit STAGE FILE [ENV-JSON]: a hook writing its PATH and stdin to FILE
  local env=${3:+, \"env\": $3}
  printf 'c.setdefault("hooks", {}).setdefault("%s", []).append({"path": "/bin/sh", "args": ["sh", "-c", "echo \\"$PATH\\" > %s.path; while IFS= read -r l || [ -n \\"$l\\" ]; do printf \\"%%s\\\\n\\" \\"$l\\"; done > %s"]%s})' "$1" "$2" "$2" "$env"
}
# startContainer runs in the container (after pivot_root): $H is bound there at its own path.
HBIND="c[\"mounts\"].append({\"destination\": \"$H\", \"type\": \"bind\", \"source\": \"$H\", \"options\": [\"bind\"]})"
make_bundle "$T/hk" "$(args 'pass'); $HBIND; $(hook_edit prestart "$H/prestart"); $(hook_edit poststart "$H/poststart"); $(hook_edit createRuntime "$H/createRuntime" '["PATH=/foo"]'); $(hook_edit createContainer "$H/createContainer"); $(hook_edit startContainer "$H/startContainer")"
out=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin:/csrun-test-path "${C[@]}" run -b "$T/hk" hk 2>&1 </dev/null)
rc=$?
if [ "$rc" = 0 ] && [ "$(cat "$H/prestart.path")" = /usr/sbin:/usr/bin:/sbin:/bin:/csrun-test-path ] &&
  [ "$(cat "$H/createRuntime.path")" = /foo ]; then
  ok "a hook without env gets the runtime's PATH; one with env gets exactly that"
else
  not_ok "hooks' PATH" "exit $rc: $out" "prestart: $(cat "$H/prestart.path" 2>&1)" "createRuntime: $(cat "$H/createRuntime.path" 2>&1)"
fi
st=""
for s in prestart createRuntime createContainer startContainer poststart; do
  st="$st $s=$(json_get "$H/$s" 'j["status"]' 2>/dev/null)"
done
[ "$st" = " prestart=created createRuntime=created createContainer=created startContainer=created poststart=running" ] &&
  ok "hooks see status created (prestart .. startContainer) and running (poststart, even after the process exited)" ||
  not_ok "the status the hooks see" "$st"
pid_ok=$(json_get "$H/poststart" 'j["pid"] > 0' 2>/dev/null)
[ "$pid_ok" = True ] && ok "poststart's state has the container's pid" || not_ok "poststart's pid" "$(cat "$H/poststart" 2>&1)"

# ---------------------------------------------------------------- rootfsPropagation
PROP=$(args 'for l in open("/proc/self/mountinfo"):
    f = l.split()
    if f[4] == "/":
        opt = f[6:f.index("-")]
        print(" ".join(o.split(":")[0] for o in opt) or "private")')
for p in shared rshared slave private rprivate unbindable; do
  make_bundle "$T/prop-$p" "$PROP; c[\"linux\"][\"rootfsPropagation\"] = \"$p\""
  run_bundle "prop-$p" "$T/prop-$p"
  case $p in
    *shared) want=shared ;;
    *slave) want=master ;; # (private when the caller's / is: a slave of nothing)
    *private) want=private ;;
    unbindable) want=unbindable ;;
  esac
  [ "$rc" = 0 ] && { [[ $out == *"$want"* ]] || { [ $want = master ] && [ "$out" = private ]; }; } &&
    ok "linux.rootfsPropagation $p: the container's / is $want (set after pivot_root)" ||
    not_ok "linux.rootfsPropagation $p" "exit $rc: $out"
done

# ---------------------------------------------------------------- kernel.hostname
make_bundle "$T/hn" "$(args 'print("ran")'); c.pop(\"hostname\", None); c[\"linux\"][\"sysctl\"] = {\"kernel.hostname\": \"x\"}"
run_bundle hn "$T/hn"
[ "$rc" != 0 ] && [[ $out == *kernel.hostname*hostname* ]] && [[ $out != *ran* ]] &&
  ok "linux.sysctl kernel.hostname is refused even with a UTS namespace (runc, crun)" ||
  not_ok "kernel.hostname sysctl" "exit $rc: $out"

# ---------------------------------------------------------------- device nodes
if is_root; then
  STATDEV=$(args 'import os, stat
for p in ("/dev/csr-a", "/dev/sub/csr-b"):
    s = os.stat(p)
    print(p, "c" if stat.S_ISCHR(s.st_mode) else "b" if stat.S_ISBLK(s.st_mode) else "?", oct(s.st_mode & 0o7777), s.st_uid, s.st_gid, os.major(s.st_rdev), os.minor(s.st_rdev))')
  DEVS='c["linux"]["devices"] = [{"path": "/dev/csr-a", "type": "c", "major": 1, "minor": 3, "fileMode": 438, "uid": 10, "gid": 11}, {"path": "/dev/sub/csr-b", "type": "b", "major": 7, "minor": 0, "fileMode": 432}]'
  make_bundle "$T/dev" "$STATDEV; $DEVS"
  out=$(umask 077 && "${C[@]}" run -b "$T/dev" dev 2>&1 </dev/null)
  rc=$?
  [ "$rc" = 0 ] && [ "$out" = "/dev/csr-a c 0o666 10 11 1 3"$'\n'"/dev/sub/csr-b b 0o660 0 0 7 0" ] &&
    ok "linux.devices: nodes with their fileMode whatever the umask (077), uid and gid" ||
    not_ok "device nodes' mode and owner" "exit $rc: $out"
  # Outside /dev (runc, crun): made in the /dev tmpfs, bound onto an empty file at its path.
  make_bundle "$T/devout" "$(args 'import os, stat
s = os.stat("/csr-out/node")
print(stat.S_ISCHR(s.st_mode), oct(s.st_mode & 0o777), os.major(s.st_rdev), os.minor(s.st_rdev), os.listdir("/dev").count(".csrun-device-0"))'); c[\"linux\"][\"devices\"] = [{\"path\": \"/csr-out/node\", \"type\": \"c\", \"major\": 1, \"minor\": 3}]"
  run_bundle devout "$T/devout"
  [ "$rc" = 0 ] && [ "$out" = "True 0o666 1 3 0" ] &&
    ok "linux.devices outside /dev: the node is there (and no passing name left in /dev)" ||
    not_ok "a device node outside /dev" "exit $rc: $out"
  # Root with a user namespace of the container's own (mknod is refused in
  # it): the nodes are made by create, owned by the mapped ids (crun).
  MAP='c["linux"]["namespaces"].append({"type": "user"}); c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]; c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
  make_bundle "$T/devns" "$STATDEV; $DEVS; $MAP; c[\"mounts\"] = [m for m in c[\"mounts\"] if m[\"type\"] not in (\"cgroup\", \"sysfs\")]"
  out=$(umask 077 && "${C[@]}" run -b "$T/devns" devns 2>&1 </dev/null)
  rc=$?
  [ "$rc" = 0 ] && [ "$out" = "/dev/csr-a c 0o666 10 11 1 3"$'\n'"/dev/sub/csr-b b 0o660 0 0 7 0" ] &&
    ok "root, user namespace: linux.devices nodes made by create, with their mode and owner (no host node needed)" ||
    not_ok "device nodes in a user namespace (root)" "exit $rc: $out"
  # A bind source only the host's root reaches (a 0700 directory): opened by create (crun).
  mkdir -p "$T/private/dir" && echo secret-ok >"$T/private/dir/f" && chmod 0700 "$T/private"
  make_bundle "$T/bindns" "$(args 'print(open("/run/f").read().strip())'); $MAP; c[\"mounts\"] = [m for m in c[\"mounts\"] if m[\"type\"] not in (\"cgroup\", \"sysfs\")]; c[\"mounts\"].append({\"destination\": \"/run\", \"type\": \"bind\", \"source\": \"$T/private/dir\", \"options\": [\"bind\", \"ro\"]})"
  chmod o+rx "$T/private/dir" "$T/private/dir/f" 2>/dev/null
  run_bundle bindns "$T/bindns"
  [ "$rc" = 0 ] && [ "$out" = secret-ok ] &&
    ok "root, user namespace: a bind source below a directory only root can enter is mounted (crun)" ||
    not_ok "a bind source only root reaches, in a user namespace" "exit $rc: $out"
else
  skip "device nodes' mode and owner" "n/a: root only (mknod)"
  skip "a device node outside /dev" "n/a: root only (mknod)"
  skip "device nodes in a user namespace (root)" "n/a: root only"
  skip "a bind source only root reaches, in a user namespace" "n/a: root only"
fi

done_testing
