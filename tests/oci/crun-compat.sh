#!/bin/bash
# Behaviours crun's tests (test_exec.py, test_tty.py, test_start.py) check
# and runc shares: a later KEY= in the process env replaces an earlier one
# (exec --env PATH=... overrides the spec's PATH), a terminal without
# --console-socket under create/run -d is refused before anything else is
# checked, start of a container that `state` already shows as "creating"
# waits for create, exec --pid-file holds the host pid.  Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT
. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs

# ---------------------------------------------------------------- env: the last KEY= wins
SHOW='import os; print(os.environ["PATH"], os.environ["FOO"], sum(1 for e in open("/proc/self/environ").read().split("\0") if e.startswith("PATH=")))'
make_bundle "$T/b1" "$(args "$SHOW"); c[\"process\"][\"env\"] = [\"PATH=/first\", \"FOO=1\", \"PATH=/usr/bin:/bin\", \"FOO=2\"]"
out=$("${C[@]}" run -b "$T/b1" e1 2>&1 </dev/null)
[ "$out" = "/usr/bin:/bin 2 1" ] && ok "process.env: a later KEY= replaces an earlier one (runc, crun)" ||
  not_ok "process.env duplicates" "$out"

make_bundle "$T/b2" "$(args 'import time; time.sleep(120)')"
"${C[@]}" run -d -b "$T/b2" e2 >"$T/e2.out" 2>&1 </dev/null || not_ok "run -d e2" "$(cat "$T/e2.out")"
out=$("${C[@]}" exec --env PATH=/usr/bin --env FOO=a -e FOO=b e2 "$PY" -c "$SHOW" 2>&1)
[ "$out" = "/usr/bin b 1" ] && ok "exec --env PATH=/usr/bin overrides the spec's PATH; the last --env wins" ||
  not_ok "exec --env PATH" "$out"

# ---------------------------------------------------------------- exec --pid-file
"${C[@]}" exec -d --pid-file "$T/exec.pid" e2 "$PY" -c 'import time; time.sleep(60)' >"$T/x.out" 2>&1
content=$(cat "$T/exec.pid" 2>/dev/null)
if [[ $content =~ ^[0-9]+$ ]] && [ "$(wc -l <"$T/exec.pid")" = 0 ] &&
  tr '\0' ' ' <"/proc/$content/cmdline" 2>/dev/null | grep -q 'time.sleep(60)'; then
  ok "exec --pid-file: the exec'd process's host pid, digits only (no newline), as runc and crun"
else
  not_ok "exec --pid-file" "$(cat "$T/x.out")" "pid file: '$content'"
fi
"${C[@]}" delete --force e2 >/dev/null 2>&1

# ---------------------------------------------------------------- terminal + detach
# process.args is invalid too (a number): crun names the console socket first.
make_bundle "$T/b3" 'c["process"]["terminal"] = True; c["process"]["args"] = ["/bin/true", 0]'
for how in create "run -d"; do
  out=$("${C[@]}" $how -b "$T/b3" t1 2>&1 </dev/null)
  rc=$?
  [ "$rc" != 0 ] && [[ $out == *"use --console-socket"* ]] &&
    ok "$how: process.terminal without --console-socket is refused first (crun's message)" ||
    not_ok "$how: terminal without --console-socket" "exit $rc: $out"
  "${C[@]}" delete --force t1 >/dev/null 2>&1
done

# ---------------------------------------------------------------- start while creating
# A createRuntime hook keeps create busy for 2 s; `state` answers "creating" meanwhile.
make_bundle "$T/b4" "$(args 'print("started")'); c[\"hooks\"] = {\"createRuntime\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"sleep 2\"]}]}"
"${C[@]}" create -b "$T/b4" s1 >"$T/s1.out" 2>&1 </dev/null &
cpid=$!
st=
for _ in $(seq 200); do
  st=$("${C[@]}" state s1 2>/dev/null | json_get /dev/stdin 'j["status"]' 2>/dev/null) && [ -n "$st" ] && break
  sleep 0.02
done
"${C[@]}" start s1 >"$T/start.out" 2>&1
rc=$?
wait "$cpid"
crc=$?
for _ in $(seq 100); do grep -q started "$T/s1.out" && break; sleep 0.05; done
[ "$st" = creating ] && [ "$rc" = 0 ] && [ "$crc" = 0 ] && grep -q started "$T/s1.out" &&
  ok "start of a container still being created waits for create, then starts it" ||
  not_ok "start while creating" "state said '$st'; start exit $rc: $(cat "$T/start.out")" "create exit $crc: $(cat "$T/s1.out")"
"${C[@]}" delete --force s1 >/dev/null 2>&1

done_testing
