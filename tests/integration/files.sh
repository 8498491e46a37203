#!/bin/bash
# Files in and out of `csrun run`: --in (a snapshot, a fresh copy per attempt), --mount (ro by
# default), --out (the final attempt's /work, never through a symlink, capped), and what the JSON
# says about them.  Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
sha () { sha256sum "$1" | cut -d' ' -f1; }

# expect_usage DESC PATTERN CMD...: exit 2 and one line on stderr matching PATTERN.
expect_usage () {
  local desc=$1 pattern=$2
  shift 2
  "$@" >"$T/u.out" 2>"$T/u.err" </dev/null
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(grep -c . "$T/u.err")" -eq 1 ] && grep -qE -- "$pattern" "$T/u.err"; then
    ok "$desc (exit 2)"
  else
    not_ok "$desc" "want exit 2 and one line matching '$pattern'" "got exit $rc" "$(cat "$T/u.err")"
  fi
}

# ---------------------------------------------------------------- a CSV in, a result out
printf 'name,qty\napple,3\npear,4\nfig,5\n' > "$T/data.csv"
cat > "$T/sum.py" <<'EOF'
import csv, hashlib
rows = list(csv.DictReader(open("/work/data.csv", newline="")))
total = sum(int(r["qty"]) for r in rows)
with open("/work/result.txt", "w") as f:
    f.write("total=%d\n" % total)
print(hashlib.sha256(open("/work/data.csv", "rb").read()).hexdigest())
EOF
csrun run --json --in "$T/data.csv" --out "$T/o1" "$T/sum.py" > "$T/sum.json" 2> "$T/sum.err"
rc=$?
got=$(json_get "$T/sum.json" '(j["status"], j["attempts"][0]["stdout"].strip(), [(i["dest"], i["size"]) for i in j["inputs"]], [(o["path"], o["size"], o["sha256"]) for o in j["outputs"]], j["outputs_skipped"])' 2>&1)
want="('ok', '$(sha "$T/data.csv")', [('/work/data.csv', $(stat -c %s "$T/data.csv"))], [('result.txt', 9, '$(sha "$T/o1/result.txt" 2>/dev/null)')], [])"
[ $rc = 0 ] && [ "$got" = "$want" ] && [ "$(cat "$T/o1/result.txt")" = "total=12" ] \
  && [ ! -e "$T/o1/data.csv" ] && [ ! -e "$T/o1/snippet.py" ] \
  && ok "a CSV in (--in), a result out (--out): same bytes inside, sha256 in the JSON as sha256sum's, inputs not sent back" \
  || not_ok "csv in, result out" "exit $rc" "got:  $got" "want: $want" "$(cat "$T/sum.err")" "$(ls -la "$T/o1" 2>&1)"

# ---------------------------------------------------------------- a directory both ways, binary data
mkdir -p "$T/tree/sub/deeper"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 64 + b"\0\0end")' > "$T/tree/sub/blob.bin"
echo hello > "$T/tree/sub/deeper/h.txt"
ln -s sub/deeper/h.txt "$T/tree/rel-link"
cat > "$T/tree.py" <<'EOF'
import hashlib, os, shutil
b = open("/tmp/in/sub/blob.bin", "rb").read()
print(len(b), b.count(0), hashlib.sha256(b).hexdigest())
print(os.path.islink("/tmp/in/rel-link"), os.readlink("/tmp/in/rel-link"))
shutil.copytree("/tmp/in", "/work/copy", symlinks=True)
with open("/work/copy/sub/new.bin", "wb") as f:
    f.write(b[::-1])
os.makedirs("/work/copy/empty")
EOF
csrun run --json --in "$T/tree:/tmp/in" --out "$T/o2" "$T/tree.py" > "$T/tree.json" 2> "$T/tree.err"
rc=$?
got=$(json_get "$T/tree.json" '(j["status"], j["attempts"][0]["stdout"], sorted(o["path"] for o in j["outputs"]), j["outputs_skipped"])' 2>&1)
want="('ok', '16389 66 $(sha "$T/tree/sub/blob.bin")\\nTrue sub/deeper/h.txt\\n', ['copy/sub/blob.bin', 'copy/sub/deeper/h.txt', 'copy/sub/new.bin'], [{'path': 'copy/rel-link', 'reason': 'symbolic link (not followed)'}])"
[ $rc = 0 ] && [ "$got" = "$want" ] && cmp -s "$T/tree/sub/blob.bin" "$T/o2/copy/sub/blob.bin" \
  && [ "$(sha "$T/o2/copy/sub/new.bin")" = "$(json_get "$T/tree.json" '[o["sha256"] for o in j["outputs"] if o["path"] == "copy/sub/new.bin"][0]')" ] \
  && [ -d "$T/o2/copy/empty" ] && [ ! -e "$T/o2/copy/rel-link" ] \
  && ok "a directory in and out: binary data with NULs intact, symlinks kept inside and not copied out, an empty directory made" \
  || not_ok "directory both ways" "exit $rc" "got:  $got" "want: $want" "$(cat "$T/tree.err")"

# ---------------------------------------------------------------- escapes attempted from inside
mkdir -p "$T/o3" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/o3/planted"      # a symlink already in DIR
cat > "$T/escape.py" <<EOF
import os
os.symlink("/etc/shadow", "/work/shadow")
os.symlink("$T/o3", "/work/to-dir")
os.symlink("$T/elsewhere", "/work/to-elsewhere")
os.makedirs("/work/planted")
open("/work/planted/x.txt", "w").write("through the planted link?")
try:
    os.link("/usr/bin/python3", "/work/hard")
    print("hardlink made")
except OSError as e:
    print("hardlink refused", e.errno)
open("/work/a.txt", "w").write("a")
os.link("/work/a.txt", "/work/b.txt")
os.mkfifo("/work/fifo")
os.chmod("/work/a.txt", 0o6755)
EOF
touch "$T/before-escape"
sleep 0.01
csrun run --json --out "$T/o3" "$T/escape.py" > "$T/esc.json" 2> "$T/esc.err"
rc=$?
got=$(json_get "$T/esc.json" '(j["status"], j["attempts"][0]["stdout"], sorted(o["path"] for o in j["outputs"]), sorted((s["path"], s["reason"].split(":")[0].split(" (")[0]) for s in j["outputs_skipped"]))' 2>&1)
want="('ok', 'hardlink refused 18\\n', ['a.txt', 'b.txt'], [('fifo', 'not a regular file or directory'), ('planted/x.txt', \"can't be written below DIR\"), ('shadow', 'symbolic link'), ('to-dir', 'symbolic link'), ('to-elsewhere', 'symbolic link')])"
mode=$(stat -c %a "$T/o3/a.txt" 2>/dev/null)
links=$(stat -c %h "$T/o3/a.txt" "$T/o3/b.txt" 2>/dev/null | tr '\n' ' ')
[ $rc = 0 ] && [ "$got" = "$want" ] && [ -z "$(ls -A "$T/elsewhere")" ] && [ -L "$T/o3/planted" ] \
  && [ ! -e "$T/o3/shadow" ] && [ ! -e "$T/o3/to-dir" ] && [ $((0$mode & 07000)) = 0 ] && [ "$links" = "1 1 " ] \
  && ok "escapes refused: symlinks to /etc/shadow and to DIR skipped, a symlink planted in DIR not followed, no hardlink out (EXDEV), hardlinks in /work become two files, no set-id bits, no fifo" \
  || not_ok "escapes" "exit $rc" "got:  $got" "want: $want" "mode $mode links $links" "elsewhere: $(ls -A "$T/elsewhere")" "$(cat "$T/esc.err")"
files=$(cd "$T" && find . -mindepth 1 -newer "$T/before-escape" ! -path './o3*' ! -name 'esc.*' | sort | tr '\n' ' ')
[ -z "$files" ] && ok "nothing written outside DIR" || not_ok "outside DIR" "$files"

# ---------------------------------------------------------------- size caps
head -c 300000 /dev/urandom > "$T/big.bin"
expect_usage "--in over --in-max names the input" "--in .*big.bin: the inputs are larger than --in-max" \
  csrun run --in "$T/big.bin" --in-max 100k "$T/sum.py"
expect_usage "--in larger than the /work tmpfs" "do not fit in the jail's /work tmpfs" \
  csrun run --in "$T/big.bin" --tmp-size 128k "$T/sum.py"
cat > "$T/many.py" <<'EOF'
for i in range(4):
    open("/work/f%d.bin" % i, "wb").write(b"x" * 40000)
EOF
csrun run --json --out "$T/o4" --out-max 100k "$T/many.py" > "$T/many.json" 2> "$T/many.err"
rc=$?
got=$(json_get "$T/many.json" '(j["status"], len(j["outputs"]), sum(o["size"] for o in j["outputs"]), [s["reason"] for s in j["outputs_skipped"]])' 2>&1)
[ $rc = 0 ] && [ "$got" = "('ok', 2, 80000, ['over the --out-max size cap (40000 bytes)', 'over the --out-max size cap (40000 bytes)'])" ] \
  && [ "$(ls "$T/o4" | wc -l)" = 2 ] && grep -q "over --out-max" "$T/many.err" \
  && ok "--out-max: what does not fit is listed as skipped, with a warning" \
  || not_ok "--out-max" "exit $rc" "$got" "$(cat "$T/many.err")"

# ---------------------------------------------------------------- --out-path
cat > "$T/globs.py" <<'EOF'
import os
os.makedirs("/work/res/sub")
for p in ("a.csv", "b.txt", "res/sub/c.txt", "scratch.tmp"):
    open("/work/" + p, "w").write(p)
EOF
csrun run --json --out "$T/o5" --out-path '*.csv' --out-path res "$T/globs.py" > "$T/globs.json" 2>&1
got=$(json_get "$T/globs.json" 'sorted(o["path"] for o in j["outputs"])' 2>&1)
[ "$got" = "['a.csv', 'res/sub/c.txt']" ] && [ ! -e "$T/o5/b.txt" ] \
  && ok "--out-path GLOB selects what is copied out (a directory brings its contents)" || not_ok "--out-path" "$got"

# ---------------------------------------------------------------- --mount
mkdir -p "$T/m"
echo "host data" > "$T/m/data.txt"
chmod 777 "$T/m"   # as root the jail's uid 0 is the host's nobody: it may write here too
cat > "$T/mnt.py" <<'EOF'
print(open("/work/m/data.txt").read().strip())
try:
    open("/work/m/written.txt", "w").write("from the jail\n")
    print("written")
except OSError as e:
    print("refused", e.errno)
EOF
out=$(csrun run --quiet --mount "$T/m:/work/m" "$T/mnt.py" 2>&1)
[ "$out" = "$(printf 'host data\nrefused 30')" ] && [ ! -e "$T/m/written.txt" ] \
  && ok "--mount is read-only by default: a write is refused inside (EROFS)" || not_ok "--mount ro" "$out"
out=$(csrun run --quiet --mount "$T/m:/work/m:rw" --out "$T/o6" "$T/mnt.py" 2>&1)
[ "$out" = "$(printf 'host data\nwritten')" ] && [ "$(cat "$T/m/written.txt" 2>/dev/null)" = "from the jail" ] \
  && [ -z "$(ls -A "$T/o6")" ] \
  && ok "--mount ...:rw: the write is visible on the host; the mount is not copied by --out" \
  || not_ok "--mount rw" "$out" "$(ls -la "$T/m" "$T/o6" 2>&1)"
expect_usage "--mount on /usr is refused" "DST must be /data, /mnt" csrun run --mount "$T/m:/usr" "$T/mnt.py"
expect_usage "--mount on /proc is refused" "DST must be" csrun run --mount "$T/m:/proc/x" "$T/mnt.py"
expect_usage "--mount with '..' is refused" "DST must be" csrun run --mount "$T/m:/work/../usr" "$T/mnt.py"
expect_usage "--mount of a missing SRC" "--mount $T/nope: No such file" csrun run --mount "$T/nope:/work/x" "$T/mnt.py"
expect_usage "--in DEST inside a --mount DST" "overlaps --mount" \
  csrun run --mount "$T/m:/work/m" --in "$T/data.csv:/work/m/x.csv" "$T/mnt.py"
expect_usage "--in DEST outside /work and /tmp" "DEST must be an absolute path below /work or /tmp" \
  csrun run --in "$T/data.csv:/etc/passwd" "$T/mnt.py"

# ---------------------------------------------------------------- the packs never reach the snippet
cat > "$T/fds.py" <<'EOF'
import os
links = []
for f in os.listdir("/proc/self/fd"):
    try:
        links.append(os.readlink("/proc/self/fd/" + f))
    except OSError:
        pass
print(sorted(set(l.split(":")[0] for l in links)))
EOF
# (stdin from /dev/null: csrun's own stdin would reach the snippet as a pipe)
out=$(csrun run --quiet --in "$T/data.csv" --out "$T/o8" "$T/fds.py" 2>&1 </dev/null)
[ "$out" = "['/dev/null', 'pipe']" ] && ok "the inputs' and outputs' memory files are not among the snippet's fds" \
  || not_ok "fds" "$out"

# ---------------------------------------------------------------- refused inputs and DIRs
mkdir -p "$T/withfifo"
mkfifo "$T/withfifo/pipe"
expect_usage "a fifo inside an --in directory" "withfifo/pipe is not a regular file, directory or symlink" \
  csrun run --in "$T/withfifo" "$T/sum.py"
expect_usage "--in of a missing path" "--in $T/nope: No such file" csrun run --in "$T/nope" "$T/sum.py"
expect_usage "--out whose parent does not exist" "its parent directory .* does not exist" \
  csrun run --out "$T/no/such/dir" "$T/sum.py"
expect_usage "--out naming a file" "not a directory" csrun run --out "$T/data.csv" "$T/sum.py"
expect_usage "--out-path without --out" "--out-path needs --out" csrun run --out-path '*' "$T/sum.py"

# ---------------------------------------------------------------- --mount on /mnt and /data
# The builder's rootfs has empty /mnt and /data.
cat > "$T/mnt2.py" <<'EOF'
import os
print(sorted(os.listdir("/mnt")), open("/mnt/in/data.txt").read().strip(), sorted(os.listdir("/data")))
for p in ("/mnt/x", "/mnt/in/y", "/data/z"):
    try:
        open(p, "w")
        print("wrote", p)
    except OSError as e:
        print("refused", p, e.errno)
EOF
out=$(csrun run --quiet --mount "$T/m:/mnt/in" --mount "$T/tree:/data" "$T/mnt2.py" 2>&1)
want="['in'] host data ['rel-link', 'sub']
refused /mnt/x 30
refused /mnt/in/y 30
refused /data/z 30"
[ "$out" = "$want" ] \
  && ok "--mount below /mnt: a read-only tmpfs holding only the mount point; --mount on /data itself" \
  || not_ok "--mount /mnt /data" "$out"
# A rootfs without /mnt (a directory tree: a copy of the cached one, less /mnt).
tree=$(json_get "$T/sum.json" 'j["rootfs"]["dir"]')
R=$(tmpdir)
if cp -a "$tree" "$R/root" && chmod -R u+w "$R/root" && rmdir "$R/root/mnt"; then
  expect_usage "--mount below /mnt with a rootfs that has no /mnt" "this rootfs has no /mnt directory" \
    csrun run --rootfs "$R/root" --mount "$T/m:/mnt/in" "$T/mnt.py"
else
  not_ok "--mount below /mnt without /mnt" "could not copy the rootfs $tree without /mnt"
fi

# ---------------------------------------------------------------- --user: inputs owned by the jail's user
cat > "$T/owner.py" <<'EOF'
import os
st = [os.stat(p) for p in ("/work/tree", "/work/tree/sub/blob.bin")]
print(os.getuid(), [(s.st_uid, s.st_gid) for s in st])
open("/work/mine.txt", "w").write("by uid %d" % os.getuid())
EOF
printf 'pass\n' > "$T/ok-user.py"
if csrun run --quiet --user 1000:1000 "$T/ok-user.py" > /dev/null 2>&1; then
  out=$(csrun run --quiet --user 1000:1000 --in "$T/tree" --out "$T/o9" "$T/owner.py" 2>&1)
  [ "$out" = "1000 [(1000, 1000), (1000, 1000)]" ] && [ "$(cat "$T/o9/mine.txt" 2>/dev/null)" = "by uid 1000" ] \
    && [ "$(stat -c %u "$T/o9/mine.txt")" = "$(id -u)" ] \
    && ok "--user: the inputs are owned by the jail's user; --out files by the invoking user" \
    || not_ok "--user ownership" "$out" "$(ls -ln "$T/o9" 2>&1)"
else
  skip "--user: the inputs are owned by the jail's user" "n/a: no subordinate ids for $(id -un) here"
fi

# ---------------------------------------------------------------- healing: fresh inputs, final files
echo "original" > "$T/in.txt"
cat > "$T/heal.py" <<'EOF'
seen = open("/work/in.txt").read().strip()
open("/work/in.txt", "w").write("changed by this attempt\n")
open("/work/seen-%d.txt" % len(open("/work/snippet.py").read()), "w").write(seen)
print("Result: " + 42)
EOF
csrun run --json --in "$T/in.txt" --out "$T/o7" "$T/heal.py" > "$T/heal.json" 2> "$T/heal.err"
rc=$?
final_len=$(json_get "$T/heal.json" 'len(j["final_code"].encode())' 2>/dev/null)
got=$(json_get "$T/heal.json" '(j["status"], len(j["attempts"]), sorted(o["path"] for o in j["outputs"]))' 2>&1)
[ $rc = 0 ] && [ "$got" = "('healed', 2, ['in.txt', 'seen-$final_len.txt'])" ] \
  && [ "$(cat "$T/o7/seen-$final_len.txt")" = "original" ] && [ "$(cat "$T/in.txt")" = "original" ] \
  && ok "a healed run: the second attempt sees the original input again, only the final attempt's files are delivered" \
  || not_ok "healed run" "exit $rc" "$got (final code length $final_len)" "$(ls "$T/o7" 2>&1)" "$(cat "$T/heal.err")"

# ---------------------------------------------------------------- an existing file is replaced
echo "old" > "$T/o1/result.txt"
csrun run --quiet --in "$T/data.csv" --out "$T/o1" "$T/sum.py" > /dev/null 2>&1
[ "$(cat "$T/o1/result.txt")" = "total=12" ] && [ -z "$(ls -A "$T/o1" | grep -v '^result.txt$')" ] \
  && ok "a file already in DIR is replaced (no temporary file left)" || not_ok "replace" "$(ls -A "$T/o1")"

# ---------------------------------------------------------------- a full DIR (root: a private tmpfs)
if is_root && command -v unshare > /dev/null; then
  mkdir -p "$T/small"
  cat > "$T/fill.py" <<'EOF'
open("/work/big.bin", "wb").write(b"y" * 300000)
EOF
  unshare -m sh -c 'mount -t tmpfs -o size=128k tmpfs "$1" && "$2" run --out "$1/out" "$3"; echo "rc=$?"; ls -A "$1/out" > "$4"' \
    sh "$T/small" "$CSRUN" "$T/fill.py" "$T/full.ls" > "$T/full.out" 2>&1
  grep -q "rc=125" "$T/full.out" && grep -q "write big.bin.*No space left on device" "$T/full.out" \
    && [ -e "$T/full.ls" ] && [ ! -s "$T/full.ls" ] \
    && ok "a full DIR: a clear error (exit 125), no partial file under its final name" \
    || not_ok "full DIR" "$(cat "$T/full.out")"
else
  skip "a full DIR" "n/a: needs root for a private tmpfs"
fi

done_testing
