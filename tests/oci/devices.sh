#!/bin/bash
# linux.resources.devices: the device cgroup of an OCI container.  As root the
# rules are enforced (cgroup v1 devices.deny/devices.allow, or a cgroup v2
# BPF_PROG_TYPE_CGROUP_DEVICE program): deny-all then the config's rules
# then the default devices, last match wins.  Rootless there is no device
# cgroup: create says so, and the container can reach no device node it could
# make itself (mknod is refused in its user namespace).
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
PY=/usr/bin/python3
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs
# PROBE: prints "PATH:MODE:RESULT" for each open, RESULT ok or the errno name.
PROBE='
import errno, os, sys
for spec in sys.argv[1:]:
    path, mode = spec.rsplit(":", 1)
    flags = {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR}[mode] | os.O_NONBLOCK
    try:
        os.close(os.open(path, flags))
        print(spec + ":ok")
    except OSError as e:
        print(spec + ":" + errno.errorcode[e.errno])
'
probe_args () { # probe_args SPEC...: process.args running PROBE on SPECs
  local a
  a=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "$PY" -c "$PROBE" "$@")
  printf 'c["process"]["args"] = %s' "$a"
}
KMSG='c["linux"]["devices"] = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11}]'
DENY_ALL='c["linux"]["resources"]["devices"] = [{"allow": False, "access": "rwm"}]'
# run_bundle ID DIR: csrun run, output in $out, status in $rc
run_bundle () {
  "${C[@]}" run -b "$2" "$1" >"$T/$1.out" 2>&1 </dev/null
  rc=$?
  out=$(cat "$T/$1.out")
}

if is_root; then
  # ------------------------------------------------------------ root: enforced
  make_bundle "$T/b1" "$KMSG; $DENY_ALL; $(probe_args /dev/kmsg:w /dev/null:rw /dev/zero:r /dev/full:w /dev/urandom:r /dev/tty:rw)"
  run_bundle d1 "$T/b1"
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:EPERM' <<<"$out"; then
    ok "deny-all: the container can't open /dev/kmsg (EPERM)"
  else
    not_ok "deny-all: the container can't open /dev/kmsg (EPERM)" "exit $rc" "$out"
  fi
  # /dev/tty has no controlling terminal here (ENXIO): what matters is that
  # the device cgroup let the open reach the driver.
  if grep -qx '/dev/null:rw:ok' <<<"$out" && grep -qx '/dev/zero:r:ok' <<<"$out" &&
    grep -qx '/dev/full:w:ok' <<<"$out" && grep -qx '/dev/urandom:r:ok' <<<"$out" &&
    ! grep -q '/dev/tty:rw:EPERM' <<<"$out"; then
    ok "deny-all: the default devices (null, zero, full, urandom, tty) stay usable"
  else
    not_ok "deny-all: the default devices stay usable" "$out"
  fi

  # No rules at all: still deny-by-default (the spec's default device list).
  make_bundle "$T/b2" "$KMSG; c['linux']['resources'].pop('devices', None); $(probe_args /dev/kmsg:w /dev/null:rw)"
  run_bundle d2 "$T/b2"
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:EPERM' <<<"$out" && grep -qx '/dev/null:rw:ok' <<<"$out"; then
    ok "no device rules: still default-deny, the default devices allowed"
  else
    not_ok "no device rules: still default-deny" "exit $rc" "$out"
  fi

  # /dev/kmsg is probed for writing only (opening it for reading also needs
  # CAP_SYSLOG, which the container does not have; nothing is written).
  # An allow rule grants what it names.
  make_bundle "$T/b3" "$KMSG; $DENY_ALL; c['linux']['resources']['devices'].append({'allow': True, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'w'}); $(probe_args /dev/kmsg:w)"
  run_bundle d3 "$T/b3"
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:ok' <<<"$out"; then
    ok "allow c 1:11 w: /dev/kmsg opens for writing"
  else
    not_ok "allow c 1:11 w: /dev/kmsg opens for writing" "exit $rc" "$out"
  fi
  make_bundle "$T/b3r" "$KMSG; $DENY_ALL; c['linux']['resources']['devices'].append({'allow': True, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'rm'}); $(probe_args /dev/kmsg:w)"
  run_bundle d3r "$T/b3r"
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:EPERM' <<<"$out"; then
    ok "allow c 1:11 rm: not for writing"
  else
    not_ok "allow c 1:11 rm: not for writing" "exit $rc" "$out"
  fi

  # Last match wins, access letter by letter.
  make_bundle "$T/b4" "$KMSG; $DENY_ALL; c['linux']['resources']['devices'] += [{'allow': True, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'rw'}, {'allow': False, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'w'}]; $(probe_args /dev/kmsg:w)"
  run_bundle d4 "$T/b4"
  make_bundle "$T/b4b" "$KMSG; $DENY_ALL; c['linux']['resources']['devices'] += [{'allow': True, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'rw'}, {'allow': False, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'r'}]; $(probe_args /dev/kmsg:w)"
  run_bundle d4b "$T/b4b"
  out4=$out
  rc4=$rc
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:EPERM' <<<"$(cat "$T/d4.out")" && grep -qx '/dev/kmsg:w:ok' <<<"$out4"; then
    ok "rules apply in order, the last match wins (allow rw then deny w: no write; then deny r: write)"
  else
    not_ok "rules apply in order, the last match wins" "$(cat "$T/d4.out")" "exit $rc4" "$out4"
  fi

  # Privileged: allow everything.
  make_bundle "$T/b5" "$KMSG; c['linux']['resources']['devices'] = [{'allow': True, 'access': 'rwm'}]; $(probe_args /dev/kmsg:w)"
  run_bundle d5 "$T/b5"
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:ok' <<<"$out"; then
    ok "allow a *:* rwm: every device"
  else
    not_ok "allow a *:* rwm: every device" "exit $rc" "$out"
  fi

  # exec'd processes join the same cgroup, and update changes the rules.
  make_bundle "$T/b6" "$KMSG; $DENY_ALL; $(args 'import time; time.sleep(60)')"
  "${C[@]}" create -b "$T/b6" d6 >"$T/d6.out" 2>&1 </dev/null
  "${C[@]}" start d6
  out=$("${C[@]}" exec d6 "$PY" -c "$PROBE" /dev/kmsg:w /dev/null:rw 2>&1)
  if grep -qx '/dev/kmsg:w:EPERM' <<<"$out" && grep -qx '/dev/null:rw:ok' <<<"$out"; then
    ok "exec: the process is under the same device rules"
  else
    not_ok "exec: the process is under the same device rules" "$(cat "$T/d6.out")" "$out"
  fi
  echo '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 1, "minor": 11, "access": "w"}]}' >"$T/res.json"
  "${C[@]}" update --resources "$T/res.json" d6 >"$T/upd.out" 2>&1
  rc=$?
  out=$("${C[@]}" exec d6 "$PY" -c "$PROBE" /dev/kmsg:w /dev/null:rw 2>&1)
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:ok' <<<"$out" && grep -qx '/dev/null:rw:ok' <<<"$out"; then
    ok "update --resources with devices changes the running container's rules"
  else
    not_ok "update --resources with devices" "exit $rc: $(cat "$T/upd.out")" "$out"
  fi
  echo '{"devices": [{"allow": false, "access": "rwm"}]}' >"$T/res2.json"
  "${C[@]}" update --resources "$T/res2.json" d6 >"$T/upd2.out" 2>&1
  rc=$?
  out=$("${C[@]}" exec d6 "$PY" -c "$PROBE" /dev/kmsg:w /dev/null:rw 2>&1)
  if [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:EPERM' <<<"$out" && grep -qx '/dev/null:rw:ok' <<<"$out"; then
    ok "update back to deny-all takes the access away again"
  else
    not_ok "update back to deny-all" "exit $rc: $(cat "$T/upd2.out")" "$out"
  fi
  echo '{"devices": [{"allow": true, "type": "q", "access": "rwm"}]}' >"$T/res3.json"
  out=$("${C[@]}" update --resources "$T/res3.json" d6 2>&1)
  rc=$?
  if [ "$rc" != 0 ] && [[ $out == *"devices[0].type"* ]]; then
    ok "update refuses a bad device rule"
  else
    not_ok "update refuses a bad device rule" "exit $rc: $out"
  fi
  "${C[@]}" delete --force d6 >/dev/null 2>&1

  # Bad rules: refused with the JSON path, nothing left behind.
  make_bundle "$T/b7" "$DENY_ALL; c['linux']['resources']['devices'].append({'allow': True, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'xa'})"
  run_bundle d7 "$T/b7"
  if [ "$rc" != 0 ] && [[ $out == *"linux.resources.devices[1].access"* ]] &&
    [ -z "$("${C[@]}" list -q)" ]; then
    ok "an access string with none of r, w, m is refused (other letters alone are ignored, as runc)"
  else
    not_ok "an access string with none of r, w, m is refused" "exit $rc" "$out"
  fi
  make_bundle "$T/b8" "c['linux']['resources']['devices'] = [{'allow': True, 'type': 'c', 'major': 1, 'minor': 11}]"
  run_bundle d8 "$T/b8"
  if [ "$rc" != 0 ] && [[ $out == *"linux.resources.devices[0].access"* ]]; then
    ok "a rule without access is refused"
  else
    not_ok "a rule without access is refused" "exit $rc" "$out"
  fi
  # A hole punched in an earlier wildcard: cgroup v1 can't express it and the
  # container is refused; cgroup v2 (BPF) enforces it.
  make_bundle "$T/b9" "$KMSG; c['linux']['resources']['devices'] = [{'allow': True, 'type': 'c', 'access': 'rwm'}, {'allow': False, 'type': 'c', 'major': 1, 'minor': 11, 'access': 'w'}]; $(probe_args /dev/kmsg:w /dev/null:rw)"
  run_bundle d9 "$T/b9"
  if { [ "$rc" != 0 ] && [[ $out == *"cgroup v1 can't"* ]] && [ -z "$("${C[@]}" list -q)" ]; } ||
    { [ "$rc" = 0 ] && grep -qx '/dev/kmsg:w:EPERM' <<<"$out" && grep -qx '/dev/null:rw:ok' <<<"$out"; }; then
    ok "a deny inside an earlier wildcard allow: enforced (v2) or refused (v1), never ignored"
  else
    not_ok "a deny inside an earlier wildcard allow" "exit $rc" "$out"
  fi
  skip "rootless: no device cgroup, reported" "n/a: runs unprivileged"
else
  # ------------------------------------------------------------ rootless: reported
  make_bundle "$T/r1" "$DENY_ALL; $(args 'import os, stat, errno
try:
    os.mknod("/dev/probe", stat.S_IFCHR | 0o600, os.makedev(1, 11))
    print("mknod:ok")
except OSError as e:
    print("mknod:" + errno.errorcode[e.errno])
f = os.open("/dev/null", os.O_RDWR); os.close(f); print("null:ok")')"
  run_bundle r1 "$T/r1"
  if [ "$rc" = 0 ] && [[ $out == *"warning: linux.resources.devices"*"not enforced"* ]] &&
    grep -qx 'mknod:EPERM' <<<"$out" && grep -qx 'null:ok' <<<"$out"; then
    ok "rootless: no device cgroup, create warns; mknod is refused in the user namespace"
  else
    not_ok "rootless: no device cgroup, create warns; mknod is refused" "exit $rc" "$out"
  fi
  make_bundle "$T/r2" "$(args 'print("hi")')"
  run_bundle r2 "$T/r2"
  if [ "$rc" = 0 ] && [ "$out" = hi ]; then
    ok "rootless without device rules: no warning"
  else
    not_ok "rootless without device rules: no warning" "exit $rc" "$out"
  fi
  "${C[@]}" --log "$T/log.json" --log-format json run -b "$T/r1" r3 >"$T/r3.out" 2>&1 </dev/null
  if grep -q '"level":"warning"' "$T/log.json" 2>/dev/null && grep -q 'linux.resources.devices' "$T/log.json" &&
    ! grep -q 'warning' "$T/r3.out"; then
    ok "rootless: with --log the warning goes to the log"
  else
    not_ok "rootless: with --log the warning goes to the log" "$(cat "$T/log.json" 2>&1)" "$(cat "$T/r3.out")"
  fi
  skip "root: the device cgroup is enforced" "n/a: runs as root"
fi

done_testing
