#!/bin/bash
# The rootfs cache, driven through the real binary: a tarball is unpacked once
# (atomically, under a lock) and reused; hostile tarballs are refused without
# writing anything outside the cache.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

if [ ! -r "$CSRUN_TEST_ROOTFS" ]; then
  skip "rootfs cache tests" "no rootfs tarball at $CSRUN_TEST_ROOTFS"
  done_testing
  exit
fi

T=$(tmpdir)
snippet="$T/hello.py"
echo 'print("hello from the rootfs")' >"$snippet"
want_sha=$(sha256sum "$CSRUN_TEST_ROOTFS" | cut -d' ' -f1)

now_ms () {
  echo $(($(date +%s%N) / 1000000))
}

# run_with CACHE OUT ERR [csrun run options...]: run the snippet with the
# tarball against CACHE; sets $rc.
run_with () {
  local cache=$1 out=$2 err=$3
  shift 3
  CSRUN_CACHE_DIR="$cache" csrun run --rootfs "$CSRUN_TEST_ROOTFS" --json "$@" "$snippet" \
    >"$out" 2>"$err" </dev/null
  rc=$?
  return $rc
}

# trees CACHE: the <sha256> trees in CACHE, one a line.
trees () {
  find "$1" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended \
    -regex '.*/[0-9a-f]{64}' -printf '%f\n' 2>/dev/null | sort
}

# temps CACHE: leftovers of unpacks (temporary trees), one a line.
temps () {
  find "$1" -mindepth 1 -maxdepth 1 -name '.tmp*' -printf '%f\n' 2>/dev/null
}

# ---------------------------------------------------------------- cold, then warm
cache="$T/cache1"
t0=$(now_ms)
run_with "$cache" "$T/run1.json" "$T/run1.err"
t1=$(now_ms)
if [ "$rc" -eq 0 ]; then
  ok "first run with a fresh cache succeeds"
else
  not_ok "first run with a fresh cache succeeds" "exit $rc" "$(cat "$T/run1.err")"
fi
if [ "$rc" -eq 0 ] && [ "$(json_get "$T/run1.json" 'j["rootfs"]["unpacked"]')" = True ]; then
  ok "first run reports rootfs.unpacked true"
else
  not_ok "first run reports rootfs.unpacked true" "$(head -c 2000 "$T/run1.json")"
fi
if [ "$rc" -eq 0 ] && [ "$(json_get "$T/run1.json" 'j["rootfs"]["sha256"]')" = "$want_sha" ]; then
  ok "rootfs.sha256 is the tarball's sha256sum"
else
  not_ok "rootfs.sha256 is the tarball's sha256sum" "want $want_sha" \
    "$(head -c 2000 "$T/run1.json")"
fi
if [ "$rc" -eq 0 ] && [ "$(json_get "$T/run1.json" 'j["attempts"][-1]["stdout"]')" = \
  "hello from the rootfs" ]; then
  ok "the snippet ran with the unpacked rootfs"
else
  not_ok "the snippet ran with the unpacked rootfs" "$(head -c 2000 "$T/run1.json")"
fi

warm_ms=
for i in 1 2; do
  t2=$(now_ms)
  run_with "$cache" "$T/run2.json" "$T/run2.err"
  t3=$(now_ms)
  [ "$rc" -eq 0 ] || break
  d=$((t3 - t2))
  if [ -z "$warm_ms" ] || [ "$d" -lt "$warm_ms" ]; then warm_ms=$d; fi
done
if [ "$rc" -eq 0 ] && [ "$(json_get "$T/run2.json" 'j["rootfs"]["unpacked"]')" = False ]; then
  ok "second run reports rootfs.unpacked false"
else
  not_ok "second run reports rootfs.unpacked false" "exit $rc" "$(cat "$T/run2.err")" \
    "$(head -c 2000 "$T/run2.json")"
fi
if [ "$(trees "$cache")" = "$want_sha" ]; then
  ok "the cache holds exactly one tree, named by the tarball's sha256"
else
  not_ok "the cache holds exactly one tree, named by the tarball's sha256" "want $want_sha" \
    "$(ls -la "$cache" 2>&1)"
fi
if [ -z "$(temps "$cache")" ]; then
  ok "no temporary directory is left in the cache"
else
  not_ok "no temporary directory is left in the cache" "$(ls -la "$cache")"
fi
if [ -d "$cache/$want_sha" ] && [ "$(stat -c %a "$cache/$want_sha")" = 555 ]; then
  ok "the tree's top directory is 0555 (read-only, world-readable)"
else
  not_ok "the tree's top directory is 0555 (read-only, world-readable)" \
    "$(stat -c '%a %n' "$cache/$want_sha" 2>&1)"
fi
if [ -n "$warm_ms" ]; then
  diag "cold run $((t1 - t0)) ms, warm run $warm_ms ms: cold unpack of $(basename \
    "$CSRUN_TEST_ROOTFS") ($(du -k "$CSRUN_TEST_ROOTFS" | cut -f1) KiB) ~ $((t1 - t0 - warm_ms)) ms"
fi

# ---------------------------------------------------------------- concurrent first runs
cache="$T/cache4"
pids=()
for i in 1 2 3 4; do
  run_with "$cache" "$T/c$i.json" "$T/c$i.err" &
  pids+=($!)
done
failed=()
for i in 1 2 3 4; do
  wait "${pids[$((i - 1))]}" || failed+=("run $i: $(cat "$T/c$i.err")")
done
if [ ${#failed[@]} -eq 0 ]; then
  ok "4 concurrent first runs all succeed"
else
  not_ok "4 concurrent first runs all succeed" "${failed[@]}"
fi
unpacked=0
for i in 1 2 3 4; do
  [ "$(json_get "$T/c$i.json" 'j["rootfs"]["unpacked"]' 2>/dev/null)" = True ] &&
    unpacked=$((unpacked + 1))
done
if [ "$unpacked" -eq 1 ]; then
  ok "exactly one of the concurrent runs unpacked the tarball"
else
  not_ok "exactly one of the concurrent runs unpacked the tarball" "$unpacked did"
fi
if [ "$(trees "$cache")" = "$want_sha" ] && [ -z "$(temps "$cache")" ]; then
  ok "concurrent runs leave one tree and no temporary directory"
else
  not_ok "concurrent runs leave one tree and no temporary directory" "$(ls -la "$cache" 2>&1)"
fi

# ---------------------------------------------------------------- hostile tarballs
# make_hostile KIND FILE TARGET: write a tarball with python3's tarfile module.
make_hostile () {
  python3 - "$1" "$2" "$3" <<'PY'
import io, sys, tarfile
kind, path, target = sys.argv[1:4]
def reg(t, name, data=b"evil\n"):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = 0o644
    t.addfile(ti, io.BytesIO(data))
with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
    reg(t, "usr/ok", b"fine\n")
    if kind == "dotdot":
        reg(t, "../evil")
    elif kind == "symlink":
        ti = tarfile.TarInfo("a")
        ti.type = tarfile.SYMTYPE
        ti.linkname = target
        t.addfile(ti)
        reg(t, "a/x")
    elif kind == "chardev":
        ti = tarfile.TarInfo("dev/mem")
        ti.type = tarfile.CHRTYPE
        ti.mode = 0o666
        ti.devmajor, ti.devminor = 1, 1
        t.addfile(ti)
    elif kind == "setuid":
        ti = tarfile.TarInfo("usr/bin/su")
        ti.size = 0
        ti.mode = 0o4755
        t.addfile(ti, io.BytesIO(b""))
PY
}

# unexpected DIR: everything below DIR except the tarball, the empty target
# directory and the cache's own lock and index; must print nothing.
unexpected () {
  find "$1" -mindepth 1 \
    ! -path "$1/hostile.tar" ! -path "$1/target" \
    ! -path "$1/cache" ! -path "$1/cache/.lock" ! -path "$1/cache/by-stat" ! -path "$1/cache/.empty" \
    -print
}

for spec in "dotdot:../evil" "symlink:a/x" "chardev:dev/mem" "setuid:usr/bin/su"; do
  kind=${spec%%:*}
  entry=${spec#*:}
  H=$(tmpdir)
  mkdir "$H/target"
  if ! make_hostile "$kind" "$H/hostile.tar" "$H/target"; then
    not_ok "hostile tarball ($kind) is refused" "python3 could not write the tarball"
    continue
  fi
  (cd "$H/target" && CSRUN_CACHE_DIR="$H/cache" \
    csrun run --rootfs "$H/hostile.tar" "$snippet" >"$H.out" 2>"$H.err" </dev/null)
  rc=$?
  lines=$(wc -l <"$H.err")
  if [ "$rc" -eq 125 ] && [ "$lines" -eq 1 ] && grep -qF "'$entry'" "$H.err"; then
    ok "hostile tarball ($kind) fails with 125 and one line naming '$entry'"
  else
    not_ok "hostile tarball ($kind) fails with 125 and one line naming '$entry'" \
      "exit $rc, $lines line(s) on stderr:" "$(cat "$H.err")"
  fi
  left=$(unexpected "$H")
  if [ -z "$left" ] && [ ! -e "$T/evil" ]; then
    ok "hostile tarball ($kind) leaves nothing behind, in the cache or outside"
  else
    not_ok "hostile tarball ($kind) leaves nothing behind, in the cache or outside" "$left"
  fi
  rm -f "$H.out" "$H.err"
done

# ---------------------------------------------------------------- bad sources
G=$(tmpdir)
head -c 100000 /dev/urandom >"$G/garbage.tar.zst"
CSRUN_CACHE_DIR="$G/cache" csrun run --rootfs "$G/garbage.tar.zst" "$snippet" \
  >/dev/null 2>"$G/err" </dev/null
rc=$?
if [ "$rc" -eq 125 ] && [ "$(wc -l <"$G/err")" -eq 1 ] && grep -qF "$G/garbage.tar.zst" "$G/err" &&
  [ -z "$(trees "$G/cache")" ] && [ -z "$(temps "$G/cache")" ]; then
  ok "a file that is not an archive fails with 125 and one line naming it"
else
  not_ok "a file that is not an archive fails with 125 and one line naming it" "exit $rc" \
    "$(cat "$G/err")" "$(ls -la "$G/cache" 2>&1)"
fi

CSRUN_CACHE_DIR="$G/cache" csrun run --rootfs /nonexistent "$snippet" >/dev/null 2>"$G/err" \
  </dev/null
rc=$?
if { [ "$rc" -eq 125 ] || [ "$rc" -eq 2 ]; } && [ "$(wc -l <"$G/err")" -eq 1 ] &&
  grep -qF "/nonexistent" "$G/err"; then
  ok "--rootfs /nonexistent fails ($rc) with one line naming the path"
else
  not_ok "--rootfs /nonexistent fails (125 or 2) with one line naming the path" "exit $rc" \
    "$(cat "$G/err")"
fi

done_testing
