#!/bin/bash
# csrun sandbox checkpoint / restore (csrun-sandbox(1) CHECKPOINTS): a round trip of a layer with
# binary files, symlinks, a hard link, a FIFO, an extended attribute, modes and owners, a deleted
# file of the rootfs (a whiteout) and a replaced directory (opaque), compared entry by entry; a
# stopped sandbox; a running one kept still (freezer or SIGSTOP), then stopped or left running;
# the hooks; --ttl expiry and collection; damaged, truncated and forged checkpoints refused with
# nothing left; another rootfs refused; --name clash; checkpoint ls/rm; out of space; the
# sessions' picklable globals (saved, listed, restored into sessions of the same names; busy,
# slow, stubborn and dying sessions; --leave-running; forged sessions/ members; a forged save's
# code runs only inside); --idle-action checkpoint.  Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"

n_sbx () { ls "$SBX" 2>/dev/null | grep -c '^[0-9a-f]\{32\}$'; }
n_ck () { ls -A "$CK" 2>/dev/null | grep -c .; }
status_of () {
  csrun sandbox ls --json 2>/dev/null | python3 -c 'import json,sys; print({s["id"]: s["status"] for s in json.load(sys.stdin)}.get(sys.argv[1], "gone"))' "$1" 2>&1
}
inpy () { local id=$1; shift; csrun sandbox exec "$id" -- python3 -c "$@" 2>&1; }

# The layer as the host sees it, one line per entry: type, mode, owner, size, mtime, symlink
# target, device numbers, extended attributes, contents (what is readable), hard-link groups.
cat > "$T/dump.py" <<'EOF'
import hashlib, os, stat, sys
top = sys.argv[1]
inodes, out = {}, []
for root, dirs, files in os.walk(top):
    names = sorted(dirs + files) + (["."] if root == top else [])
    for name in names:
        p = os.path.normpath(os.path.join(root, name))
        rel = os.path.relpath(p, top)
        st = os.lstat(p)
        link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
        dev = "%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISCHR(st.st_mode) else ""
        x = ""
        if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
            x = ";".join("%s=%r" % (k, os.getxattr(p, k, follow_symlinks=False))
                         for k in sorted(os.listxattr(p, follow_symlinks=False)))
        h = ""
        if stat.S_ISREG(st.st_mode):
            try:
                h = hashlib.sha256(open(p, "rb").read()).hexdigest()[:16]
            except PermissionError:
                h = "unreadable"
            if st.st_nlink > 1:
                inodes.setdefault(st.st_ino, []).append(rel)
        size = 0 if stat.S_ISDIR(st.st_mode) else st.st_size
        out.append("|".join([rel, oct(stat.S_IFMT(st.st_mode)), oct(stat.S_IMODE(st.st_mode)),
                             str(st.st_uid), str(st.st_gid), str(size),
                             str(st.st_mtime_ns // 1000000000), link, dev, x, h]))
for group in sorted(sorted(v) for v in inodes.values()):
    out.append("hardlinks:" + ",".join(group))
print("\n".join(sorted(out)))
EOF
dump () { python3 "$T/dump.py" "$SBX/$1/upper" 2>&1; }

Z=/usr/share/zoneinfo
W=$Z/Canada/w

# ---------------------------------------------------------------- the round trip
src=$(csrun sandbox create --name src --idle-timeout 0 --workdir "$W" --memory 1G --pids 100 \
  --env GREETING=hi 2>"$T/c.err")
[ ${#src} = 32 ] || not_ok "create the source sandbox" "$(cat "$T/c.err")"
# A directory of the rootfs replaced (its files and itself deleted, made again: opaque) and a file
# of the rootfs deleted (a whiteout), from / (the working directory is in the replaced one).
out1=$(csrun sandbox exec src --workdir / -- python3 -c "
import os
C = '$Z/Canada'
os.rmdir(C + '/w')
for n in os.listdir(C):
    os.remove(os.path.join(C, n))
os.rmdir(C)
os.mkdir(C)
os.mkdir(C + '/w')
open(C + '/new.txt', 'w').write('new')
os.remove('$Z/UTC')
print(sorted(os.listdir(C)), os.path.exists('$Z/UTC'))" 2>&1)
cat > "$T/fill.py" <<'EOF'
import os
open("bin", "wb").write(bytes(range(256)) * 4000 + os.urandom(100000))
open("text.txt", "w").write("hello\n")
os.makedirs("d/e/f")
open("d/e/f/deep", "w").write("deep")
os.symlink("text.txt", "rel-link")
os.symlink("/etc/hostname-nope", "dangling")
os.symlink("/usr/share/zoneinfo", "abs-link")
os.link("bin", "hard")
os.mkfifo("fifo")
open("x.txt", "w").write("x")
os.setxattr("x.txt", "user.csrun-test", b"\x00\x01value")
for n, m in (("m640", 0o640), ("m400", 0o400), ("m000", 0o000), ("m4755", 0o4755)):
    open(n, "w").write(n)
    os.chmod(n, m)
os.chmod("d/e", 0o700)
os.utime("text.txt", (1000000000, 1000000000))
with open("sparse", "wb") as f:
    f.seek(32 << 20)
    f.write(b"middle")
    f.truncate(64 << 20)
EOF
out2=$(inpy src "$(cat "$T/fill.py")")
[ "$out1" = "['new.txt', 'w'] False" ] && [ -z "$out2" ] \
  && ok "the source sandbox: files, links, modes, an xattr, a whiteout, an opaque directory" \
  || not_ok "fill the source sandbox" "$out1" "$out2"
[ -c "$SBX/$src/upper$Z/UTC" ] && [ "$(stat -c %t,%T "$SBX/$src/upper$Z/UTC")" = 0,0 ] \
  && python3 -c 'import os,sys; sys.exit(os.getxattr(sys.argv[1], "user.overlay.opaque") != b"y")' "$SBX/$src/upper$Z/Canada" \
  && ok "overlayfs keeps them as a 0/0 character device and a user.overlay.opaque directory" \
  || not_ok "whiteout/opaque in upper/" "$(ls -la "$SBX/$src/upper$Z" 2>&1)"
before=$(dump "$src")

csrun sandbox checkpoint src --json > "$T/ck1.json" 2>"$T/ck1.err"
rc=$?
ck1=$(jget "$T/ck1.json" 'j["id"]')
got=$(jget "$T/ck1.json" '(j["sandbox"]["id"] == "'"$src"'", j["sandbox"]["name"], j["stopped"], j["layer"]["whiteouts"], j["layer"]["opaque_dirs"], j["layer"]["hardlinks"], j["layer"]["fifos"], j["layer"]["symlinks"], j["layer"]["sparse_files"], j["expires"], j["trigger"], 0 < j["archive"]["bytes"] < 1 << 20, len(j["archive"]["sha256"]), j["not_saved_total"])')
[ $rc = 0 ] && [ ${#ck1} = 32 ] && [ "$got" = "(True, 'src', True, 1, 1, 1, 1, 3, 1, 0, 'command', True, 64, 0)" ] \
  && ok "checkpoint --json: id, sandbox, counts (a whiteout, an opaque dir, a hard link, a FIFO, 3 symlinks, a sparse file), digest" \
  || not_ok "checkpoint" "exit $rc: $got" "$(cat "$T/ck1.json" "$T/ck1.err")"
[ "$(status_of "$src")" = stopped ] && ok "without --leave-running the sandbox is stopped after the checkpoint" \
  || not_ok "stopped after checkpoint" "$(status_of "$src")"
[ "$(stat -c %a "$CK")" = 700 ] && [ "$(stat -c %a "$CK/$ck1/layer.tar.zst")" = 600 ] \
  && [ "$(stat -c %a "$CK/$ck1/checkpoint.json")" = 600 ] && [ "$(ls -A "$CK" | grep -c '^\.')" = 0 ] \
  && ok "the checkpoint directory is 0700, its files 0600, no temporary left" \
  || not_ok "checkpoint dir" "$(ls -laR "$CK" 2>&1)"
members=$(tar --zstd -tvf "$CK/$ck1/layer.tar.zst" --numeric-owner 2>"$T/tar.err")
echo "$members" | head -1 | grep -q ' spec\.json$' && echo "$members" | grep -q "^c.* 0/0 .* upper$Z/UTC$" \
  && echo "$members" | grep -q "^h.* upper$W/hard link to upper$W/bin$" \
  && ! echo "$members" | grep -v -e ' spec\.json$' -e ' upper/' | grep -q . \
  && [ ! -s "$T/tar.err" ] \
  && ok "the archive is a zstd pax tar that GNU tar reads: spec.json first, then upper/ (the whiteout a 0/0 device, owners 0/0)" \
  || not_ok "archive members" "$members" "$(cat "$T/tar.err")"

csrun sandbox restore "$ck1" --name dst --json > "$T/r1.json" 2>"$T/r1.err"
rc=$?
dst=$(jget "$T/r1.json" 'j["id"]')
got=$(jget "$T/r1.json" '(j["name"], j["checkpoint"], j["layer"]["whiteouts"], j["layer"]["opaque_dirs"], j["layer"]["sparse_files"], j["not_restored"])')
[ $rc = 0 ] && [ ${#dst} = 32 ] && [ "$dst" != "$src" ] && [ "$got" = "('dst', '$ck1', 1, 1, 1, [])" ] \
  && [ "$(status_of "$dst")" = running ] \
  && ok "restore --name --json: a new sandbox, running when the command returns" \
  || not_ok "restore" "exit $rc: $got" "$(cat "$T/r1.json" "$T/r1.err")"
after=$(dump "$dst")
[ -n "$before" ] && [ "$before" = "$after" ] \
  && ok "the restored layer is the same, entry by entry (types, modes, owners, mtimes, links, devices, xattrs, contents)" \
  || not_ok "layer differs" "$(diff <(echo "$before") <(echo "$after") 2>&1 | head -20)"
out=$(inpy dst "
import os, stat
C = '$Z/Canada'
print(sorted(os.listdir(C)), os.path.exists('$Z/UTC'), os.path.exists(C + '/Eastern'))
print(os.getcwd(), os.environ['GREETING'])
print(os.stat('bin').st_ino == os.stat('hard').st_ino, os.stat('bin').st_nlink)
print(os.readlink('rel-link'), open('rel-link').read().strip(), os.readlink('dangling'), os.path.isdir('abs-link/Europe'))
print(stat.S_ISFIFO(os.stat('fifo').st_mode), os.getxattr('x.txt', 'user.csrun-test'))
print([oct(os.stat(n).st_mode & 0o7777) for n in ('m640', 'm400', 'm000', 'm4755', 'd/e')])
print(set((os.lstat(n).st_uid, os.lstat(n).st_gid) for n in os.listdir('.')), os.stat('text.txt').st_mtime)
b = open('bin', 'rb').read(); print(len(b), b[:256] == bytes(range(256)))
f = open('sparse', 'rb'); f.seek(32 << 20); st = os.stat('sparse')
print(st.st_size, f.read(6), st.st_blocks * 512 < 1 << 20)")
want="['new.txt', 'w'] False False
$W hi
True 2
text.txt hello /etc/hostname-nope True
True b'\\x00\\x01value'
['0o640', '0o400', '0o0', '0o4755', '0o700']
{(0, 0)} 1000000000.0
1124000 True
67108864 b'middle' True"
[ "$out" = "$want" ] \
  && ok "inside: the opaque directory hides the rootfs's files, the whiteout the deleted one; env, links, FIFO, xattr, modes, owners 0:0, mtime, data, holes" \
  || not_ok "restored contents" "$out"
got=$(csrun sandbox inspect dst > "$T/in.json" 2>&1; jget "$T/in.json" '(j["spec"]["workdir"], j["limits"]["memory_bytes"], j["limits"]["pids"], j["spec"]["rootfs"])')
[ "$got" = "('$W', 1073741824, 100, '$CSRUN_ROOTFS')" ] && ok "the spec comes back: workdir, limits, rootfs" \
  || not_ok "restored spec" "$got"

# A stopped sandbox: its namespaces are gone; a new user namespace with its maps reads the layer.
ck2=$(csrun sandbox checkpoint src 2>"$T/ck2.err")
r2=$(csrun sandbox restore "$ck2" 2>"$T/r2.err")
[ ${#ck2} = 32 ] && [ ${#r2} = 32 ] && [ "$(dump "$r2")" = "$before" ] \
  && ok "a stopped sandbox: checkpoint, restore, the same layer" \
  || not_ok "stopped sandbox" "'$ck2' '$r2'" "$(cat "$T/ck2.err" "$T/r2.err")"
csrun sandbox rm --force "$r2" >/dev/null 2>&1

# ---------------------------------------------------------------- running: kept still, then left running or stopped
csrun sandbox exec dst -- python3 -c '
import os, time
n = 0
while True:
    n += 1
    with open("count.tmp", "w") as f:
        f.write(str(n))
    os.rename("count.tmp", "count")
    time.sleep(0.01)' > "$T/bg.out" 2>&1 &
bg=$!
wait_until 10 test -e "$SBX/$dst/upper$W/count"
csrun sandbox checkpoint dst --leave-running --json > "$T/ck3.json" 2>"$T/ck3.err"
rc=$?
ck3=$(jget "$T/ck3.json" 'j["id"]')
got=$(jget "$T/ck3.json" '(j["quiesced"] in ("cgroup-freezer", "sigstop"), j["stopped"])')
a=$(inpy dst 'print(open("count").read())')
sleep 0.5
b=$(inpy dst 'print(open("count").read())')
[ $rc = 0 ] && [ "$got" = "(True, False)" ] && [ "$(status_of "$dst")" = running ] && kill -0 $bg 2>/dev/null \
  && [ "$b" -gt "$a" ] 2>/dev/null \
  && ok "--leave-running: kept still while packed ($(jget "$T/ck3.json" 'j["quiesced"]')), then it goes on ($a -> $b)" \
  || not_ok "--leave-running" "exit $rc: $got, count $a -> $b" "$(cat "$T/ck3.json" "$T/ck3.err")"
n=$(tar --zstd -xOf "$CK/$ck3/layer.tar.zst" "upper$W/count" 2>/dev/null)
[ "$n" -gt 0 ] 2>/dev/null && ok "the checkpoint has the running writer's file whole ($n)" || not_ok "count in archive" "$n"

# ---------------------------------------------------------------- hooks
out=$(csrun sandbox checkpoint dst --leave-running --before-checkpoint 'echo "hooked $GREETING" > hook.txt' 2>&1)
rc=$?
ck4=$out
r4=$(csrun sandbox restore "$ck4" --after-restore 'read l < hook.txt && echo after > after.txt' 2>"$T/r4.err")
rrc=$?
got=$(inpy "$r4" 'print(open("hook.txt").read().strip(), open("after.txt").read().strip())')
[ $rc = 0 ] && [ $rrc = 0 ] && [ "$got" = "hooked hi after" ] \
  && ok "--before-checkpoint runs inside before the pack, --after-restore inside the new sandbox" \
  || not_ok "hooks" "checkpoint exit $rc ($out), restore exit $rrc: $got" "$(cat "$T/r4.err")"
csrun sandbox rm --force "$r4" >/dev/null 2>&1
nck=$(n_ck)
out=$(csrun sandbox checkpoint dst --before-checkpoint 'echo failing >&2; exit 3' 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q -- "--before-checkpoint failed (exit 3)" && echo "$out" | grep -q failing \
  && [ "$(n_ck)" = "$nck" ] && [ "$(status_of "$dst")" = running ] \
  && ok "a failing --before-checkpoint: exit 1, no checkpoint, the sandbox untouched" \
  || not_ok "failing before hook" "exit $rc" "$out"
nsb=$(n_sbx)
out=$(csrun sandbox restore "$ck4" --after-restore 'exit 5' 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q -- "--after-restore failed (exit 5)" && [ "$(n_sbx)" = "$nsb" ] \
  && ok "a failing --after-restore: exit 1, the new sandbox removed" \
  || not_ok "failing after hook" "exit $rc, $(n_sbx) sandboxes (was $nsb)" "$out"
kill $bg 2>/dev/null
csrun sandbox checkpoint dst > /dev/null 2>&1
wait $bg
[ "$(status_of "$dst")" = stopped ] && ok "a checkpoint without --leave-running stops the running writer" \
  || not_ok "stop after checkpoint" "$(status_of "$dst")"
csrun sandbox start dst > /dev/null 2>&1

# ---------------------------------------------------------------- ls, rm, bad ids, --name clash
csrun sandbox checkpoint ls --json > "$T/ls.json" 2>&1
got=$(jget "$T/ls.json" '("'"$ck1"'" in [c["id"] for c in j], all(len(c["archive"]["sha256"]) == 64 for c in j), len(j))')
csrun sandbox checkpoint ls > "$T/ls.txt" 2>&1
[ "$got" = "(True, True, $(n_ck))" ] && grep -q "^$ck1  src " "$T/ls.txt" \
  && ok "checkpoint ls and ls --json" || not_ok "checkpoint ls" "$got" "$(cat "$T/ls.json" "$T/ls.txt")"
out=$(csrun sandbox checkpoint rm "$ck2" 2>&1)
rc=$?
[ $rc = 0 ] && [ "$out" = "$ck2" ] && [ ! -e "$CK/$ck2" ] && ! grep -q "$ck2" <(csrun sandbox checkpoint ls) \
  && ok "checkpoint rm" || not_ok "checkpoint rm" "exit $rc" "$out"
out=$(csrun sandbox checkpoint rm "$ck2" 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such checkpoint" && ok "checkpoint rm of an unknown id: exit 2" \
  || not_ok "rm unknown" "exit $rc" "$out"
nsb=$(n_sbx)
out=$(csrun sandbox restore 0123456789abcdef 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such checkpoint: '0123456789abcdef'" && [ "$(n_sbx)" = "$nsb" ] \
  && ok "restore of an unknown id: exit 2, nothing made" || not_ok "restore unknown" "exit $rc" "$out"
out=$(csrun sandbox checkpoint nosuchbox 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such sandbox" && ok "checkpoint of an unknown sandbox: exit 2" \
  || not_ok "checkpoint unknown" "exit $rc" "$out"
out=$(csrun sandbox restore "$ck1" --name dst 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "named 'dst' exists" && [ "$(n_sbx)" = "$nsb" ] \
  && ok "restore --name of a name in use: exit 2, nothing made" || not_ok "name clash" "exit $rc" "$out"

# ---------------------------------------------------------------- --ttl: expiry, collection
ck5=$(csrun sandbox checkpoint dst --leave-running --ttl 2s 2>&1)
got=$(jget <(csrun sandbox checkpoint ls --json) '[c["expires"] - c["created"] in (2, 3) for c in j if c["id"] == "'"$ck5"'"]')
[ "$got" = "[True]" ] && ok "--ttl: the checkpoint's expiry (2 s, rounded up to a whole second)" \
  || not_ok "ttl expires" "$ck5: $got"
sleep 3.2
out=$(csrun sandbox restore "$ck5" 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "checkpoint $ck5 expired at" && [ ! -e "$CK/$ck5" ] && [ "$(n_sbx)" = "$nsb" ] \
  && ok "restore of an expired checkpoint: exit 1, 'expired', and it is collected" \
  || not_ok "expired" "exit $rc" "$out" "$(ls -A "$CK")"
ck6=$(csrun sandbox checkpoint dst --leave-running --ttl 1s 2>&1)
sleep 2.2
csrun sandbox ls > /dev/null 2>&1
[ ${#ck6} = 32 ] && [ ! -e "$CK/$ck6" ] && ok "an expired checkpoint is collected by the next sandbox command" \
  || not_ok "collect by ls" "$ck6" "$(ls -A "$CK")"
ck7=$(csrun sandbox checkpoint dst --leave-running --ttl 1s 2>&1)
sleep 2.2
csrun sandbox gc --json > "$T/gc.json" 2>&1
[ "$(jget "$T/gc.json" 'j["checkpoints_removed"]')" = "['$ck7']" ] && [ ! -e "$CK/$ck7" ] \
  && ok "... and by gc (checkpoints_removed)" || not_ok "gc" "$(cat "$T/gc.json")"

# The debris of a writer that died (.tmp-ID, its lock free, older than 10 s) goes; a live writer's stays.
mkdir -m 700 "$CK/.tmp-0123456789abcdef0123456789abcdef" "$CK/.tmp-fedcba9876543210fedcba9876543210"
for d in "$CK"/.tmp-*; do : > "$d/lock" && : > "$d/layer.tar.zst" && touch -d '1 minute ago' "$d"; done
flock "$CK/.tmp-fedcba9876543210fedcba9876543210/lock" sleep 30 &
fl=$!
wait_until 10 sh -c "! flock -n '$CK/.tmp-fedcba9876543210fedcba9876543210/lock' true"
csrun sandbox gc > /dev/null 2>&1
[ ! -e "$CK/.tmp-0123456789abcdef0123456789abcdef" ] && [ -d "$CK/.tmp-fedcba9876543210fedcba9876543210" ] \
  && ok "gc removes a dead writer's temporary checkpoint, not a live one's" \
  || not_ok "debris" "$(ls -A "$CK")"
kill $fl 2>/dev/null
wait $fl 2>/dev/null
rm -rf "$CK/.tmp-fedcba9876543210fedcba9876543210"

# ---------------------------------------------------------------- damaged and forged checkpoints
tar --zstd -xOf "$CK/$ck1/layer.tar.zst" spec.json > "$T/spec.json" 2>/dev/null
cat > "$T/forge.py" <<'EOF'
# forge.py CKDIR FROM_ID KIND: a new checkpoint made from FROM_ID's, with a bad archive whose
# checkpoint.json matches it (size, digest) unless KIND says otherwise.  Prints its id.
import hashlib, io, json, os, secrets, subprocess, sys, tarfile
ck, src, kind, spec_path, outside = sys.argv[1:6]
old = open(os.path.join(ck, src, "layer.tar.zst"), "rb").read()
meta = json.load(open(os.path.join(ck, src, "checkpoint.json")))
spec = open(spec_path, "rb").read()

def tar(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, typ, data, link in members:
            ti = tarfile.TarInfo(name)
            ti.type, ti.mode, ti.linkname = typ, 0o755 if typ == tarfile.DIRTYPE else 0o644, link or ""
            if typ == tarfile.CHRTYPE:
                ti.devmajor, ti.devminor = 1, 3
            ti.size = len(data) if typ == tarfile.REGTYPE else 0
            t.addfile(ti, io.BytesIO(data) if typ == tarfile.REGTYPE else None)
    return subprocess.run(["zstd", "-q", "-c"], input=buf.getvalue(), stdout=subprocess.PIPE,
                          check=True).stdout

S = ("spec.json", tarfile.REGTYPE, spec, None)
U = ("upper", tarfile.DIRTYPE, b"", None)
R, D, L, H, C = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE
fix = True
if kind == "flipped":
    data = bytearray(old); data[len(data) // 2] ^= 0xFF; data = bytes(data); fix = False
elif kind == "truncated":
    data = old[: len(old) // 2]; fix = False
elif kind == "truncated-fixed":
    data = old[: len(old) // 2]
elif kind == "not-a-tar":
    data = subprocess.run(["zstd", "-q", "-c"], input=os.urandom(4000), stdout=subprocess.PIPE).stdout
elif kind == "not-zstd":
    data = os.urandom(4000)
elif kind == "no-spec":
    data = tar([U, ("upper/a", R, b"a", None)])
elif kind == "dotdot":
    data = tar([S, U, ("upper/../escape", R, b"x", None)])
elif kind == "absolute":
    data = tar([S, U, (outside + "/escape", R, b"x", None)])
elif kind == "outside-layer":
    data = tar([S, U, ("elsewhere/escape", R, b"x", None)])
elif kind == "hardlink-out":
    data = tar([S, U, ("upper/h", H, b"", "../../../../../../../etc/passwd")])
elif kind == "hardlink-abs":
    data = tar([S, U, ("upper/h", H, b"", "/etc/passwd")])
elif kind == "device":
    data = tar([S, U, ("upper/null", C, b"", None)])
elif kind == "through-symlink":
    data = tar([S, U, ("upper/s", L, b"", outside), ("upper/s/escape", R, b"x", None)])
elif kind == "session-dotdot":
    data = tar([S, U, ("sessions/..", R, b"x", None)])
elif kind == "session-nested":
    data = tar([S, U, ("sessions/a/b", R, b"x", None)])
elif kind == "session-bare":
    data = tar([S, U, ("sessions", R, b"x", None)])
elif kind == "session-dir":
    data = tar([S, U, ("sessions/x", D, b"", None)])
elif kind == "session-symlink":
    data = tar([S, U, ("sessions/x", L, b"", outside)])
elif kind == "session-hardlink":
    data = tar([S, U, ("upper/f", R, b"f", None), ("sessions/x", H, b"", "upper/f")])
elif kind == "session-duplicate":
    data = tar([S, U, ("sessions/x", R, b"x", None), ("sessions/x", R, b"y", None)])
elif kind == "session-33":
    data = tar([S, U] + [("sessions/s%d" % i, R, b"x", None) for i in range(33)])
elif kind == "session-huge":
    # A header that claims 1 GiB + 1 byte (and no data: refused on sight).
    buf = io.BytesIO()
    t = tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT)
    for name, typ, d, link in (S, U):
        ti = tarfile.TarInfo(name)
        ti.type, ti.mode, ti.size = typ, 0o644, len(d)
        t.addfile(ti, io.BytesIO(d) if typ == R else None)
    ti = tarfile.TarInfo("sessions/x")
    ti.size = (1 << 30) + 1
    raw = buf.getvalue() + ti.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    data = subprocess.run(["zstd", "-q", "-c"], input=raw, stdout=subprocess.PIPE, check=True).stdout
elif kind == "session-payload":
    # Not damaged: a session's save whose unpickling opens files -- in the sandbox's session.
    import pickle
    class Opens:
        def __init__(self, path):
            self.path = path
        def __reduce__(self):
            return (open, (self.path, "w"))
    save = pickle.dumps({"csrun-session": 1, "modules": {},
                         "globals": {"host": pickle.dumps(Opens(outside + "/pwned"), 4),
                                     "inside": pickle.dumps(Opens("pickle-ran"), 4)}}, 4)
    wd = json.loads(spec)["workdir"].strip("/").split("/")
    dirs = [("upper/" + "/".join(wd[: i + 1]), D, b"", None) for i in range(len(wd))]
    data = tar([S, U] + dirs + [("sessions/evil", R, save, None)])
else:
    sys.exit("unknown kind " + kind)
new = secrets.token_hex(16)
d = os.path.join(ck, new)
os.mkdir(d, 0o700)
open(os.path.join(d, "lock"), "w").close()
with open(os.path.join(d, "layer.tar.zst"), "wb") as f:
    f.write(data)
meta["id"] = new
if fix:
    meta["archive"]["bytes"] = len(data)
    meta["archive"]["sha256"] = hashlib.sha256(data).hexdigest()
json.dump(meta, open(os.path.join(d, "checkpoint.json"), "w"))
print(new)
EOF
mkdir -p "$T/outside"
for kind in flipped truncated truncated-fixed not-a-tar not-zstd no-spec dotdot absolute outside-layer \
    hardlink-out hardlink-abs device through-symlink session-dotdot session-nested session-bare \
    session-dir session-symlink session-hardlink session-duplicate session-33 session-huge; do
  f=$(python3 "$T/forge.py" "$CK" "$ck1" "$kind" "$T/spec.json" "$T/outside" 2>&1)
  nsb=$(n_sbx)
  out=$(csrun sandbox restore "$f" 2>&1)
  rc=$?
  [ $rc = 4 ] && echo "$out" | grep -q "is damaged" && [ "$(n_sbx)" = "$nsb" ] \
    && [ -z "$(ls -A "$T/outside")" ] && [ ! -e "$SBX/escape" ] && [ ! -e "$CK/escape" ] \
    && ok "a $kind checkpoint: exit 4 '$(echo "$out" | sed 's/.*is damaged: //' | cut -c1-60)', nothing left" \
    || not_ok "$kind" "exit $rc, $(n_sbx) sandboxes (was $nsb)" "$out" "$(ls -A "$T/outside")"
  csrun sandbox checkpoint rm "$f" > /dev/null 2>&1
done

# ---------------------------------------------------------------- another rootfs
mkdir -p "$T/cache"
cp "$CSRUN_ROOTFS" "$T/rfs.tar.zst"
rid=$(CSRUN_CACHE_DIR="$T/cache" csrun sandbox create --rootfs "$T/rfs.tar.zst" --idle-timeout 0 2>/dev/null)
inpy "$rid" 'open("/work/f", "w").write("f")' > /dev/null
ck8=$(CSRUN_CACHE_DIR="$T/cache" csrun sandbox checkpoint "$rid" 2>&1)
csrun sandbox rm --force "$rid" > /dev/null 2>&1
# The same files, another tarball (another digest).
zstd -q -d -c "$CSRUN_ROOTFS" | zstd -q -1 -c > "$T/rfs2.tar.zst" && mv "$T/rfs2.tar.zst" "$T/rfs.tar.zst"
nsb=$(n_sbx)
out=$(CSRUN_CACHE_DIR="$T/cache" csrun sandbox restore "$ck8" 2>&1)
rc=$?
[ ${#ck8} = 32 ] && [ $rc = 1 ] && echo "$out" | grep -q "another rootfs" && [ "$(n_sbx)" = "$nsb" ] \
  && ok "a checkpoint restored onto a rootfs with another digest: refused (exit 1), nothing left" \
  || not_ok "rootfs mismatch" "exit $rc ($ck8)" "$out"
rm -f "$T/rfs.tar.zst"
out=$(csrun sandbox restore "$ck8" 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "rootfs $T/rfs.tar.zst is gone" && [ "$(n_sbx)" = "$nsb" ] \
  && ok "... and onto a rootfs that is gone: refused (exit 1)" || not_ok "rootfs gone" "exit $rc" "$out"
rdir=$(jget "$SBX/$dst/spec.json" 'j["rootfs_dir"]')
did=$(csrun sandbox create --rootfs "$rdir" --idle-timeout 0 2>/dev/null)
ck9=$(csrun sandbox checkpoint "$did" 2>&1)
out=$(csrun sandbox restore "$ck9" 2>&1 >/dev/null)
rc=$?
[ $rc = 0 ] && echo "$out" | grep -q "rootfs is a directory ($rdir): its contents are not compared" \
  && ok "a directory rootfs: restored with a warning (its contents can't be compared)" \
  || not_ok "directory rootfs" "exit $rc" "$out"

# ---------------------------------------------------------------- out of space
mkdir -p "$T/small"
if [ "$(id -u)" = 0 ]; then U=; else U=-r; fi
nck=$(n_ck)
out=$(unshare $U -m sh -c 'mount -t tmpfs -o size=48k tmpfs "$0" && CSRUN_CHECKPOINT_DIR="$0/ck" "$@"; echo "exit $?"; ls -A "$0/ck"' \
  "$T/small" "$CSRUN" sandbox checkpoint dst 2>&1)
if echo "$out" | grep -q "mount.*\(denied\|not permitted\)\|unshare failed"; then
  skip "a checkpoint that runs out of space" "no private tmpfs here: $out"
else
  [ "$(echo "$out" | grep -c .)" = 2 ] && echo "$out" | grep -q "No space left on device" \
    && echo "$out" | grep -q "^exit 125$" && [ "$(status_of "$dst")" = running ] && [ "$(n_ck)" = "$nck" ] \
    && ok "out of space: exit 125, nothing left in the checkpoint directory, the sandbox untouched" \
    || not_ok "ENOSPC" "$out"
fi

# ---------------------------------------------------------------- busy while packing
# 20,000 empty files keep the pack going for a while (half a second or so here): the keeper
# answers inspect meanwhile and refuses an exec.
made=$(inpy dst 'import os
os.mkdir("many")
for i in range(20000):
    open("many/%d" % i, "w").close()
print(len(os.listdir("many")))')
csrun sandbox checkpoint dst --leave-running > "$T/busy.out" 2>&1 &
ckpid=$!
refused="" answered="" tries=0
# Once the checkpoint's temporary directory is there (the keeper is busy from before it is made
# until after it is renamed); an exec that came first would be frozen with the sandbox instead.
while kill -0 $ckpid 2>/dev/null && [ -z "$refused" ]; do
  ls -A "$CK" | grep -q '^\.tmp-' || continue
  out=$(csrun sandbox exec dst -- python3 -c pass 2>&1)
  rc=$?
  tries=$((tries + 1))
  if [ $rc = 1 ] && echo "$out" | grep -q "busy with a checkpoint"; then
    refused=yes
    [ "$(jget <(csrun sandbox inspect dst) 'j["status"]')" = running ] && answered=yes
  fi
done
wait $ckpid
rc=$?
cks=$(cat "$T/busy.out")
[ $rc = 0 ] && [ "$refused" = yes ] && [ "$answered" = yes ] \
  && [ "$(inpy dst 'import os; print(len(os.listdir("many")))')" = 20000 ] \
  && ok "while a checkpoint is packed: an exec is refused (exit 1, busy), inspect is answered; afterwards all goes on" \
  || not_ok "busy" "checkpoint exit $rc, refused '$refused', inspect '$answered', $tries execs, made $made" "$cks" "$out"
# A restore whose command is killed: the sandbox made for it goes (its keeper sees the command go).
before_ids=$(ls "$SBX")
"$CSRUN" sandbox restore "$cks" > /dev/null 2>&1 &
rpid=$!
new_stopped () {
  local i
  for i in $(ls "$SBX"); do
    echo "$before_ids" | grep -qx "$i" && continue
    [ "$(status_of "$i")" = stopped ] && { echo "$i" > "$T/new.id"; return 0; }
  done
  return 1
}
wait_until 30 new_stopped
kill -KILL $rpid 2>/dev/null
wait $rpid 2>/dev/null
nid=$(cat "$T/new.id" 2>/dev/null)
[ ${#nid} = 32 ] && wait_until 30 no_dir "$SBX/$nid" \
  && ok "a restore whose command is killed while the layer is unpacked: its new sandbox is removed" \
  || not_ok "restore client killed" "'$nid'" "$(ls "$SBX")"
csrun sandbox checkpoint rm "$cks" > /dev/null 2>&1
# A checkpoint whose command is killed: abandoned, nothing left, the sandbox as it was.
nck=$(n_ck)
"$CSRUN" sandbox checkpoint dst > /dev/null 2>&1 &
cpid=$!
wait_until 30 sh -c "ls -A '$CK' | grep -q '^\.tmp-'"
kill -KILL $cpid 2>/dev/null
wait $cpid 2>/dev/null
wait_until 30 sh -c "! ls -A '$CK' | grep -q '^\.'"
[ "$(n_ck)" = "$nck" ] && [ "$(status_of "$dst")" = running ] \
  && [ "$(inpy dst 'import os; print(len(os.listdir("many")))')" = 20000 ] \
  && ok "a checkpoint whose command is killed: abandoned, nothing left, the sandbox goes on" \
  || not_ok "checkpoint client killed" "$(n_ck) checkpoints (was $nck), $(status_of "$dst")" "$(ls -A "$CK")"
# rm --force is not refused: the checkpoint under way is cut short, and leaves nothing.
nck=$(n_ck)
csrun sandbox checkpoint dst > "$T/cut.out" 2>&1 &
ckpid=$!
wait_until 30 sh -c "ls -A '$CK' | grep -q '^\.tmp-'"
out=$(csrun sandbox rm --force dst 2>&1)
rc=$?
wait $ckpid
crc=$?
[ $rc = 0 ] && [ $crc = 125 ] && grep -q "stopped during the checkpoint" "$T/cut.out" && [ ! -e "$SBX/$dst" ] \
  && [ "$(n_ck)" = "$nck" ] && ! ls -A "$CK" | grep -q '^\.' \
  && ok "rm --force during a checkpoint: removed; the checkpoint fails (exit 125) and leaves nothing" \
  || not_ok "rm during checkpoint" "rm exit $rc ($out), checkpoint exit $crc" "$(cat "$T/cut.out")" "$(ls -A "$CK")"

# ---------------------------------------------------------------- sessions: their picklable globals
ses=$(csrun sandbox create --name ses --idle-timeout 0 2>"$T/ses.err")
cell () { # cell SANDBOX SESSION CODE [OPTIONS...]: CODE as a cell of SESSION
  local b=$1 s=$2 code=$3
  shift 3
  printf '%s\n' "$code" | csrun sandbox run "$@" --session "$s" "$b" -
}
pid_of () { # pid_of SANDBOX SESSION
  csrun sandbox session ls --json "$1" 2>/dev/null | python3 -c 'import json,sys; print([s["pid"] for s in json.load(sys.stdin) if s["name"] == sys.argv[1]])' "$2" 2>&1
}
out=$(cell ses nb 'import json as J
n = 41
big = 10 ** 30
d = {"k": [1, 2, {"deep": None}], "t": (1.5, "x")}
def f():
    return 1
n += 1' 2>>"$T/cells.err"; cell ses other 'import math; word = "two"' 2>>"$T/cells.err")
pid_nb=$(pid_of ses nb)
csrun sandbox checkpoint ses --leave-running --json > "$T/cks.json" 2>"$T/cks.err"
rc=$?
cks=$(jget "$T/cks.json" 'j["id"]')
got=$(jget "$T/cks.json" '[(s["name"], sorted(s["saved"]), s["modules"], [(x["name"], "defined in a cell" in x["why"]) for x in s["skipped"]], s["bytes"] > 0) for s in j["sessions"]]')
want="[('nb', ['big', 'd', 'n'], ['J'], [('f', True)], True), ('other', ['word'], ['math'], [], True)]"
[ ${#ses} = 32 ] && [ -z "$out" ] && [ $rc = 0 ] && [ "$got" = "$want" ] \
  && ok "checkpoint --json: per session what was saved (ints, a dict, modules) and what was not (a cell's function, why)" \
  || not_ok "checkpoint with sessions" "exit $rc: $got" "$out" "$(cat "$T/cks.json" "$T/cks.err" "$T/ses.err" "$T/cells.err")"
members=$(tar --zstd -tf "$CK/$cks/layer.tar.zst" 2>&1)
[ "$(echo "$members" | grep -v '^upper' | tr '\n' ' ')" = "spec.json sessions/nb sessions/other " ] \
  && [ "$(echo "$members" | tail -2 | tr '\n' ' ')" = "sessions/nb sessions/other " ] \
  && ok "the archive holds each session's save as sessions/NAME, after upper/" \
  || not_ok "session members" "$members"
got=$(cell ses nb 'n += 1; print(n, f())' 2>>"$T/cells.err")
[ "$got" = "43 1" ] && [ "$(pid_of ses nb)" = "$pid_nb" ] && [ "$(status_of "$ses")" = running ] \
  && ok "--leave-running: the sessions live on in the original (same interpreter, its globals, functions too)" \
  || not_ok "sessions after --leave-running" "$got" "$pid_nb -> $(pid_of ses nb)" "$(tail -5 "$T/cells.err")"
got=$(jget <(csrun sandbox checkpoint ls --json) '[[s["name"] for s in c["sessions"]] for c in j if c["id"] == "'"$cks"'"]')
[ "$got" = "[['nb', 'other']]" ] && ok "checkpoint ls --json lists its sessions" || not_ok "ls sessions" "$got"

csrun sandbox restore "$cks" --name ses2 --json > "$T/rs.json" 2>"$T/rs.err"
rc=$?
ses2=$(jget "$T/rs.json" 'j["id"]')
got=$(jget "$T/rs.json" '[(s["name"], sorted(s["loaded"]), s["skipped"]) for s in j["sessions"]]')
a=$(cell ses2 nb 'print(n, big, d["k"][2], J.dumps(d["t"]), "f" in globals(), "word" in globals())' 2>>"$T/cells.err")
b=$(cell ses2 other 'print(word, math.floor(2.5), "n" in globals())' 2>>"$T/cells.err")
started=$(cell ses2 nb 'pass' --json 2>/dev/null > "$T/st.json"; jget "$T/st.json" 'j["session"]["started"]')
[ $rc = 0 ] && [ "$got" = "[('nb', ['J', 'big', 'd', 'n'], []), ('other', ['math', 'word'], [])]" ] \
  && [ "$a" = '42 1000000000000000000000000000000 {'"'deep'"': None} [1.5, "x"] False False' ] \
  && [ "$b" = "two 2 False" ] && [ "$started" = False ] \
  && ok "restore: each session is loaded into a new session of its name before the command returns; a cell sees its variables (two sessions, each its own)" \
  || not_ok "restore sessions" "exit $rc: $got" "$a" "$b" "started: $started" "$(cat "$T/rs.json" "$T/rs.err")" "$(tail -5 "$T/cells.err")"

# A session with 3,000 long names and 300 values that don't pickle: its report is cut to fit (what
# was not saved first, "omitted" counts the rest), the checkpoint stays readable, all come back.
cell ses2 many 'g = globals()
for i in range(3000):
    g["v_%0150d" % i] = i
class C:
    pass
for i in range(300):
    g["c_%0150d" % i] = C()' 2>>"$T/cells.err"
csrun sandbox checkpoint ses2 --leave-running --json > "$T/many.json" 2>"$T/many.err"
rc=$?
ckm=$(jget "$T/many.json" 'j["id"]')
got=$(jget "$T/many.json" '[(len(s["skipped"]) > 10, len(s["skipped"]) + len(s["saved"]) + len(s["modules"]) + s["omitted"], len(json.dumps(s)) < 20000) for s in j["sessions"] if s["name"] == "many"]')
listed=$(jget <(csrun sandbox checkpoint ls --json) '[c["id"] for c in j].count("'"$ckm"'")')
rm_=$(csrun sandbox restore "$ckm" 2>>"$T/cells.err")
back=$(cell "$rm_" many 'print(len([n for n in globals() if n.startswith("v_")]), v_'"$(printf '%0150d' 2999)"')' 2>>"$T/cells.err")
[ $rc = 0 ] && [ "$got" = "[(True, 3303, True)]" ] && [ "$listed" = 1 ] && [ "$back" = "3000 2999" ] \
  && ok "a session with 3,303 globals: its report cut to fit (the skipped first; omitted counts the rest), the checkpoint readable, all restored" \
  || not_ok "long report" "exit $rc: $got, listed $listed, back '$back'" "$(head -c 600 "$T/many.json")" "$(cat "$T/many.err")" "$(tail -5 "$T/cells.err")"
csrun sandbox rm --force "$rm_" > /dev/null 2>&1
csrun sandbox session rm ses2 many > /dev/null 2>&1

# A session busy with a cell: listed, the checkpoint not held up; the cell goes on.
# (The cell runs until the test makes the file "go", after the checkpoint.)
cell ses nb 'import os, time
for i in range(1200):
    if os.path.exists("go"):
        break
    time.sleep(0.05)
print("went" if i < 1199 else "gave up")' > "$T/bc.out" 2>&1 &
bc=$!
nb_busy () { csrun sandbox session ls --json ses 2>/dev/null | grep -q '"busy"'; }
wait_until 20 nb_busy
csrun sandbox checkpoint ses --leave-running > "$T/ckb.out" 2>"$T/ckb.err"
rc=$?
ckb=$(cat "$T/ckb.out")
still=no
nb_busy && still=yes
inpy ses 'open("go", "w")' > /dev/null
wait $bc
brc=$?
got=$(jget "$CK/$ckb/checkpoint.json" '[(s["name"], "error" in s) for s in j["sessions"]]')
[ $rc = 0 ] && [ "$still" = yes ] && [ "$got" = "[('nb', True), ('other', False)]" ] \
  && grep -q "warning: not saved: session nb is busy: a cell is running" "$T/ckb.err" \
  && [ $brc = 0 ] && [ "$(cat "$T/bc.out")" = went ] \
  && ok "a session busy with a cell: not saved, said on stderr (and in checkpoint.json), the checkpoint done while the cell runs on" \
  || not_ok "busy session" "exit $rc, busy after: $still, cell exit $brc: $(cat "$T/bc.out")" "$got" "$(cat "$T/ckb.err")"

# Sessions whose save is slow (interrupted after --session-timeout: it lives on), ignores the
# interrupt (killed) or dies: each listed, and the checkpoint goes on.
cell ses slow 'import time
class Slow:
    def __reduce__(self):
        time.sleep(60)
s = Slow()
keep = 7' > /dev/null 2>&1
cell ses stubborn 'import signal, time
class Stubborn:
    def __reduce__(self):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        time.sleep(60)
s = Stubborn()' > /dev/null 2>&1
cell ses dies 'import os
class Dies:
    def __reduce__(self):
        os._exit(3)
s = Dies()' > /dev/null 2>&1
timeout 100 "$CSRUN" sandbox checkpoint ses --leave-running --session-timeout 1s --json > "$T/cks2.json" 2>"$T/cks2.err"
rc=$?
got=$(jget "$T/cks2.json" '[(s["name"], s.get("error", "saved").replace("session " + s["name"], "").lstrip(": ").split(" (")[0]) for s in j["sessions"]]')
want="[('nb', 'saved'), ('other', 'saved'), ('slow', 'no answer in 1000 ms: interrupted'), ('stubborn', 'no answer in 1000 ms, nor after its interrupt'), ('dies', 'ended')]"
left=$(csrun sandbox session ls --json ses | python3 -c 'import json,sys; print(sorted(s["name"] for s in json.load(sys.stdin)))' 2>&1)
keep=$(cell ses slow 'print(keep)' 2>>"$T/cells.err")
[ $rc = 0 ] && [ "$got" = "$want" ] && [ "$left" = "['nb', 'other', 'slow']" ] && [ "$keep" = 7 ] \
  && ok "--session-timeout: a slow save is interrupted (the session lives on), one that ignores it is killed, one that dies is listed; the others are saved" \
  || not_ok "slow, stubborn, dead sessions" "exit $rc: $got" "$left" "$keep" "$(cat "$T/cks2.json" "$T/cks2.err")" "$(tail -5 "$T/cells.err")"
csrun sandbox session rm ses slow > /dev/null 2>&1

# A save whose load is slow: the restore interrupts it after --session-timeout, says so, and the
# sandbox is restored all the same (the session lives on).
cell ses lazy 'import time
class Lazy:
    def __reduce__(self):
        return (time.sleep, (60,))
z = Lazy()' > /dev/null 2>&1
ckl=$(csrun sandbox checkpoint ses --leave-running 2>/dev/null)
timeout 100 "$CSRUN" sandbox restore "$ckl" --session-timeout 1s > "$T/rl.out" 2>"$T/rl.err"
rc=$?
rl=$(cat "$T/rl.out")
got=$(cell "$rl" lazy 'print("alive")' 2>>"$T/cells.err"; cell "$rl" nb 'print(n)' 2>>"$T/cells.err")
[ $rc = 0 ] && [ ${#rl} = 32 ] && [ "$got" = "alive
43" ] && grep -q "warning: not loaded: session lazy: no answer in 1000 ms: interrupted (it goes on)" "$T/rl.err" \
  && ok "restore --session-timeout: a slow load is interrupted and said on stderr, the other sessions loaded, the sandbox restored" \
  || not_ok "slow load" "exit $rc ($rl): $got" "$(cat "$T/rl.err")" "$(tail -5 "$T/cells.err")"
csrun sandbox rm --force "$rl" > /dev/null 2>&1

# Without --leave-running the sandbox is stopped after its sessions saved; the restore has them.
ck_stop=$(csrun sandbox checkpoint ses 2>/dev/null)
r3=$(csrun sandbox restore "$ck_stop" --session-timeout 1s 2>/dev/null)
got=$(cell "$r3" nb 'print(n)' 2>>"$T/cells.err")
[ "$(status_of "$ses")" = stopped ] && [ "$got" = 43 ] \
  && ok "without --leave-running: the sessions saved, then the sandbox stopped; the restore has them" \
  || not_ok "checkpoint and stop with sessions" "$(status_of "$ses")" "$got" "$(tail -5 "$T/cells.err")"
csrun sandbox rm --force "$r3" > /dev/null 2>&1

# A save is only ever unpickled by a session in the sandbox: a forged one's code runs there.
f=$(python3 "$T/forge.py" "$CK" "$ck1" session-payload "$T/spec.json" "$T/outside" 2>&1)
csrun sandbox restore "$f" --json > "$T/pay.json" 2>"$T/pay.err"
rc=$?
pay=$(jget "$T/pay.json" 'j["id"]')
got=$(jget "$T/pay.json" '[(s["name"], s["loaded"], [x["name"] for x in s["skipped"]]) for s in j["sessions"]]')
ran=$(inpy "$pay" 'import os; print(os.path.exists("pickle-ran"))')
[ $rc = 0 ] && [ "$got" = "[('evil', ['inside'], ['host'])]" ] && [ "$ran" = True ] \
  && [ -z "$(ls -A "$T/outside")" ] \
  && ok "a forged save's code runs inside the restored sandbox's session (a file made there), never on the host" \
  || not_ok "pickle payload" "exit $rc: $got, ran: $ran" "$(ls -A "$T/outside")" "$(cat "$T/pay.json" "$T/pay.err")"
csrun sandbox rm --force "$pay" > /dev/null 2>&1
csrun sandbox checkpoint rm "$f" > /dev/null 2>&1

# ---------------------------------------------------------------- --idle-action checkpoint
idl=$(csrun sandbox create --idle-timeout 2s --idle-action checkpoint 2>/dev/null)
inpy "$idl" 'open("/work/kept.txt", "w").write("kept")' > /dev/null
# One with a session: checkpointed while it still runs (a session must run to save its globals).
idls=$(csrun sandbox create --idle-timeout 2s --idle-action checkpoint 2>/dev/null)
cell "$idls" nb 'v = {"kept": 7}' 2>>"$T/cells.err"
wait_until 30 no_dir "$SBX/$idl"
gone=$?
csrun sandbox checkpoint ls --json > "$T/ls2.json" 2>&1
cki=$(jget "$T/ls2.json" '[c["id"] for c in j if c["sandbox"]["id"] == "'"$idl"'" and c["trigger"] == "idle"]')
cki=${cki//[\'\[\] ]/}
[ $gone = 0 ] && [ ${#cki} = 32 ] && [ "$(tar --zstd -xOf "$CK/$cki/layer.tar.zst" upper/work/kept.txt 2>/dev/null)" = kept ] \
  && ok "--idle-action checkpoint: the idle sandbox is checkpointed (trigger idle, in checkpoint ls), then removed" \
  || not_ok "idle checkpoint" "gone $gone, '$cki'" "$(cat "$T/ls2.json")"
wait_until 30 no_dir "$SBX/$idls"
gone=$?
csrun sandbox checkpoint ls --json > "$T/ls3.json" 2>&1
got=$(jget "$T/ls3.json" '[(c["trigger"], [(x["name"], x.get("saved")) for x in c["sessions"]]) for c in j if c["sandbox"]["id"] == "'"$idls"'"]')
ckis=$(jget "$T/ls3.json" '[c["id"] for c in j if c["sandbox"]["id"] == "'"$idls"'"][0]')
ri=$(csrun sandbox restore "$ckis" 2>>"$T/cells.err")
back=$(cell "$ri" nb 'print(v["kept"])' 2>>"$T/cells.err")
[ $gone = 0 ] && [ "$got" = "[('idle', [('nb', ['v'])])]" ] && [ "$back" = 7 ] \
  && ok "--idle-action checkpoint of a sandbox with a session: taken while it runs (the session's globals in it, one checkpoint), then removed; restored, the session has them" \
  || not_ok "idle checkpoint with a session" "gone $gone: $got, '$back'" "$(cat "$T/ls3.json")" "$(tail -5 "$T/cells.err")"
csrun sandbox rm --force "$ri" > /dev/null 2>&1
out=$(csrun sandbox create --idle-action sleep 2>&1)
rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "remove or checkpoint" && ok "--idle-action: a bad value is exit 2" \
  || not_ok "bad --idle-action" "exit $rc" "$out"

done_testing
