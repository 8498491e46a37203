#!/bin/bash
# Rootless podman with csrun as its runtime (the suite's unprivileged pass):
# podman runs csrun inside its own user namespace.  A private store and
# runtime directory under a temporary directory; nothing of the user's.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

if is_root; then
  skip "rootless podman" "n/a: the unprivileged pass runs it (tests/oci/podman.sh runs as root)"
  done_testing
  exit
fi
for tool in podman conmon zstd newuidmap; do
  if ! command -v "$tool" >/dev/null; then
    skip "rootless podman with csrun" "$tool is not installed"
    done_testing
    exit
  fi
done
if ! grep -q "^$(id -un):" /etc/subuid 2>/dev/null; then
  skip "rootless podman with csrun" "n/a: no /etc/subuid range for $(id -un) (tests/run-suite.sh adds one)"
  done_testing
  exit
fi

T=$(tmpdir)
export XDG_RUNTIME_DIR=$T/xdg HOME=$T/home
mkdir -p "$XDG_RUNTIME_DIR" "$HOME"
chmod 700 "$XDG_RUNTIME_DIR"
cat >"$T/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)"]
[engine]
events_logger = "file"
cgroup_manager = "cgroupfs"
EOF
export CONTAINERS_CONF=$T/containers.conf
P=(podman --root "$T/store" --runroot "$T/run" --tmpdir "$T/tmp")
cleanup_podman () {
  "${P[@]}" rm -af >/dev/null 2>&1
  "${P[@]}" rmi -af >/dev/null 2>&1
  # The store holds files of subordinate ids: remove it from inside podman's user namespace.
  podman unshare rm -rf "$T/store" "$T/run" >/dev/null 2>&1
}
trap 'cleanup_podman; _tap_cleanup' EXIT
cd "$T" || exit 1

if zstd -dc "$CSRUN_TEST_ROOTFS" | "${P[@]}" import - csrun-rootless:test >"$T/import.log" 2>&1; then
  ok "import the test rootfs into a private rootless store"
else
  not_ok "import the test rootfs" "$(cat "$T/import.log")"
  done_testing
  exit
fi
IMG=csrun-rootless:test
R=(--runtime "$CSRUN")

out=$(timeout 120 "${P[@]}" "${R[@]}" run --rm --network none "$IMG" /usr/bin/python3 -c \
  'import os; print(os.getuid(), os.getpid(), 6 * 7)' 2>&1)
[ "$out" = "0 1 42" ] && ok "rootless podman runs a container with csrun (uid 0 inside, pid 1)" ||
  not_ok "rootless podman run" "$out"

out=$(timeout 120 "${P[@]}" "${R[@]}" run --rm --network none --user 1000:1000 "$IMG" \
  /usr/bin/python3 -c 'import os; print(os.getuid(), os.getgid())' 2>&1)
[ "$out" = "1000 1000" ] && ok "--user 1000:1000 in a rootless container" ||
  not_ok "rootless --user" "$out"

timeout 120 "${P[@]}" "${R[@]}" run --rm --network none "$IMG" /usr/bin/python3 -c 'raise SystemExit(5)' \
  >/dev/null 2>&1
rc=$?
[ "$rc" = 5 ] && ok "the exit status passes through" || not_ok "rootless exit status" "exit $rc"

out=$(printf 'piped\n' | timeout 120 "${P[@]}" "${R[@]}" run --rm -i --network none "$IMG" \
  /usr/bin/python3 -c 'import sys; print(sys.stdin.read().strip().upper())' 2>&1)
[ "$out" = PIPED ] && ok "-i: stdin reaches the container" || not_ok "rootless -i" "$out"

"${P[@]}" "${R[@]}" run -d --name rl1 --network none "$IMG" /usr/bin/python3 -c \
  'import time; time.sleep(60)' >"$T/run-d.log" 2>&1
out=$(timeout 60 "${P[@]}" "${R[@]}" exec rl1 /usr/bin/python3 -c 'print("exec ok")' 2>&1)
[ "$out" = "exec ok" ] && ok "podman exec in a rootless container" ||
  not_ok "rootless exec" "$out" "$(cat "$T/run-d.log")"
timeout 60 "${P[@]}" "${R[@]}" rm -f -t 0 rl1 >/dev/null 2>&1
if "${P[@]}" ps -aq | grep -q .; then
  not_ok "rm -f removes the rootless container" "$("${P[@]}" ps -a 2>&1)"
else
  ok "rm -f removes the rootless container"
fi

done_testing
