#!/bin/bash
# tests/conformance's harness itself, without the suites: run.sh against a fake
# suite-crun.sh (its expected-list matching, re-runs of unexpected failures only,
# flaky entries, "now passes", an absent suite, a host change), host-state.sh's
# snapshot and --diff, and suite-crun.sh's answer when the suite is missing.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
conf=$CSRUN_SRCDIR/tests/conformance

# host-state.sh: the four sections, and --diff's verdicts (any user).
d=$(tmpdir)
if bash "$conf/host-state.sh" "$d/snap" && grep -q '^## sysctl' "$d/snap" && grep -q '^## mounts' "$d/snap" \
  && grep -q '^## cgroups' "$d/snap" && grep -q '^## /dev' "$d/snap" && grep -q '^/dev/null c ' "$d/snap"; then
  ok "host-state.sh: sysctls, mounts, cgroups and /dev in the snapshot"
else
  not_ok "host-state.sh: sysctls, mounts, cgroups and /dev in the snapshot" "$(head -n 5 "$d/snap" 2>&1)"
fi
printf 'a\nb\n' > "$d/s1"
printf 'a\nc\n' > "$d/s2"
check "host-state.sh --diff: equal snapshots are 0" bash "$conf/host-state.sh" --diff "$d/s1" "$d/s1"
out=$(bash "$conf/host-state.sh" --diff "$d/s1" "$d/s2")
rc=$?
if [ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q '^+c$' && printf '%s\n' "$out" | grep -q '^-b$'; then
  ok "host-state.sh --diff: a change is 1, with the diff"
else
  not_ok "host-state.sh --diff: a change is 1, with the diff" "rc=$rc" "$out"
fi

# suite-crun.sh without the suite: exit 2, one line naming what is missing.
out=$(bash "$conf/suite-crun.sh" --runtime "$CSRUN" --suites "$d/none" --results "$d/r.txt" 2>&1)
rc=$?
if [ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -q 'not present'; then
  ok "suite-crun.sh: exit 2 and one line when crun's tests are absent"
else
  not_ok "suite-crun.sh: exit 2 and one line when crun's tests are absent" "rc=$rc" "$out"
fi

# suite-crun.sh runs test_tty.py under a terminal, in its foreground process group
# (a runtime that sets the terminal up is stopped by SIGTTOU otherwise), also with no
# $SHELL (script(1) then forks the command from /bin/sh): a fake crun tree whose
# test_tty.py says "ok" only when it is in the foreground.
f=$d/fake-crun/crun-1.8.1/tests
mkdir -p "$f" && : > "$f/tests_utils.py" && printf '#!/bin/sh\n' > "$f/init" && chmod +x "$f/init"
cat > "$f/test_tty.py" << 'EOF'
import os, sys
def fg():
    return os.isatty(1) and os.tcgetpgrp(1) == os.getpgrp()
all_tests = {"test-fg": fg}
if __name__ == "__main__":
    print("1..1")
    print(("ok" if fg() else "not ok") + " 1 - test-fg")
EOF
out=$(env -u SHELL CSRUN_CONFORMANCE_TIMEOUT=20 bash "$conf/suite-crun.sh" --runtime "$CSRUN" \
  --suites "$d/fake-crun" --results "$d/tty.txt" test_tty.py:test-fg 2>&1 < /dev/null)
rc=$?
if [ "$rc" = 0 ] && grep -q -x "$(printf 'pass\ttest_tty.py:test-fg\t')" "$d/tty.txt"; then
  ok "suite-crun.sh: test_tty.py runs in its terminal's foreground process group, with no \$SHELL too"
else
  not_ok "suite-crun.sh: test_tty.py runs in its terminal's foreground process group, with no \$SHELL too" \
    "rc=$rc" "$out" "$(cat "$d/tty.txt" 2>&1)"
fi

if ! is_root; then
  skip "run.sh against a fake suite" "n/a: run.sh runs the suites as root (the root pass runs this)"
  done_testing
  exit
fi

# A tree with run.sh, a fake suite-crun.sh and its expected list.
t=$(tmpdir)
mkdir -p "$t/tests/conformance"
cp "$conf/run.sh" "$t/tests/conformance/"
cat > "$t/tests/conformance/suite-crun.sh" <<'EOF'
#!/bin/bash
# Fake suite: results by name; "flip" fails the first time and passes when re-run.
while [ $# -gt 0 ]; do
  case $1 in
    --runtime | --suites) [ "$1" = --suites ] && suites=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    *) break ;;
  esac
done
[ -f "$suites/absent" ] && { echo "suite-crun.sh: fake source not present" >&2; exit 2; }
echo "called: $*" >> "$suites/calls"
names=("$@")
[ $# -gt 0 ] || names=(good bad known nowgood flaky flip)
: > "$results"
for n in "${names[@]}"; do
  case $n in
    good | nowgood) s=pass ;;
    flip) if [ $# -gt 0 ]; then s=pass; else s=fail; fi ;;
    *) s=fail ;;
  esac
  [ -f "$suites/nobad" ] && [ "$n" = bad ] && s=pass
  printf '%s\t%s\t%s\n' "$s" "$n" "detail of $n" >> "$results"
  mkdir -p "$results.d" && printf 'first line of %s\nlast words of %s\n' "$n" "$n" > "$results.d/$n.log"
done
exit 0
EOF
printf '# comment\nknown\ta known failure\nnowgood\tfixed since\nflaky\tflaky: sometimes\n' \
  > "$t/tests/conformance/expected-crun.txt"
# A constant snapshot, or one that changes when $suites/change exists.
cat > "$t/hs" <<'EOF'
#!/bin/bash
if [ "$1" = --diff ]; then diff -u "$2" "$3"; [ $? = 0 ] || exit 1; exit 0; fi
{ echo "state"; [ -f "$HS_DIR/change" ] && [ -f "$HS_DIR/calls" ] && echo "changed"; } > "$1"
exit 0
EOF
chmod +x "$t/tests/conformance/"*.sh "$t/hs"
s=$(tmpdir)
runit () {
  HS_DIR=$s CSRUN_CONFORMANCE_HOST_STATE=$t/hs bash "$t/tests/conformance/run.sh" --runtime "$CSRUN" \
    --suite crun --suites "$s" --out "$(tmpdir)" 2>&1
}
out=$(runit)
rc=$?
if [ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q 'unexpected fail: bad -- detail of bad'; then
  ok "run.sh: an unlisted failure fails the run and is named"
else
  not_ok "run.sh: an unlisted failure fails the run and is named" "rc=$rc" "$out"
fi
if printf '%s\n' "$out" | grep -q -- '---- crun: bad: the end of .*/crun-csrun.txt.d/bad.log' \
  && printf '%s\n' "$out" | grep -q '^last words of bad$' && ! printf '%s\n' "$out" | grep -q 'last words of known'; then
  ok "run.sh: the end of an unexpected failure's log is shown (CI shows the tail of its output)"
else
  not_ok "run.sh: the end of an unexpected failure's log is shown (CI shows the tail of its output)" "$out"
fi
if printf '%s\n' "$out" | grep -q 'now passes: remove from expected-crun.txt: nowgood' \
  && ! printf '%s\n' "$out" | grep -q -E 'known|flaky|flip'; then
  ok "run.sh: a listed test that passes is reported; listed, flaky and re-run-passing ones are quiet"
else
  not_ok "run.sh: a listed test that passes is reported; listed, flaky and re-run-passing ones are quiet" "$out"
fi
if grep -q '^called: bad flaky flip$' "$s/calls" && [ "$(wc -l < "$s/calls")" = 2 ]; then
  ok "run.sh: only unexpected (and flaky) failures are re-run, once"
else
  not_ok "run.sh: only unexpected (and flaky) failures are re-run, once" "$(cat "$s/calls")"
fi
if printf '%s\n' "$out" | grep -q -E '^crun +\| csrun +\| +3 \| +3 \| +0 \| +2 \|'; then
  ok "run.sh: the table counts pass/fail/skip after the re-run, and the listed ones"
else
  not_ok "run.sh: the table counts pass/fail/skip after the re-run, and the listed ones" "$out"
fi
touch "$s/nobad"
rm -f "$s/calls"
out=$(runit)
rc=$?
if [ "$rc" = 0 ] && ! printf '%s\n' "$out" | grep -q unexpected; then
  ok "run.sh: exit 0 when every failure is listed"
else
  not_ok "run.sh: exit 0 when every failure is listed" "rc=$rc" "$out"
fi
touch "$s/change"
rm -f "$s/calls"
out=$(runit)
rc=$?
if [ "$rc" = 1 ] && printf '%s\n' "$out" | grep -q 'HOST STATE CHANGED' \
  && printf '%s\n' "$out" | grep -q -- '+changed'; then
  ok "run.sh: a host change fails the run and is shown"
else
  not_ok "run.sh: a host change fails the run and is shown" "rc=$rc" "$out"
fi
rm -f "$s/change"
touch "$s/absent"
out=$(runit)
rc=$?
if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q -E '^crun +\| not run: suite-crun.sh: fake source not present'; then
  ok "run.sh: an absent suite is one line saying why"
else
  not_ok "run.sh: an absent suite is one line saying why" "rc=$rc" "$out"
fi
done_testing
