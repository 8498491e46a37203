#!/bin/bash
# process.apparmorProfile: on a host without AppArmor a container that asks for
# a profile is refused (one line, nothing left), as runc and crun refuse it; on
# an AppArmor host csrun runs it (the profile is read, not applied: csrun-oci(8)).
# Without a profile nothing changes.
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
done_testing
