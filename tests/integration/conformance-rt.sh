#!/bin/bash
# tests/conformance/{prepare,suite}-runtime-tools.sh themselves, on a fake
# runtime-tools tree: the pass rule (exit 0 and no "not ok" anywhere), vacuous
# files, timeouts, mounts a file leaves in its bundle, and exit 2 with one line
# when the source is absent.  No runtime and no Go needed.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
prep=$CSRUN_SRCDIR/tests/conformance/prepare-runtime-tools.sh
suite=$CSRUN_SRCDIR/tests/conformance/suite-runtime-tools.sh

# expect_absent DESC PATTERN CMD...: exit 2, exactly one stderr line matching PATTERN.
expect_absent () {
  local desc=$1 pattern=$2
  shift 2
  "$@" >"$T/out" 2>"$T/err" </dev/null
  local rc=$?
  if [ $rc = 2 ] && [ "$(grep -c . "$T/err")" = 1 ] && grep -qE "$pattern" "$T/err"; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc" "$(cat "$T/err")"
  fi
}

mkdir -p "$T/empty"
expect_absent "suite: no source: exit 2, one line naming CSRUN_RUNTIME_TOOLS_SRC" \
  'source not present.*CSRUN_RUNTIME_TOOLS_SRC' \
  "$suite" --runtime /bin/true --suites "$T/empty" --results "$T/r.txt"
expect_absent "prepare: no source: exit 2, one line" \
  'source not present.*CSRUN_RUNTIME_TOOLS_SRC' \
  env -u CSRUN_RUNTIME_TOOLS_SRC "$prep" "$T/empty"
expect_absent "prepare: CSRUN_RUNTIME_TOOLS_SRC not a directory: exit 2" \
  'not a directory' env CSRUN_RUNTIME_TOOLS_SRC="$T/nowhere" "$prep" "$T/empty"
if command -v git >/dev/null; then
  git init -q "$T/notrt" && git -C "$T/notrt" -c user.name=t -c user.email=t@t \
    commit -q --allow-empty -m x
  expect_absent "prepare: a repository without commit 0105384: exit 2" \
    'cannot check out commit 0105384' env CSRUN_RUNTIME_TOOLS_SRC="$T/notrt" "$prep" "$T/s2"
  [ ! -e "$T/s2/runtime-tools" ] && ok "prepare: nothing left behind after a failed checkout" \
    || not_ok "prepare: nothing left behind after a failed checkout"
else
  skip "prepare: a repository without commit 0105384" "git not installed"
  skip "prepare: nothing left behind after a failed checkout" "git not installed"
fi

if ! is_root || ! command -v unshare >/dev/null; then
  skip "suite: results on a fake tree" "n/a: root only (the suite runs root containers)"
  done_testing
  exit
fi

# A fake built tree: runtimetest, the rootfs tarball, validation/X/X.t scripts.
rt=$T/suites/runtime-tools
mkdir -p "$rt/validation"
: > "$rt/runtimetest" && chmod 755 "$rt/runtimetest"
tar -czf "$rt/rootfs-amd64.tar.gz" -T /dev/null
fake () {
  mkdir -p "$rt/validation/$1"
  { echo '#!/bin/bash'; cat; } > "$rt/validation/$1/$1.t"
  chmod 755 "$rt/validation/$1/$1.t"
}
fake good <<'EOF'
echo "TAP version 13"; echo "ok 1 - fine"; echo "1..1"
EOF
fake notok <<'EOF'
echo "TAP version 13"; echo "ok 1 - fine"; echo "not ok 2 - broken"; echo "1..2"; exit 0
EOF
fake inner <<'EOF'
echo "TAP version 13"; echo '  "stdout": "ok 1\nnot ok 2 - inner\n"'; echo "ok 1 - outer"; echo "1..1"
EOF
fake exit1 <<'EOF'
echo "TAP version 13"; echo "csrun: something went wrong" >&2; echo "exit status 1" >&2; exit 1
EOF
fake vacuous <<'EOF'
echo "TAP version 13"; echo '  "error": "hooks MUST be called\nRefer to: x",'; echo "1..0"
EOF
fake hang <<'EOF'
echo "TAP version 13"; exec sleep 60
EOF
# A file whose runtime left a mount in its bundle (a config without a mount
# namespace): the suite must detach it, never recurse into it.
fake mounter <<'EOF'
d=$(mktemp -d "$TMPDIR/ocitest.XXXXXX") && mkdir "$d/bind" && mount --bind "$KEEP" "$d/bind"
echo "ok 1 - mounted"; echo "1..1"
EOF
mkdir "$T/keep" && echo precious > "$T/keep/file"

start=$(date +%s)
CSRUN_CONFORMANCE_TIMEOUT=3 KEEP=$T/keep "$suite" --runtime /bin/true --suites "$T/suites" \
  --results "$T/res.txt" > "$T/suite.out" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
[ $rc = 0 ] && ok "suite: exit 0 when it ran" || not_ok "suite: exit 0 when it ran" "exit $rc" "$(cat "$T/suite.out")"
status () { awk -F'\t' -v n="validation/$1.t" '$2 == n { print $1 }' "$T/res.txt"; }
detail () { awk -F'\t' -v n="validation/$1.t" '$2 == n { print $3 }' "$T/res.txt"; }
[ "$(wc -l < "$T/res.txt")" = 7 ] && ok "suite: one line per file" || not_ok "suite: one line per file" "$(cat "$T/res.txt")"
[ "$(status good)" = pass ] && [ -z "$(detail good)" ] && ok "a clean file passes" || not_ok "a clean file passes" "$(cat "$T/res.txt")"
[ "$(status notok)" = fail ] && detail notok | grep -q 'not ok 2 - broken' \
  && ok "exit 0 with a not ok fails, naming it" || not_ok "exit 0 with a not ok fails" "$(cat "$T/res.txt")"
[ "$(status inner)" = fail ] && ok "a not ok inside the inner runtimetest output fails" \
  || not_ok "a not ok inside the inner output fails" "$(cat "$T/res.txt")"
[ "$(status exit1)" = fail ] && detail exit1 | grep -q 'exit 1; csrun: something went wrong' \
  && ok "a non-zero exit fails, with the runtime's message" || not_ok "a non-zero exit fails" "$(cat "$T/res.txt")"
[ "$(status vacuous)" = pass ] && detail vacuous | grep -q '^vacuous (1..0); error diagnostic: hooks MUST be called$' \
  && ok "1..0 passes as vacuous and shows its error diagnostic" || not_ok "1..0 is vacuous" "$(cat "$T/res.txt")"
[ "$(status hang)" = fail ] && detail hang | grep -q '^timeout (3s)$' && [ "$elapsed" -lt 50 ] \
  && ok "a hung file is killed and counted as timeout" || not_ok "a hung file is killed" "elapsed ${elapsed}s" "$(cat "$T/res.txt")"
[ "$(status mounter)" = pass ] && [ "$(cat "$T/keep/file" 2>/dev/null)" = precious ] \
  && ok "a mount left in a bundle is detached, its files untouched" \
  || not_ok "a mount left in a bundle is detached" "$(cat "$T/res.txt")" "$(ls -la "$T/keep")"
[ -s "$T/res.txt.d/notok.log" ] && grep -q 'not ok 2' "$T/res.txt.d/notok.log" \
  && ok "per-file logs under FILE.d" || not_ok "per-file logs under FILE.d" "$(ls "$T/res.txt.d")"
if ! grep -q "$T" /proc/self/mountinfo; then ok "no mount left in the caller's namespace"; else not_ok "no mount left" "$(grep "$T" /proc/self/mountinfo)"; fi

CSRUN_CONFORMANCE_TIMEOUT=3 "$suite" --runtime /bin/true --suites "$T/suites" --results "$T/one.txt" \
  validation/good.t notok > /dev/null 2>&1
[ "$(cut -f2 "$T/one.txt" | tr '\n' ' ')" = "validation/good.t validation/notok.t " ] \
  && ok "named files only, in both name forms" || not_ok "named files only" "$(cat "$T/one.txt")"
expect_absent "an unknown file name: exit 2, one line" 'no such validation file' \
  "$suite" --runtime /bin/true --suites "$T/suites" --results "$T/x.txt" nosuch
done_testing
