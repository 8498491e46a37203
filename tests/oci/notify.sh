#!/bin/bash
# NOTIFY_SOCKET (sd_notify) as crun does it (crun's test_start.py sd-notify*):
# with NOTIFY_SOCKET=PATH at create/run the container gets its own socket
# PATH/notify (its directory mounted at PATH, NOTIFY_SOCKET set to it), and
# start (run) waits for its READY=1 and forwards READY=1 and MAINPID=<pid> to
# PATH on the host.  Root and rootless; the user-namespace case as root.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; [ -z "${recv_pid:-}" ] || kill "$recv_pid" 2>/dev/null; _tap_cleanup' EXIT
. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs

"$CSRUN" --version | grep -q '^+.*SYSTEMD_NOTIFY' &&
  ok "--version lists +SYSTEMD_NOTIFY (crun's tests look for SYSTEMD)" ||
  not_ok "--version lists +SYSTEMD_NOTIFY" "$("$CSRUN" --version)"

# A host socket SOCK whose datagrams go, one a line, to OUT; $recv_pid.
receiver () {
  local sock=$1 out=$2
  rm -f "$sock" "$out" "$out.ready"
  python3 - "$sock" "$out" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2] + ".ready", "w").close()
while True:
    d = s.recv(4096)
    with open(sys.argv[2], "a") as f:
        f.write(d.decode() + "\n")
PYEOF
  recv_pid=$!
  for _ in $(seq 100); do [ -e "$out.ready" ] && return 0; sleep 0.05; done
  not_ok "the test's notify receiver started"
}
# Wait (at most 5 s) until OUT has N lines.
lines () {
  for _ in $(seq 100); do [ "$(wc -l <"$2" 2>/dev/null || echo 0)" -ge "$1" ] && return 0; sleep 0.05; done
  return 1
}
NOTIFY_PY='import os, socket
p = os.environ["NOTIFY_SOCKET"]
print("env", p)
print("mounted", any(l.split()[4] == os.path.dirname(p) for l in open("/proc/self/mountinfo")))
print("ls", sorted(os.listdir(os.path.dirname(p))))
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"STATUS=starting", p)
s.sendto(b"READY=1", p)'

# ---------------------------------------------------------------- run
H=$T/host.sock
receiver "$H" "$T/got"
make_bundle "$T/b1" "$(args "$NOTIFY_PY")"
out=$(NOTIFY_SOCKET=$H "${C[@]}" run -b "$T/b1" n1 2>&1 </dev/null)
rc=$?
exp="env $H/notify
mounted True
ls ['notify']"
[ "$rc" = 0 ] && [ "$out" = "$exp" ] &&
  ok "run: NOTIFY_SOCKET=PATH/notify in the container, its directory mounted at PATH" ||
  not_ok "run: the container's notify socket" "exit $rc: $out"
lines 2 "$T/got"
got=$(cat "$T/got" 2>/dev/null)
[ "$(sed -n 1p <<<"$got")" = "READY=1" ] && [[ $(sed -n 2p <<<"$got") =~ ^MAINPID=[0-9]+$ ]] &&
  [ "$(wc -l <<<"$got")" = 2 ] &&
  ok "run: READY=1 forwarded to the host's socket (alone, as crun), then MAINPID (runc)" ||
  not_ok "run: READY=1 forwarded" "$got"

# ---------------------------------------------------------------- create + start
: >"$T/got"
WAIT_PY='import os, socket, time
time.sleep(1)
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"READY=1", os.environ["NOTIFY_SOCKET"])
time.sleep(120)'
make_bundle "$T/b2" "$(args "$WAIT_PY")"
NOTIFY_SOCKET=$H "${C[@]}" create -b "$T/b2" n2 >"$T/c2.out" 2>&1 </dev/null ||
  not_ok "create n2" "$(cat "$T/c2.out")"
NOTIFY_SOCKET=$H "${C[@]}" start n2 >"$T/s2.out" 2>&1 </dev/null
rc=$?
pid=$("${C[@]}" state n2 | json_get /dev/stdin 'j["pid"]')
got=$(cat "$T/got")
[ "$rc" = 0 ] && [ "$got" = "READY=1
MAINPID=$pid" ] &&
  ok "start waits for the container's READY=1 and forwards it, MAINPID its pid" ||
  not_ok "start forwards READY=1" "exit $rc: $(cat "$T/s2.out")" "got: $got" "pid $pid"
"${C[@]}" delete --force n2 >/dev/null 2>&1

# A container that ends without a word: start (run) does not wait forever.
make_bundle "$T/b3" "$(args 'print("bye")')"
out=$(NOTIFY_SOCKET=$H timeout 20 "${C[@]}" run -b "$T/b3" n3 2>&1 </dev/null)
rc=$?
[ "$rc" = 0 ] && [ "$out" = bye ] && ok "run: a container that never says READY=1 still ends" ||
  not_ok "run without READY=1" "exit $rc: $out"

# run with a terminal it copies itself: a container that fills the terminal
# before it says READY=1 must not wait on a run that waits for READY=1.
: >"$T/got"
make_bundle "$T/b7" "$(args 'import os, socket, sys
print("x" * 200000, flush=True)
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"READY=1", os.environ["NOTIFY_SOCKET"])
print("done")'); c[\"process\"][\"terminal\"] = True"
NOTIFY_SOCKET=$H timeout 30 "${C[@]}" run -b "$T/b7" n7 >"$T/n7.out" 2>&1 </dev/null
rc=$?
lines 1 "$T/got"
[ "$rc" = 0 ] && grep -q '^done' "$T/n7.out" && [ "$(head -c 200000 "$T/n7.out" | tr -d x | wc -c)" = 0 ] &&
  [ "$(sed -n 1p "$T/got")" = READY=1 ] &&
  ok "run with a terminal: 200 kB before READY=1 is copied meanwhile, READY=1 forwarded" ||
  not_ok "run with a terminal and NOTIFY_SOCKET" "exit $rc: $(tail -c 200 "$T/n7.out")" "got: $(cat "$T/got")"
"${C[@]}" delete --force n7 >/dev/null 2>&1

# Without NOTIFY_SOCKET nothing of it; an abstract one ("@name") can't be mounted: ignored.
make_bundle "$T/b4" "$(args 'import os; print(os.environ.get("NOTIFY_SOCKET", "none"))')"
out=$(env -u NOTIFY_SOCKET "${C[@]}" run -b "$T/b4" n4 2>&1 </dev/null)
out2=$(NOTIFY_SOCKET=@csrun-test-abstract "${C[@]}" run -b "$T/b4" n5 2>&1 </dev/null)
[ "$out" = none ] && [ "$out2" = none ] &&
  ok "no NOTIFY_SOCKET (or an abstract one): the container gets none" ||
  not_ok "no NOTIFY_SOCKET" "$out / $out2"

# ---------------------------------------------------------------- user namespace (root)
if is_root; then
  : >"$T/got"
  # Root in the container is host uid 8123 (crun's sd-notify-proxy maps 8000+uid).
  mkdir -p "$T/rootfs-u" && cp -a "$T/rootfs/." "$T/rootfs-u/" && chown -R 8123:8123 "$T/rootfs-u"
  USERNS='c["linux"]["namespaces"].append({"type": "user"}); c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 8123, "size": 1}]; c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 8123, "size": 1}]
for m in c["mounts"]:
    m["options"] = [o for o in m.get("options", []) if o != "gid=5"]'
  make_bundle "$T/b6" "$(args "$NOTIFY_PY"); $USERNS" "$T/rootfs-u"
  chmod 0755 "$T"
  out=$(NOTIFY_SOCKET=$H "${C[@]}" run -b "$T/b6" n6 2>&1 </dev/null)
  rc=$?
  lines 2 "$T/got"
  [ "$rc" = 0 ] && [ "$out" = "$exp" ] && [ "$(sed -n 1p "$T/got")" = READY=1 ] &&
    ok "user namespace (root mapped to 8123): the container reaches its socket, READY=1 forwarded" ||
    not_ok "user namespace notify" "exit $rc: $out" "got: $(cat "$T/got")"
else
  skip "notify in a user namespace mapping root to another uid" "n/a: root only (the rootless pass has its own user namespace above)"
fi

done_testing
