#!/bin/bash
# The rootfs cache under stress, through the real binary: a full file system
# during the unpack (a small tmpfs, a loop-mounted ext4: as root, in a private
# mount namespace) fails cleanly with exit 125 and publishes nothing, and works
# once there is room; published trees are read-only; a damaged tree is found
# and unpacked again by the next run, or by `csrun cache verify --repair`.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

if [ ! -r "$CSRUN_TEST_ROOTFS" ]; then
  skip "rootfs cache tests" "no rootfs tarball at $CSRUN_TEST_ROOTFS"
  done_testing
  exit
fi

T=$(tmpdir)
snippet="$T/hello.py"
echo 'print("hello from the rootfs")' >"$snippet"
sha=$(sha256sum "$CSRUN_TEST_ROOTFS" | cut -d' ' -f1)

# trees DIR / temps DIR: the published trees, the leftovers of unpacks.
trees () {
  find "$1" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended \
    -regex '.*/[0-9a-f]{64}' -printf '%f\n' 2>/dev/null | sort
}
temps () {
  find "$1" -mindepth 1 -maxdepth 1 -name '.tmp*' -printf '%f\n' 2>/dev/null
}

# run_in CACHE NAME [options...]: run the snippet; $T/NAME.{out,err}, sets $rc.
run_in () {
  local cache=$1 name=$2
  shift 2
  "$CSRUN" run --rootfs "$CSRUN_TEST_ROOTFS" --cache-dir "$cache" "$@" "$snippet" \
    >"$T/$name.out" 2>"$T/$name.err" </dev/null
  rc=$?
}

# ---------------------------------------------------------------- full file systems (root)

# The script run inside `unshare -m`: MOUNT_CMD makes $mnt a small file
# system, then two runs (out of space) and, after GROW_CMD, a third.
cat >"$T/full.sh" <<'EOF'
set -u
kind=$1 mnt=$2 out=$3 rootfs=$4 snippet=$5 img=$6
mount --make-rprivate / || exit 90
case $kind in
  tmpfs) mount -t tmpfs -o size=8m,mode=0755 tmpfs "$mnt" || exit 91 ;;
  ext4)
    truncate -s 160M "$img" && mkfs.ext4 -q -m 0 "$img" || exit 92
    mount -o loop "$img" "$mnt" || exit 93
    avail=$(df -B1 --output=avail "$mnt" | tail -1)
    # Leave 8 MiB: far less than the tree needs.
    fallocate -l $((avail - 8 * 1024 * 1024)) "$mnt/filler" || exit 94
    ;;
esac
for i in 1 2 3; do
  if [ "$i" = 3 ]; then
    case $kind in
      tmpfs) mount -o remount,size=256m "$mnt" || exit 95 ;;
      ext4) rm -f "$mnt/filler" ;;
    esac
  fi
  "$CSRUN" run --rootfs "$rootfs" --cache-dir "$mnt/cache" "$snippet" \
    >"$out.$i.out" 2>"$out.$i.err" </dev/null
  echo $? >"$out.$i.rc"
  ls -A "$mnt/cache" >"$out.$i.ls" 2>&1
  df -B1 --output=used "$mnt" | tail -1 >"$out.$i.used"
done
umount "$mnt"
exit 0
EOF

full_fs () {
  local kind=$1 what=$2
  local mnt="$T/mnt-$kind" out="$T/full-$kind"
  mkdir -p "$mnt"
  unshare -m --propagation private bash "$T/full.sh" "$kind" "$mnt" "$out" \
    "$CSRUN_TEST_ROOTFS" "$snippet" "$T/$kind.img" >"$out.log" 2>&1
  local urc=$?
  if [ "$urc" -ne 0 ]; then
    skip "$what: out of space fails cleanly" "cannot set up the file system (step $urc): \
$(head -c 300 "$out.log")"
    return
  fi
  for i in 1 2; do
    local got
    got=$(cat "$out.$i.rc")
    if [ "$got" = 125 ] && [ "$(wc -l <"$out.$i.err")" = 1 ] \
      && grep -Eq "no space left on $mnt while unpacking [^ ]+ \(needs [0-9]+ MiB\)" "$out.$i.err"; then
      ok "$what, run $i: exit 125 with 'no space left on $mnt while unpacking ENTRY (needs N MiB)'"
    else
      not_ok "$what, run $i: exit 125 with 'no space left on $mnt while unpacking ENTRY (needs N MiB)'" \
        "exit $got" "$(cat "$out.$i.err")"
    fi
    if ! grep -Eq '^[0-9a-f]{64}|^\.tmp' "$out.$i.ls"; then
      ok "$what, run $i: no tree or manifest published, no temporary tree left"
    else
      not_ok "$what, run $i: no tree or manifest published, no temporary tree left" \
        "$(cat "$out.$i.ls")"
    fi
  done
  if [ "$(cat "$out.3.rc")" = 0 ] && grep -q "hello from the rootfs" "$out.3.out" \
    && grep -Eq "^$sha\$" "$out.3.ls"; then
    ok "$what: with room again, the next run unpacks and succeeds"
  else
    not_ok "$what: with room again, the next run unpacks and succeeds" \
      "exit $(cat "$out.3.rc")" "$(cat "$out.3.err")" "$(cat "$out.3.ls")"
  fi
}

if ! is_root; then
  skip "out of space on a small tmpfs" "n/a: mounting needs root (the root pass runs it)"
  skip "out of space on a loop-mounted ext4" "n/a: mounting needs root (the root pass runs it)"
elif ! command -v unshare >/dev/null; then
  skip "out of space on a small file system" "unshare(1) is not installed"
else
  full_fs tmpfs "8 MiB tmpfs cache"
  if ! command -v mkfs.ext4 >/dev/null; then
    skip "out of space on a loop-mounted ext4" "mkfs.ext4 is not installed (e2fsprogs)"
  else
    full_fs ext4 "full loop-mounted ext4 cache"
  fi
fi

# ---------------------------------------------------------------- read-only trees

cache="$T/cache"
run_in "$cache" first
tree="$cache/$sha"
if [ "$rc" -eq 0 ] && [ -d "$tree" ]; then
  ok "a fresh cache unpacks the tree"
else
  not_ok "a fresh cache unpacks the tree" "exit $rc" "$(cat "$T/first.err")"
fi
bad_modes=$(find "$tree" \( -type f ! -perm 0444 ! -perm 0555 \) -o \( -type d ! -perm 0555 \) \
  -printf '%m %P\n' 2>&1 | head -5)
if [ -d "$tree" ] && [ -z "$bad_modes" ]; then
  ok "the published tree is read-only: files 0444 or 0555, directories 0555"
else
  not_ok "the published tree is read-only: files 0444 or 0555, directories 0555" "$bad_modes"
fi
if [ "$(stat -c %a "$tree/usr/bin/python3.11" 2>&1)" = 555 ] \
  && [ "$(stat -c %a "$tree/usr/lib/python3.11/os.py" 2>&1)" = 444 ]; then
  ok "executables are 0555, other files 0444"
else
  not_ok "executables are 0555, other files 0444" \
    "$(stat -c '%a %n' "$tree/usr/bin/python3.11" "$tree/usr/lib/python3.11/os.py" 2>&1)"
fi
manifest="$cache/$sha.manifest"
if [ "$(stat -c %a "$manifest" 2>&1)" = 444 ] && [ "$(head -1 "$manifest")" = "csrun-manifest 1" ] \
  && grep -q ' usr/lib/python3.11/os.py$' "$manifest"; then
  ok "a read-only manifest lists the tree's entries"
else
  not_ok "a read-only manifest lists the tree's entries" "$(ls -la "$cache" 2>&1)" \
    "$(head -8 "$manifest" 2>&1)"
fi
run_in "$cache" verify-ok
out=$("$CSRUN" cache verify --cache-dir "$cache" 2>&1)
vrc=$?
if [ "$vrc" -eq 0 ] && [ "$out" = "$tree: ok" ]; then
  ok "csrun cache verify: an intact tree is ok (exit 0)"
else
  not_ok "csrun cache verify: an intact tree is ok (exit 0)" "exit $vrc" "$out"
fi

# ---------------------------------------------------------------- a deleted stdlib file

victim="usr/lib/python3.11/encodings/__init__.py"
chmod u+w "$tree/usr/lib/python3.11/encodings"
rm -f "$tree/$victim"
chmod 0555 "$tree/usr/lib/python3.11/encodings"
run_in "$cache" repaired --json
if [ "$rc" -eq 0 ] && [ "$(json_get "$T/repaired.out" 'j["attempts"][-1]["stdout"]')" = \
  "hello from the rootfs" ]; then
  ok "after a stdlib file was deleted, the next run repairs the tree and succeeds"
else
  not_ok "after a stdlib file was deleted, the next run repairs the tree and succeeds" "exit $rc" \
    "$(cat "$T/repaired.err")" "$(head -c 1500 "$T/repaired.out")"
fi
want="csrun run: the cached rootfs $tree was damaged (1 file: first $victim: missing); unpacked it again"
if grep -qxF "$want" "$T/repaired.err"; then
  ok "the run says the tree was damaged and unpacked again"
else
  not_ok "the run says the tree was damaged and unpacked again" "want: $want" \
    "$(cat "$T/repaired.err")"
fi
if [ "$rc" -eq 0 ] && [ "$(json_get "$T/repaired.out" 'j["rootfs_repaired"]["files"]')" = 1 ] \
  && [ "$(json_get "$T/repaired.out" 'j["rootfs_repaired"]["first"]')" = "$victim: missing" ]; then
  ok "the JSON result has rootfs_repaired {files, first}"
else
  not_ok "the JSON result has rootfs_repaired {files, first}" "$(head -c 1500 "$T/repaired.out")"
fi
if [ -f "$tree/$victim" ] && [ "$(stat -c %a "$tree/$victim")" = 444 ]; then
  ok "the deleted file is back, read-only"
else
  not_ok "the deleted file is back, read-only" "$(ls -la "$tree/usr/lib/python3.11/encodings" 2>&1)"
fi
run_in "$cache" after-repair --json
if [ "$rc" -eq 0 ] && ! grep -q rootfs_repaired "$T/after-repair.out" \
  && [ ! -s "$T/after-repair.err" ]; then
  ok "the run after the repair is an ordinary one"
else
  not_ok "the run after the repair is an ordinary one" "exit $rc" "$(cat "$T/after-repair.err")"
fi

# ---------------------------------------------------------------- flipped bytes

flip="usr/lib/python3.11/json/encoder.py"
chmod u+w "$tree/$flip"
printf 'XY' | dd of="$tree/$flip" bs=1 seek=100 conv=notrunc status=none
chmod 0444 "$tree/$flip"
out=$("$CSRUN" cache verify --cache-dir "$cache" --quick 2>&1)
vrc=$?
if [ "$vrc" -eq 0 ]; then
  ok "cache verify --quick (types, modes, sizes) does not read contents"
else
  not_ok "cache verify --quick (types, modes, sizes) does not read contents" "exit $vrc" "$out"
fi
out=$("$CSRUN" cache verify --cache-dir "$cache" 2>&1)
vrc=$?
if [ "$vrc" -eq 1 ] && grep -qF "$tree: damaged: 1 entry: $flip: contents differ" <<<"$out"; then
  ok "cache verify finds flipped bytes (exit 1, names the file)"
else
  not_ok "cache verify finds flipped bytes (exit 1, names the file)" "exit $vrc" "$out"
fi
# A file the tarball never had (here one Python would import at start-up).
extra="usr/lib/python3.11/sitecustomize.py"
chmod u+w "$tree/usr/lib/python3.11"
echo 'print("injected")' >"$tree/$extra"
chmod 0555 "$tree/usr/lib/python3.11"
out=$("$CSRUN" cache verify --cache-dir "$cache" --quick 2>&1)
vrc=$?
if [ "$vrc" -eq 1 ] && grep -qF "$extra: not in the manifest" <<<"$out"; then
  ok "cache verify finds a file added to the tree"
else
  not_ok "cache verify finds a file added to the tree" "exit $vrc" "$out"
fi
out=$("$CSRUN" cache verify --cache-dir "$cache" --repair 2>&1)
vrc=$?
if [ "$vrc" -eq 1 ] && grep -qF "repaired: unpacked again from $(realpath "$CSRUN_TEST_ROOTFS")" <<<"$out"; then
  ok "cache verify --repair unpacks it again from the recorded tarball"
else
  not_ok "cache verify --repair unpacks it again from the recorded tarball" "exit $vrc" "$out"
fi
out=$("$CSRUN" cache verify --cache-dir "$cache" --json 2>&1)
vrc=$?
if [ "$vrc" -eq 0 ] && [ "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["trees"][0]["status"])' "$out")" = ok ] \
  && [ -z "$(temps "$cache")" ] && [ ! -e "$tree/$extra" ]; then
  ok "after --repair the tree verifies ok (--json), nothing left over"
else
  not_ok "after --repair the tree verifies ok (--json), nothing left over" "exit $vrc" "$out" \
    "$(ls -A "$cache")"
fi

# ---------------------------------------------------------------- the tarball is gone

cache2="$T/cache2"
copy="$T/copy.tar.zst"
cp "$CSRUN_TEST_ROOTFS" "$copy"
"$CSRUN" run --rootfs "$copy" --cache-dir "$cache2" "$snippet" >/dev/null 2>"$T/copy.err" </dev/null
crc=$?
chmod u+w "$cache2/$sha/usr/lib/python3.11/json"
rm -f "$cache2/$sha/usr/lib/python3.11/json/decoder.py"
rm -f "$copy"
out=$("$CSRUN" cache verify --cache-dir "$cache2" --repair 2>&1)
vrc=$?
if [ "$crc" -eq 0 ] && [ "$vrc" -eq 1 ] && grep -qF "removed: its tarball $copy is gone" <<<"$out" \
  && [ -z "$(trees "$cache2")" ] && [ ! -e "$cache2/$sha.manifest" ]; then
  ok "cache verify --repair removes a damaged tree whose tarball is gone"
else
  not_ok "cache verify --repair removes a damaged tree whose tarball is gone" "exit $crc/$vrc" \
    "$out" "$(cat "$T/copy.err")" "$(ls -A "$cache2")"
fi
run_in "$cache2" afresh
if [ "$rc" -eq 0 ] && [ "$(trees "$cache2")" = "$sha" ]; then
  ok "the next run unpacks that tree afresh"
else
  not_ok "the next run unpacks that tree afresh" "exit $rc" "$(cat "$T/afresh.err")"
fi
out=$("$CSRUN" cache verify --cache-dir "$cache2" --rootfs "$CSRUN_TEST_ROOTFS" 2>&1)
vrc=$?
if [ "$vrc" -eq 0 ] && [ "$out" = "$cache2/$sha: ok" ]; then
  ok "cache verify --rootfs TARBALL checks that tarball's tree"
else
  not_ok "cache verify --rootfs TARBALL checks that tarball's tree" "exit $vrc" "$out"
fi

# cache verify follows the cache trust rule: a cache others may write is refused.
loose=$T/loose-cache
mkdir -p "$loose" && chmod 0777 "$loose"
out=$("$CSRUN" cache verify --cache-dir "$loose" 2>&1)
vrc=$?
chmod 0700 "$loose"
if [ "$vrc" -eq 125 ] && [[ $out == *refused* ]]; then
  ok "cache verify refuses a cache directory others can write (exit 125)"
else
  not_ok "cache verify refuses a cache directory others can write (exit 125)" "exit $vrc" "$out"
fi

# ---------------------------------------------------------------- usage

"$CSRUN" cache >/dev/null 2>&1
a=$?
"$CSRUN" cache verify --no-such-option >/dev/null 2>&1
b=$?
"$CSRUN" cache frobnicate >/dev/null 2>&1
c=$?
if [ "$a" = 2 ] && [ "$b" = 2 ] && [ "$c" = 2 ]; then
  ok "csrun cache usage errors exit 2"
else
  not_ok "csrun cache usage errors exit 2" "no action: $a, bad option: $b, bad action: $c"
fi

# ---------------------------------------------------------------- cache ls / prune
P=$T/lsprune
run_in "$P" lsrun
out=$("$CSRUN" cache ls --cache-dir "$P" --json)
rc=$?
got=$(printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin)
kinds=sorted(e["kind"] for e in j["entries"])
t=[e for e in j["entries"] if e["kind"]=="rootfs"][0]
print(kinds, t["name"]==sys.argv[1], t["bytes"] > 1000000, t["in_use"], j["total_bytes"] >= t["bytes"], all(e["last_use_epoch"] > 0 and e["path"].startswith(j["cache_dir"]) for e in j["entries"]))' "$sha" 2>&1)
if [ "$rc" = 0 ] && [ "$got" = "['gate', 'rootfs', 'seccomp'] True True False True True" ]; then
  ok "cache ls --json: the tree, the compiled gate and the seccomp program, with size and last use"
else
  not_ok "cache ls --json" "exit $rc" "$got" "$out"
fi
out=$("$CSRUN" cache ls --cache-dir "$P")
if [ "$(grep -c '^rootfs \|^gate \|^seccomp ' <<<"$out")" = 3 ] && grep -q "3 entries" <<<"$out"; then
  ok "cache ls: one line per entry and a total"
else
  not_ok "cache ls: one line per entry and a total" "$out"
fi
out=$("$CSRUN" cache ls --cache-dir "$T/no-such-cache" --json)
rc=$?
if [ "$rc" = 0 ] && [ "$(json_get <(printf '%s' "$out") 'j["entries"]')" = "[]" ] && [ ! -e "$T/no-such-cache" ]; then
  ok "cache ls of a missing cache: empty, and nothing is created"
else
  not_ok "cache ls of a missing cache" "exit $rc" "$out"
fi

# A tree a running csrun uses is kept; the compiled files go.
printf 'import time\ntime.sleep(4)\nprint("slept")\n' >"$T/sleeper.py"
"$CSRUN" run --rootfs "$CSRUN_TEST_ROOTFS" --cache-dir "$P" "$T/sleeper.py" >"$T/sleeper.out" 2>"$T/sleeper.err" </dev/null &
sleeper=$!
busy=
for _ in $(seq 1 100); do
  if [ "$("$CSRUN" cache ls --cache-dir "$P" --json | python3 -c 'import json,sys; print(any(e.get("in_use") for e in json.load(sys.stdin)["entries"]))')" = True ]; then
    busy=1
    break
  fi
  sleep 0.1
done
out=$("$CSRUN" cache prune --cache-dir "$P" --json)
rc=$?
wait "$sleeper"
src=$?
got=$(printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin)
print(sorted((e["kind"], e["removed"], e.get("kept")) for e in j["entries"]))' 2>&1)
if [ -n "$busy" ] && [ "$rc" = 0 ] && [ "$src" = 0 ] && [ "$(cat "$T/sleeper.out")" = slept ] &&
  [ "$got" = "[('gate', True, None), ('rootfs', False, 'in use by a running csrun'), ('seccomp', True, None)]" ] &&
  [ "$(trees "$P")" = "$sha" ]; then
  ok "cache prune keeps the tree a running csrun uses (and the run goes on), removes the rest"
else
  not_ok "cache prune keeps a tree in use" "busy '$busy', prune exit $rc, run exit $src: $(cat "$T/sleeper.out")" "$got" "$out"
fi
out=$("$CSRUN" cache prune --cache-dir "$P")
rc=$?
left=$(find "$P" -mindepth 1 -maxdepth 2 ! -name .lock ! -name .empty ! -name by-stat ! -name gate ! -name seccomp ! -name 'limits-warned.*' -printf '%P\n' | sort)
if [ "$rc" = 0 ] && [ -z "$left" ] && grep -q "^removed rootfs" <<<"$out" && grep -q "removed 1 of 1 entry" <<<"$out"; then
  ok "cache prune: the tree goes with its manifest, use lock and by-stat links"
else
  not_ok "cache prune removes the tree" "exit $rc" "$out" "left: $left"
fi
run_in "$P" afterprune --json
if [ "$rc" = 0 ] && [ "$(json_get "$T/afterprune.out" '(j["rootfs"]["unpacked"], j["attempts"][0]["stdout"])')" = "(True, 'hello from the rootfs\n')" ]; then
  ok "the next run after a prune unpacks the tree again"
else
  not_ok "the next run after a prune unpacks again" "exit $rc" "$(cat "$T/afterprune.out" "$T/afterprune.err")"
fi

# --older-than: only what has not been used for that long.
touch -h -d '10 days ago' "$P/$sha" "$P/$sha.use" "$P"/gate/*.bin
"$CSRUN" cache prune --cache-dir "$P" --older-than 7d --json >"$T/older.json"
rc=$?
got=$(json_get "$T/older.json" 'sorted((e["kind"], e["removed"], e.get("kept")) for e in j["entries"])' 2>&1)
if [ "$rc" = 0 ] && [ "$got" = "[('gate', True, None), ('rootfs', True, None), ('seccomp', False, 'used recently')]" ]; then
  ok "cache prune --older-than 7d: removes what was last used 10 days ago, keeps the rest"
else
  not_ok "cache prune --older-than 7d" "exit $rc" "$got" "$(cat "$T/older.json")"
fi
run_in "$P" afterolder
touch -h -d '2 days ago' "$P/$sha" "$P/$sha.use"
"$CSRUN" cache prune --cache-dir "$P" --older-than 3d --json >"$T/older3.json"
got=$(json_get "$T/older3.json" '[e["removed"] for e in j["entries"] if e["kind"] == "rootfs"]' 2>&1)
[ "$got" = "[False]" ] && ok "cache prune --older-than 3d keeps a tree used 2 days ago" ||
  not_ok "cache prune --older-than 3d keeps a tree used 2 days ago" "$got" "$(cat "$T/older3.json")"

# Never through a symlink, never what csrun did not make.
mkdir -p "$T/victim/$sha"
echo precious >"$T/victim/$sha/file"
echo precious >"$T/victim/file.bin"
fake=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
ln -s "$T/victim/$sha" "$P/$fake"
ln -s "$T/victim/file.bin" "$P/gate/link.bin"
mkdir "$P/notatree" && echo x >"$P/notatree/f"
"$CSRUN" cache prune --cache-dir "$P" --json >"$T/sym.json"
rc=$?
names=$(json_get "$T/sym.json" '[e["name"] for e in j["entries"]]' 2>&1)
if [ "$rc" = 0 ] && [ "$(cat "$T/victim/$sha/file" "$T/victim/file.bin")" = "precious
precious" ] && [ -L "$P/$fake" ] && [ -L "$P/gate/link.bin" ] && [ -e "$P/notatree/f" ] &&
  [[ $names != *"$fake"* && $names != *link.bin* && $names != *notatree* ]]; then
  ok "cache prune follows no symlink and leaves alone what csrun did not make"
else
  not_ok "cache prune follows no symlink" "exit $rc" "$names" "$(ls -la "$P" "$T/victim")"
fi
rm -f "$P/$fake" "$P/gate/link.bin"

# The cache directory is trust-checked; usage errors are exit 2.
mkdir -p "$T/open-cache" && chmod 0777 "$T/open-cache"
"$CSRUN" cache ls --cache-dir "$T/open-cache" >/dev/null 2>"$T/open.err"
rc=$?
[ "$rc" = 125 ] && [ "$(wc -l <"$T/open.err")" = 1 ] && ok "cache ls refuses a cache directory others can write (exit 125)" ||
  not_ok "cache ls refuses an untrusted cache directory" "exit $rc" "$(cat "$T/open.err")"
for bad in "prune --older-than banana" "ls --older-than 7d" "prune --repair" "frobnicate"; do
  # shellcheck disable=SC2086
  "$CSRUN" cache $bad --cache-dir "$P" >/dev/null 2>"$T/bad.err"
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && ok "csrun cache $bad: exit 2, one line" ||
    not_ok "csrun cache $bad: exit 2, one line" "exit $rc" "$(cat "$T/bad.err")"
done

done_testing
