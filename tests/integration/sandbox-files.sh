#!/bin/bash
# csrun sandbox cp/read/write/ls/find (csrun-sandbox(1), FILES): round trips of a tree (binary,
# empty, nested, modes, symlinks pointing outside copied as links), read/write with parents,
# listings, find, tar streams, escape attempts (.., symlinks to /, /proc/self/root or host paths,
# crafted tars: ../x, absolute names, a hardlink to /etc/passwd, devices), owners, size caps,
# out of space, 16 concurrent operations, an interrupted client, a busy sandbox is not idle, a
# stopped sandbox, an unknown id.  Root and rootless.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"
. "$CSRUN_SRCDIR/tests/lib/sandbox.sh"
umask 022

sx () { csrun sandbox exec box -- python3 -c "$@" 2>&1; }

# A tree's summary, one line per entry (symlinks not followed): path, type, permission bits,
# and the content's sha256 or the link's target.  Runs on the host and inside the sandbox.
SUM='
import hashlib, os, stat, sys
top = sys.argv[1]
out = []
for d, dirs, files in os.walk(top):
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        st = os.lstat(p)
        rel = os.path.relpath(p, top)
        if stat.S_ISLNK(st.st_mode):
            out.append("%s l %s" % (rel, os.readlink(p)))
        elif stat.S_ISDIR(st.st_mode):
            out.append("%s d %o" % (rel, st.st_mode & 0o7777))
        else:
            out.append("%s f %o %s" % (rel, st.st_mode & 0o7777, hashlib.sha256(open(p, "rb").read()).hexdigest()))
print("\n".join(sorted(out)))
'
treesum () { python3 -c "$SUM" "$1"; }

id=$(csrun sandbox create --name box --idle-timeout 600s 2>"$T/c.err")
if [ ${#id} != 32 ]; then
  not_ok "create the sandbox" "$(cat "$T/c.err")"
  done_testing
  exit
fi

# ---------------------------------------------------------------- write, read
printf 'hello\n' | csrun sandbox write box a/b/c.txt 2>"$T/w.err"
rc=$?
out=$(csrun sandbox read box /work/a/b/c.txt 2>&1)
owner=$(sx 'import os; s = os.stat("/work/a/b/c.txt"); print(s.st_uid, s.st_gid, oct(s.st_mode & 0o777))')
want_host=$(is_root && echo 65534 || id -u)
hostown=$(stat -c %u "$SBX/$id/upper/work/a/b/c.txt" 2>&1)
[ $rc = 0 ] && [ "$out" = hello ] && [ "$owner" = "0 0 0o644" ] && [ "$hostown" = "$want_host" ] \
  && ok "write makes the parents, read gives the bytes; an exec sees the sandbox's root as owner (host: $hostown)" \
  || not_ok "write/read" "exit $rc $(cat "$T/w.err")" "read: $out" "owner: $owner" "host owner: $hostown (want $want_host)"

head -c 1048576 /dev/urandom > "$T/rand.bin"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 64)' >> "$T/rand.bin"
csrun sandbox write box --json /tmp/rand.bin < "$T/rand.bin" > "$T/w.json" 2>&1
rc=$?
csrun sandbox read box /tmp/rand.bin > "$T/rand.back" 2>"$T/r.err"
rrc=$?
got=$(jget "$T/w.json" '(j["path"], j["bytes"], j["sandbox"] == "'"$id"'")')
[ $rc = 0 ] && [ $rrc = 0 ] && cmp -s "$T/rand.bin" "$T/rand.back" && [ "$got" = "('/tmp/rand.bin', 1064960, True)" ] \
  && ok "write/read are binary-safe (1 MiB random + every byte value); write --json" \
  || not_ok "binary" "exit $rc/$rrc" "$got" "$(cat "$T/r.err")"

printf 'x' | csrun sandbox write box --mode 0600 secret.txt
printf 'yy' | csrun sandbox write box secret.txt
got=$(sx 'import os; print(oct(os.stat("/work/secret.txt").st_mode & 0o777), open("/work/secret.txt").read())')
[ "$got" = "0o600 yy" ] && ok "write --mode; rewriting keeps the file's mode" || not_ok "--mode" "$got"

out=$(csrun sandbox read box nope/missing.txt 2>&1)
rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "/work/nope/missing.txt: No such file or directory" \
  && ok "read of a missing path: exit 1, one line naming it" || not_ok "missing" "exit $rc" "$out"
out=$(csrun sandbox read box /work 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "/work: Is a directory" && ok "read of a directory: exit 1" || not_ok "read dir" "exit $rc" "$out"
out=$(printf x | csrun sandbox write box a/b 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "Is a directory" && [ "$(csrun sandbox read box a/b/c.txt)" = hello ] \
  && ok "write over a directory: exit 1, the directory untouched" || not_ok "write dir" "exit $rc" "$out"

# ---------------------------------------------------------------- cp round trip
S="$T/src"
mkdir -p "$S/tree/sub/deep" "$S/tree/empty-dir"
head -c 300000 /dev/urandom > "$S/tree/bin.dat"
: > "$S/tree/empty-file"
printf 'deep\n' > "$S/tree/sub/deep/f.txt"
printf 'run\n' > "$S/tree/sub/run.sh"
chmod 0755 "$S/tree/sub/run.sh"
chmod 0600 "$S/tree/sub/deep/f.txt"
chmod 0750 "$S/tree/sub"
echo "host secret" > "$T/hostsecret"
ln -s /etc/passwd "$S/tree/abs-link"
ln -s ../../../hostsecret "$S/tree/sub/rel-out"
ln -s "$T/hostsecret" "$S/tree/host-link"
ln -s bin.dat "$S/tree/in-link"
csrun sandbox cp "$S/tree" box:/work/t > "$T/cp1.out" 2>&1
rc=$?
inside=$(sx "$SUM" /work/t)
[ $rc = 0 ] && [ "$inside" = "$(treesum "$S/tree")" ] \
  && ok "cp into the sandbox: files (binary, empty), nested and empty dirs, modes, symlinks as links" \
  || not_ok "cp in" "exit $rc $(cat "$T/cp1.out")" "$(diff <(echo "$inside") <(treesum "$S/tree"))"
got=$(sx 'import os; print(os.readlink("/work/t/abs-link"), os.path.islink("/work/t/host-link"), open("/work/t/abs-link").read() == open("/etc/passwd").read())')
[ "$got" = "/etc/passwd True True" ] && ! sx 'print(open("/work/t/host-link").read())' | grep -q "host secret" \
  && ok "a symlink pointing outside the tree is a link in the sandbox (it points at the sandbox's /etc/passwd; the host's secret is not there)" \
  || not_ok "links inside" "$got"

csrun sandbox cp box:/work/t "$T/back" > "$T/cp2.out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(treesum "$T/back")" = "$(treesum "$S/tree")" ] && [ -L "$T/back/host-link" ] \
  && [ "$(readlink "$T/back/sub/rel-out")" = ../../../hostsecret ] \
  && ok "cp out of the sandbox: the same tree back (DST missing: it becomes the tree), links as links" \
  || not_ok "cp out" "exit $rc $(cat "$T/cp2.out")" "$(diff <(treesum "$T/back") <(treesum "$S/tree"))"

mkdir "$T/into"
csrun sandbox cp box:/work/t "$T/into" 2>&1 && csrun sandbox cp box:/work/t/bin.dat "$T/into" 2>&1 \
  && csrun sandbox cp "$S/tree/sub/run.sh" box:/work/t/sub/deep/ 2>&1 && csrun sandbox cp box:/work/t/empty-file "$T/into/bin.dat" 2>&1
got=$(sx 'import os; print(oct(os.stat("/work/t/sub/deep/run.sh").st_mode & 0o777))')
[ "$(treesum "$T/into/t")" = "$(treesum "$S/tree")" ] && [ -f "$T/into/bin.dat" ] && [ ! -s "$T/into/bin.dat" ] && [ "$got" = 0o755 ] \
  && ok "cp into an existing directory keeps the name; a file replaces a file; DST/ means into" \
  || not_ok "cp placement" "$(ls -la "$T/into")" "$got"

csrun sandbox cp box:/work/t/. "$T/contents" 2>&1 && csrun sandbox cp "$S/tree/." box:/work/contents 2>&1
[ "$(treesum "$T/contents")" = "$(sx "$SUM" /work/t)" ] && [ "$(sx "$SUM" /work/contents)" = "$(treesum "$S/tree")" ] \
  && ok "SRC/. copies the contents of SRC, both ways" || not_ok "contents" "$(ls -a "$T/contents")"

chmod 4755 "$S/tree/sub/run.sh"
csrun sandbox cp "$S/tree/sub/run.sh" box:/work/suid 2>&1
got=$(sx 'import os; print(oct(os.stat("/work/suid").st_mode & 0o7777))')
[ "$got" = 0o755 ] && ok "set-id bits are dropped" || not_ok "setuid" "$got"
chmod 0755 "$S/tree/sub/run.sh"

csrun sandbox cp --json "$S/tree" box:/work/t2 > "$T/cp.json" 2>&1
got=$(jget "$T/cp.json" '(j["direction"], j["files"], j["dirs"], j["symlinks"], j["bytes"], j["refused"], j["skipped"])')
[ "$got" = "('in', 4, 4, 4, 300009, [], [])" ] && ok "cp --json: what was copied" || not_ok "cp --json" "$got"

out=$(csrun sandbox cp "$T/no-such-dir" box:/work/x 2>&1)
rc=$?
out2=$(csrun sandbox cp box:/work/no-such-dir "$T/nsd" 2>&1)
rc2=$?
[ $rc = 1 ] && [ $rc2 = 1 ] && echo "$out" | grep -q "no-such-dir: No such file or directory" \
  && echo "$out2" | grep -q "^csrun sandbox cp: /work/no-such-dir: No such file or directory$" && [ ! -e "$T/nsd" ] \
  && ok "cp of a missing source, either side: exit 1, one line naming it, nothing made" \
  || not_ok "missing source" "exit $rc/$rc2" "$out" "$out2"

# ---------------------------------------------------------------- tar streams
csrun sandbox cp box:/work/t - > "$T/t.tar" 2>"$T/tar.err"
rc=$?
names=$(tar -tf "$T/t.tar" 2>&1 | sed 's|/$||' | sort | tr '\n' ' ')
[ $rc = 0 ] && [ "$names" = "t t/abs-link t/bin.dat t/empty-dir t/empty-file t/host-link t/in-link t/sub t/sub/deep t/sub/deep/f.txt t/sub/deep/run.sh t/sub/rel-out t/sub/run.sh " ] \
  && ok "cp ID:SRC - writes a tar on stdout (named after SRC)" || not_ok "tar out" "exit $rc $(cat "$T/tar.err")" "$names"
tar -C "$S/tree" -cf - . | csrun sandbox cp - box:/work/fromtar 2>&1
rc=$?
[ $rc = 0 ] && [ "$(sx "$SUM" /work/fromtar)" = "$(treesum "$S/tree")" ] \
  && ok "cp - ID:DST extracts a tar from stdin below DST" || not_ok "tar in" "exit $rc"
tar -C "$S" -czf - tree | csrun sandbox cp - box:/work/gz 2>&1
rc=$?
[ $rc = 0 ] && [ "$(sx "$SUM" /work/gz/tree)" = "$(treesum "$S/tree")" ] \
  && ok "cp - accepts a gzip'ed tar" || not_ok "tar.gz in" "exit $rc"
out=$(echo "not a tar" | csrun sandbox cp - box:/work/junk 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "not a tar archive" && ok "cp - of something that is not a tar: exit 1" || not_ok "junk tar" "exit $rc" "$out"

# ---------------------------------------------------------------- ls, find
csrun sandbox ls box t > "$T/ls.txt" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^-rw-r--r--     300000 [0-9T:-]*Z bin.dat$' "$T/ls.txt" && grep -q '^lrwxrwxrwx .* abs-link -> /etc/passwd$' "$T/ls.txt" \
  && grep -q '^drwxr-x--- .* sub$' "$T/ls.txt" && ! grep -q deep "$T/ls.txt" \
  && ok "ls ID PATH: mode, size, mtime, name, symlink targets; not recursive" || not_ok "ls" "exit $rc" "$(cat "$T/ls.txt")"
csrun sandbox ls box t -R --json > "$T/ls.json" 2>&1
got=$(jget "$T/ls.json" '(j["path"], j["type"], [e["name"] for e in j["entries"]], [(e["type"], e["size"], e["mode"], e.get("target")) for e in j["entries"] if e["name"] in ("sub/deep/f.txt", "abs-link", "sub")], all(e["mtime"].endswith("Z") for e in j["entries"]), j["truncated"])')
want="('/work/t', 'dir', ['abs-link', 'bin.dat', 'empty-dir', 'empty-file', 'host-link', 'in-link', 'sub', 'sub/deep', 'sub/deep/f.txt', 'sub/deep/run.sh', 'sub/rel-out', 'sub/run.sh'], [('symlink', 11, '0777', '/etc/passwd'), ('dir', 4096, '0750', None), ('file', 5, '0600', None)], True, False)"
[ "$got" = "$want" ] && ok "ls -R --json: name, path, type, size, mode, mtime, target" || not_ok "ls -R --json" "$got" "want $want"
csrun sandbox ls box /work/t/bin.dat --json > "$T/ls1.json" 2>&1
got=$(jget "$T/ls1.json" '[(e["name"], e["path"], e["size"]) for e in j["entries"]]')
[ "$got" = "[('bin.dat', '/work/t/bin.dat', 300000)]" ] && ok "ls of a file lists the file" || not_ok "ls file" "$got"
out=$(csrun sandbox ls box /nope 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "^csrun sandbox ls: /nope: No such file or directory$" && ok "ls of a missing path: exit 1" || not_ok "ls missing" "exit $rc" "$out"
csrun sandbox ls box / -R --json > "$T/lsr.json" 2>"$T/lsr.err"
got=$(jget "$T/lsr.json" '(sorted(s["path"] for s in j["skipped"] if s["reason"].startswith("another file system")), any(e["name"].startswith("proc/") for e in j["entries"]), any(e["name"] == "work/t/bin.dat" for e in j["entries"]))')
[ "$got" = "(['dev', 'proc', 'tmp'], False, True)" ] && grep -q "skipped proc: another file system" "$T/lsr.err" \
  && ok "ls -R / stays on the layer's file system: /proc, /dev, /tmp not entered, and said" || not_ok "ls -R /" "$got" "$(head -5 "$T/lsr.err")"
csrun sandbox ls > "$T/lsb.txt" 2>&1
grep -q "^$id  box" "$T/lsb.txt" && ok "ls without an ID still lists the sandboxes" || not_ok "ls sandboxes" "$(cat "$T/lsb.txt")"

out=$(csrun sandbox find box '*.txt' 2>&1 | sort | tr '\n' ' ')
[ "$out" = "/work/a/b/c.txt /work/contents/sub/deep/f.txt /work/fromtar/sub/deep/f.txt /work/gz/tree/sub/deep/f.txt /work/secret.txt /work/t/sub/deep/f.txt /work/t2/sub/deep/f.txt " ] \
  && ok "find ID PATTERN: names matching the glob below the working directory" || not_ok "find" "$out"
out=$(csrun sandbox find box 'sub/*/f.*' /work/t 2>&1)
csrun sandbox find box --json 'run*' /work/t > "$T/find.json" 2>&1
got=$(jget "$T/find.json" '(j["pattern"], sorted((m["path"], m["type"]) for m in j["matches"]))')
[ "$out" = /work/t/sub/deep/f.txt ] && [ "$got" = "('run*', [('/work/t/sub/deep/run.sh', 'file'), ('/work/t/sub/run.sh', 'file')])" ] \
  && ok "find with a '/' matches the path below PATH; find --json" || not_ok "find path/json" "$out" "$got"

# ---------------------------------------------------------------- escapes
sx "
import os
os.symlink('/', '/work/rootlink')
os.symlink('/proc/self/root', '/work/procroot')
os.symlink('$T', '/work/hostdir')
os.symlink('../../../../../../../..$T/hostsecret', '/work/dotdots')
os.makedirs('/work/out/t')
os.symlink('$T/hostsecret', '/work/out/t/to-host')
" >/dev/null
printf 'sandbox-root\n' | csrun sandbox write box /etc-probe 2>/dev/null
n=0
for p in rootlink/etc-probe procroot/etc/passwd hostdir/hostsecret dotdots /proc/self/root/etc/passwd /proc/1/root/etc/passwd; do
  out=$(csrun sandbox read box "$p" 2>&1)
  case "$p:$out" in
    rootlink/*:sandbox-root) n=$((n + 1)) ;;      # the sandbox's own /
    *"host secret"*) diag "$p: $out" ;;
    *) [ -n "$out" ] && n=$((n + 1)) ;;
  esac
done
[ $n = 6 ] && ok "read through symlinks to /, /proc/self/root, host paths, /proc/1/root: the sandbox's own files or an error, never the host's" \
  || not_ok "read escapes" "$n of 6"
out=$(csrun sandbox read box ../../etc/passwd 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "leaves the sandbox's /" && ok "a path whose .. climbs above /: exit 1, named" || not_ok "dotdot path" "exit $rc" "$out"
printf 'evil' | csrun sandbox write box hostdir/evil.txt >/dev/null 2>&1
printf 'evil' | csrun sandbox write box procroot/tmp/evil.txt >/dev/null 2>&1
mkdir -p "$S/tiny" && echo t > "$S/tiny/f"
csrun sandbox cp "$S/tiny" box:/work/hostdir/ >/dev/null 2>&1
[ ! -e "$T/evil.txt" ] && [ ! -e "$T/tiny" ] && [ ! -e /tmp/evil.txt ] \
  && ok "write and cp through symlinks to host paths and /proc/self/root create nothing on the host" \
  || not_ok "write escapes" "$(ls "$T")"

csrun sandbox cp box:/work/out/t "$T/out1" 2>&1
[ -L "$T/out1/to-host" ] && [ "$(readlink "$T/out1/to-host")" = "$T/hostsecret" ] && [ "$(cat "$T/hostsecret")" = "host secret" ] \
  && ok "cp out: a sandbox symlink to a host path arrives as a link (never followed)" || not_ok "link out" "$(ls -la "$T/out1")"
mkdir -p "$T/dst2" "$T/victim"
ln -s "$T/victim" "$T/dst2/t"
out=$(csrun sandbox cp box:/work/t "$T/dst2/" 2>&1)
rc=$?
[ $rc = 1 ] && [ -z "$(ls "$T/victim")" ] && echo "$out" | grep -q "exists and is not a directory" \
  && ok "cp out into a directory where a symlink stands for the tree: refused, nothing written through it" \
  || not_ok "host symlink" "exit $rc" "$out" "$(ls "$T/victim")"

python3 - "$T/evil.tar" <<'EOF'
import io, sys, tarfile
def add(t, name, data=b"x", **kw):
    ti = tarfile.TarInfo(name)
    for k, v in kw.items():
        setattr(ti, k, v)
    if ti.type == tarfile.REGTYPE:
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
    else:
        t.addfile(ti)
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    add(t, "ok.txt", b"fine")
    add(t, "../x-dotdot", b"bad")
    add(t, "a/../../x-dotdot2", b"bad")
    add(t, "/x-abs", b"bad")
    add(t, "passwd-link", type=tarfile.LNKTYPE, linkname="/etc/passwd")
    add(t, "passwd-link2", type=tarfile.LNKTYPE, linkname="../../etc/passwd")
    add(t, "passwd-link3", type=tarfile.LNKTYPE, linkname="etc/passwd")
    add(t, "good-link", type=tarfile.LNKTYPE, linkname="ok.txt")
    add(t, "null", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
    add(t, "disk", type=tarfile.BLKTYPE, devmajor=8, devminor=0)
    add(t, "fifo", type=tarfile.FIFOTYPE)
    add(t, "up", type=tarfile.SYMTYPE, linkname="/")
    add(t, "up/etc/x-through", b"bad")
    add(t, "setuid", b"#!/bin/sh\n", mode=0o6755)
EOF
csrun sandbox cp - box:/work/evil < "$T/evil.tar" > "$T/evil.out" 2>&1
rc=$?
got=$(sx '
import os
print(sorted(os.listdir("/work/evil")), oct(os.stat("/work/evil/setuid").st_mode & 0o7777), os.stat("/work/evil/good-link").st_nlink)
print([p for p in ("/work/x-dotdot", "/x-dotdot", "/x-dotdot2", "/work/x-dotdot2", "/x-abs", "/etc/x-through") if os.path.lexists(p)])')
want="['good-link', 'ok.txt', 'setuid', 'up'] 0o755 2
[]"
nref=$(grep -c "refused" "$T/evil.out")
[ $rc = 1 ] && [ "$got" = "$want" ] && [ "$nref" = 11 ] && grep -q "passwd-link: a hardlink whose target leaves" "$T/evil.out" \
  && grep -q "null: a device node" "$T/evil.out" && grep -q "x-through: goes through a symbolic link" "$T/evil.out" \
  && ok "a crafted tar: ../, absolute names, hardlinks to /etc/passwd, devices, a fifo, a path through a symlink: each refused and named (exit 1), the rest extracted, set-id dropped" \
  || not_ok "crafted tar" "exit $rc" "$got" "$(cat "$T/evil.out")"
[ ! -e "$T/x-dotdot" ] && [ ! -e /x-abs ] && ok "nothing of it reached the host" || not_ok "host touched"
csrun sandbox cp --json - box:/work/evil2 < "$T/evil.tar" > "$T/evil.json" 2>/dev/null
got=$(jget "$T/evil.json" '(len(j["refused"]), j["files"], j["hardlinks"])')
[ "$got" = "(10, 2, 1)" ] && ok "cp --json lists the refused entries" || not_ok "refused json" "$got"

# ---------------------------------------------------------------- caps, space
printf 'old' | csrun sandbox write box capped.txt
out=$(head -c 3000 /dev/zero | csrun sandbox write box --max-size 2k capped.txt 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "more than 2048 bytes (--max-size)" && [ "$(csrun sandbox read box capped.txt)" = old ] \
  && ok "write over --max-size: exit 1, the old file left whole" || not_ok "write cap" "exit $rc" "$out"
out=$(csrun sandbox cp --max-size 100k "$S/tree" box:/work/capped 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "more than 102400 bytes (--max-size)" && ok "cp in over --max-size: exit 1" || not_ok "cp cap in" "exit $rc" "$out"
out=$(csrun sandbox cp --max-size 100k box:/work/t "$T/capped" 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "more than 102400 bytes (--max-size)" && ok "cp out over --max-size: exit 1" || not_ok "cp cap out" "exit $rc" "$out"
out=$(csrun sandbox read box --max-size 1k /work/t/bin.dat 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "more than 1024 (--max-size)" && ok "read over --max-size: exit 1 before any byte" || not_ok "read cap" "exit $rc" "$out"
out=$(csrun sandbox cp --max-entries 5 "$S/tree" box:/work/capped2 2>&1)
rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "more than 5 entries (--max-entries)" && ok "cp over --max-entries: exit 1" || not_ok "entries cap" "exit $rc" "$out"
csrun sandbox ls box --json -R --max-entries 3 t > "$T/lst.json" 2>"$T/lst.err"
got=$(jget "$T/lst.json" '(len(j["entries"]), j["truncated"])')
[ "$got" = "(3, True)" ] && grep -q "stopped after 3 entries" "$T/lst.err" \
  && ok "ls --max-entries: a listing marked truncated (and said)" || not_ok "ls truncated" "$got" "$(cat "$T/lst.err")"

# /tmp in a sandbox is a 256 MiB tmpfs: a real ENOSPC.
out=$(head -c 300M /dev/zero | csrun sandbox write box /tmp/big 2>&1)
rc=$?
left=$(sx 'import os; print(sorted(os.listdir("/tmp")))')
[ $rc = 1 ] && echo "$out" | grep -q "No space left on device" && [ "$left" = "['rand.bin']" ] \
  && ok "write out of space: exit 1, no partial or temporary file" || not_ok "ENOSPC write" "exit $rc" "$out" "$left"
mkdir -p "$T/bigdir" && truncate -s 300M "$T/bigdir/big"
out=$(csrun sandbox cp "$T/bigdir" box:/tmp/ 2>&1)
rc=$?
left=$(sx 'import os; print(sorted(os.listdir("/tmp")), os.listdir("/tmp/bigdir") if os.path.isdir("/tmp/bigdir") else None)')
[ $rc = 1 ] && echo "$out" | grep -q "No space left on device" && [ "$left" = "['bigdir', 'rand.bin'] []" ] \
  && ok "cp out of space: exit 1, no partial file" || not_ok "ENOSPC cp" "exit $rc" "$out" "$left"

# ---------------------------------------------------------------- concurrency, interruption, idleness
head -c 200000 /dev/urandom > "$T/conc.bin"
csrun sandbox write box conc/src.bin < "$T/conc.bin"
for i in $(seq 6); do csrun sandbox write box "conc/w$i.bin" < "$T/conc.bin" > "$T/cc.w$i" 2>&1 & done
for i in $(seq 5); do csrun sandbox read box conc/src.bin > "$T/cc.r$i" 2>"$T/cc.re$i" & done
for i in $(seq 5); do csrun sandbox cp "$S/tree" "box:/work/conc/c$i" > "$T/cc.c$i" 2>&1 & done
wait
n=0
for i in $(seq 6); do [ "$(csrun sandbox read box "conc/w$i.bin" | sha256sum)" = "$(sha256sum < "$T/conc.bin")" ] && n=$((n + 1)); done
for i in $(seq 5); do cmp -s "$T/cc.r$i" "$T/conc.bin" && n=$((n + 1)); done
for i in $(seq 5); do [ "$(sx "$SUM" "/work/conc/c$i")" = "$(treesum "$S/tree")" ] && n=$((n + 1)); done
[ $n = 16 ] && ok "16 concurrent file operations on one sandbox (6 write, 5 read, 5 cp)" \
  || not_ok "concurrency: $n of 16" "$(cat "$T"/cc.w* "$T"/cc.re* "$T"/cc.c* | head -20)"

mkfifo "$T/fifo"
"$CSRUN" sandbox write box /work/partial.bin < "$T/fifo" > /dev/null 2>&1 &
cpid=$!
exec 7> "$T/fifo"
head -c 100000 /dev/zero >&7
sleep 0.5
kill -KILL $cpid
wait $cpid 2>/dev/null
no_tmp () { [ "$(sx 'import os; print([n for n in os.listdir("/work") if n.startswith(".csrun-tmp") or n == "partial.bin"])')" = "[]" ]; }
wait_until 10 no_tmp
res=$?
exec 7>&-
[ $res = 0 ] && [ "$(csrun sandbox read box secret.txt)" = yy ] \
  && ok "a client killed in the middle of a write: its worker goes, no partial or temporary file, the sandbox works" \
  || not_ok "interrupted" "$(sx 'import os; print(os.listdir("/work"))')"

id2=$(csrun sandbox create --idle-timeout 2s 2>/dev/null)
(for i in 1 2 3 4 5; do echo "line $i"; sleep 1; done) | csrun sandbox write "$id2" /work/slow.txt 2>"$T/slow.err"
rc=$?
out=$(csrun sandbox read "$id2" /work/slow.txt 2>&1 | wc -l)
[ $rc = 0 ] && [ "$out" = 5 ] && ok "a file operation longer than the idle timeout keeps the sandbox (k->n_busy)" \
  || not_ok "busy" "exit $rc $(cat "$T/slow.err")" "$out"
csrun sandbox rm --force "$id2" >/dev/null 2>&1

# ---------------------------------------------------------------- stopped, unknown, usage
csrun sandbox stop box >/dev/null 2>&1
n=0
for cmd in "read box secret.txt" "ls box" "find box x" "cp box:/work/t $T/st" "cp $S/tiny box:/work/st"; do
  out=$(csrun sandbox $cmd 2>&1 </dev/null)
  rc=$?
  [ $rc = 1 ] && echo "$out" | grep -q "the sandbox is stopped" && n=$((n + 1))
done
out=$(printf x | csrun sandbox write box w.txt 2>&1)
[ $? = 1 ] && echo "$out" | grep -q "stopped" && n=$((n + 1))
csrun sandbox start box >/dev/null 2>&1
[ $n = 6 ] && [ "$(csrun sandbox read box secret.txt 2>&1)" = yy ] \
  && ok "a stopped sandbox: read, write, ls, find, cp both ways refused (exit 1); after start the files are there" \
  || not_ok "stopped: $n of 6"

out=$(csrun sandbox read nosuchbox x 2>&1)
rc=$?
out2=$(csrun sandbox cp "$S/tiny" nosuchbox:/work 2>&1)
rc2=$?
[ $rc = 2 ] && [ $rc2 = 2 ] && echo "$out" | grep -q "no such sandbox: 'nosuchbox'" \
  && ok "an unknown id: exit 2" || not_ok "unknown" "exit $rc/$rc2" "$out" "$out2"
n=0
for args in "cp a b" "cp box:a box:b" "cp --max-size 0 a box:b" "read box" "write box --mode 8 x" "find box" "ls -R"; do
  csrun sandbox $args >/dev/null 2>&1 </dev/null
  [ $? = 2 ] && n=$((n + 1))
done
[ $n = 7 ] && ok "usage errors: exit 2" || not_ok "usage: $n of 7"

done_testing
