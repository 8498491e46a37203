#!/bin/bash
# process.apparmorProfile: on a host without AppArmor a container that asks for
# a profile is refused (one line, nothing left), as runc and crun refuse it; on
# an AppArmor host csrun runs it (the profile is read, not applied: csrun-oci(8)).
# Without a profile nothing changes.  The same for exec --apparmor.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
R=$T/state
C=("$CSRUN" --root "$R")
trap 'for id in $("${C[@]}" list -q 2>/dev/null); do "${C[@]}" delete --force "$id" >/dev/null 2>&1; done; _tap_cleanup' EXIT

. "$CSRUN_SRCDIR/tests/lib/oci.sh"
oci_rootfs

enabled=N
[ -r /sys/module/apparmor/parameters/enabled ] && enabled=$(head -c 1 /sys/module/apparmor/parameters/enabled)

make_bundle "$T/b0" "$(args 'print("ran")')"
"${C[@]}" run -b "$T/b0" a0 >"$T/a0.out" 2>&1 </dev/null
rc=$?
[ $rc = 0 ] && grep -qx ran "$T/a0.out" && ok "no apparmorProfile: the container runs" \
  || not_ok "no apparmorProfile: the container runs" "exit $rc" "$(cat "$T/a0.out")"

make_bundle "$T/b1" "$(args 'print("ran")'); c['process']['apparmorProfile'] = 'csrun-test-profile'"
"${C[@]}" run -b "$T/b1" a1 >"$T/a1.out" 2>"$T/a1.err" </dev/null
rc=$?
if [ "$enabled" = Y ]; then
  [ $rc = 0 ] && grep -qx ran "$T/a1.out" && ok "AppArmor host: a container with a profile runs" \
    || not_ok "AppArmor host: a container with a profile runs" "exit $rc" "$(cat "$T/a1.err")"
else
  if [ $rc != 0 ] && [ "$(grep -c . "$T/a1.err")" = 1 ] \
    && grep -q 'process.apparmorProfile "csrun-test-profile": AppArmor is not enabled on this host' "$T/a1.err" \
    && ! grep -q ran "$T/a1.out"; then
    ok "no AppArmor: a profile is refused with one line naming it"
  else
    not_ok "no AppArmor: a profile is refused with one line naming it" "exit $rc" \
      "$(cat "$T/a1.out" "$T/a1.err")"
  fi
  "${C[@]}" state a1 >/dev/null 2>&1 && not_ok "no AppArmor: nothing left" "state a1 exists" \
    || ok "no AppArmor: nothing left (no container state)"
fi
# exec --apparmor PROFILE (and a --process file's apparmorProfile): refused
# where AppArmor is off, as create refuses the container's; nothing runs.
make_bundle "$T/b2" "$(args 'import time; time.sleep(60)')"
if "${C[@]}" run -d -b "$T/b2" a2 >"$T/a2.out" 2>&1 </dev/null; then
  "${C[@]}" exec --apparmor csrun-test-profile a2 "$PY" -c 'print("ran")' >"$T/x1.out" 2>"$T/x1.err" </dev/null
  rc=$?
  printf '{"cwd": "/", "args": ["%s", "-c", "print(\\"ran\\")"], "apparmorProfile": "csrun-test-profile"}' \
    "$PY" >"$T/proc.json"
  "${C[@]}" exec --process "$T/proc.json" a2 >"$T/x2.out" 2>"$T/x2.err" </dev/null
  rc2=$?
  if [ "$enabled" = Y ]; then
    [ $rc = 0 ] && grep -qx ran "$T/x1.out" && ok "AppArmor host: exec --apparmor runs" \
      || not_ok "AppArmor host: exec --apparmor runs" "exit $rc" "$(cat "$T/x1.err")"
  else
    if [ $rc = 255 ] && [ "$(grep -c . "$T/x1.err")" = 1 ] && ! grep -q ran "$T/x1.out" \
      && grep -q 'exec --apparmor: process.apparmorProfile "csrun-test-profile": AppArmor is not enabled on this host' "$T/x1.err"; then
      ok "no AppArmor: exec --apparmor is refused (255, one line naming the profile), nothing runs"
    else
      not_ok "no AppArmor: exec --apparmor is refused (255, one line naming the profile), nothing runs" \
        "exit $rc" "$(cat "$T/x1.out" "$T/x1.err")"
    fi
    if [ $rc2 = 255 ] && ! grep -q ran "$T/x2.out" \
      && grep -q 'AppArmor is not enabled on this host' "$T/x2.err"; then
      ok "no AppArmor: exec --process with an apparmorProfile is refused"
    else
      not_ok "no AppArmor: exec --process with an apparmorProfile is refused" "exit $rc2" \
        "$(cat "$T/x2.out" "$T/x2.err")"
    fi
  fi
  out=$("${C[@]}" exec a2 "$PY" -c 'print("ran")' 2>&1 </dev/null)
  [ "$out" = ran ] && ok "exec without --apparmor still runs" \
    || not_ok "exec without --apparmor still runs" "$out"
else
  not_ok "a detached container for exec --apparmor" "$(cat "$T/a2.out")"
fi
done_testing
