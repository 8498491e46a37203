#!/bin/bash
# tests/integration/rootfs-builder.sh — csrun-rootfs-builder: its outputs,
# reproducibility, the tarball rules csrun's unpacker enforces, and its errors.
#
# The tarball under test is $CSRUN_TEST_ROOTFS (built by `make`).  The
# debootstrap build takes minutes and needs root and the network: it runs only
# with CSRUN_DEBOOTSTRAP_TEST=1.

# make check runs this file with $(SHELL), which may be dash.
if [ -z "${BASH_VERSION:-}" ]; then
  exec bash "$0" "$@"
fi

# shellcheck source=SCRIPTDIR/../lib/tap.sh
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

BUILDER=$CSRUN_SRCDIR/rootfs-builder/csrun-rootfs-builder
ROOTFS=$CSRUN_TEST_ROOTFS

# One scratch directory, removed at exit with the others tap.sh made.
SCRATCH=$(tmpdir)
SCRATCH_N=0

# scratch_dir: a new empty directory under $SCRATCH, in $REPLY.
scratch_dir () {
  SCRATCH_N=$((SCRATCH_N + 1))
  REPLY=$SCRATCH/$SCRATCH_N
  mkdir -- "$REPLY"
}

# tar_flag FILE: the tar option that reads FILE's compression.
tar_flag () {
  case $1 in
    *.xz | *.txz) echo --xz ;;
    *) echo --zstd ;;
  esac
}

# check_outputs TARBALL: the digest file and the manifest agree with the
# tarball.  Prints the problems, fails if there are any.
check_outputs () {
  local tarball=$1 base digest line
  base=$(basename -- "$tarball")
  [ -f "$tarball" ] || { echo "$tarball is missing"; return 1; }
  [ -f "$tarball.sha256" ] || { echo "$tarball.sha256 is missing"; return 1; }
  [ -f "$tarball.manifest.json" ] || { echo "$tarball.manifest.json is missing"; return 1; }
  digest=$(sha256sum <"$tarball") && digest=${digest%% *}
  line=$(cat -- "$tarball.sha256")
  [ "$line" = "$digest  $base" ] || { echo "$tarball.sha256 says '$line', expected '$digest  $base'"; return 1; }
  python3 - "$tarball.manifest.json" "$digest" "$(stat -c %s -- "$tarball")" "$base" <<'EOF'
import json, sys
path, digest, size, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    m = json.load(open(path))
except ValueError as e:
    sys.exit("%s is not valid JSON: %s" % (path, e))
problems = []
def want(key, kind):
    if not isinstance(m.get(key), kind) or isinstance(m.get(key), bool):
        problems.append("%s: %r is not a %s" % (key, m.get(key), kind.__name__))
        return False
    return True
for key, kind in [("python_version", str), ("source", str), ("extra_packages", list),
                  ("file_count", int), ("uncompressed_size", int), ("compressed_size", int),
                  ("sha256", str), ("compression", str), ("file", str)]:
    want(key, kind)
if not problems:
    if m["sha256"] != digest:
        problems.append("sha256 %s, the tarball's is %s" % (m["sha256"], digest))
    if m["compressed_size"] != size:
        problems.append("compressed_size %d, the tarball has %d bytes" % (m["compressed_size"], size))
    if m["file"] != base:
        problems.append("file %r, expected %r" % (m["file"], base))
    if not m["python_version"].startswith("3."):
        problems.append("python_version %r" % m["python_version"])
    if not m["source"].startswith(("host:/", "debootstrap:")):
        problems.append("source %r" % m["source"])
    if m["file_count"] <= 0 or m["uncompressed_size"] <= m["compressed_size"]:
        problems.append("file_count %d, uncompressed_size %d" % (m["file_count"], m["uncompressed_size"]))
    if not all(isinstance(p, str) for p in m["extra_packages"]):
        problems.append("extra_packages %r" % m["extra_packages"])
if problems:
    sys.exit("; ".join(problems))
EOF
}

# check_entries TARBALL: the rules csrun's unpacker enforces, on the listing.
check_entries () {
  local tarball=$1 flag listing names bad
  flag=$(tar_flag "$tarball")
  listing=$(tar "$flag" -tvf "$tarball" --numeric-owner --utc) || { echo "tar cannot list $tarball"; return 1; }
  names=$(tar "$flag" -tf "$tarball") || return 1
  bad=$(grep -E '^/' <<<"$names" | head -n 3)
  [ -z "$bad" ] || { echo "absolute paths: $bad"; return 1; }
  bad=$(grep -E '(^|/)\.\.(/|$)' <<<"$names" | head -n 3)
  [ -z "$bad" ] || { echo "paths with '..': $bad"; return 1; }
  bad=$(awk '$1 !~ /^[-dlh]/' <<<"$listing" | head -n 3)
  [ -z "$bad" ] || { echo "device, FIFO or other special entries: $bad"; return 1; }
  bad=$(awk 'substr($1, 4, 1) ~ /[sS]/ || substr($1, 7, 1) ~ /[sS]/' <<<"$listing" | head -n 3)
  [ -z "$bad" ] || { echo "setuid/setgid entries: $bad"; return 1; }
  bad=$(awk '$2 != "0/0"' <<<"$listing" | head -n 3)
  [ -z "$bad" ] || { echo "entries not owned by 0/0: $bad"; return 1; }
  bad=$(awk '{ print $4, $5 }' <<<"$listing" | sort -u | wc -l)
  [ "$bad" = 1 ] || { echo "entries have $bad different modification times"; return 1; }
  # csrun refuses an entry below a symlink of the archive.
  bad=$(awk 'NR == FNR { if ($1 ~ /^l/) link[$6] = 1; next }
    { n = split($0, part, "/"); prefix = part[1]
      for (i = 1; i < n; i++) {
        if (i > 1) prefix = prefix "/" part[i]
        if (prefix in link) { print; break }
      } }' <(printf '%s\n' "$listing") <(printf '%s\n' "$names") | head -n 3)
  [ -z "$bad" ] || { echo "entries below a symlink: $bad"; return 1; }
}

# check_contents TARBALL: the interpreter and precompiled modules are there.
check_contents () {
  local names
  names=$(tar "$(tar_flag "$1")" -tf "$1") || return 1
  grep -qx 'usr/bin/python3' <<<"$names" || { echo "no usr/bin/python3"; return 1; }
  grep -qE '^usr/lib/python3\.[0-9]+/__pycache__/os\.cpython-[0-9]+\.pyc$' <<<"$names" ||
    { echo "no precompiled os module"; return 1; }
  grep -qE '^usr/lib/python3\.[0-9]+/lib-dynload/_ssl\.' <<<"$names" || { echo "no _ssl module"; return 1; }
}

# ---------------------------------------------------------------- 1. outputs

if [ -f "$ROOTFS" ]; then
  check "the .sha256 and .manifest.json next to $(basename -- "$ROOTFS") agree with it" \
    check_outputs "$ROOTFS"
  check "the tarball holds python3, precompiled modules and lib-dynload" check_contents "$ROOTFS"
else
  not_ok "the test rootfs exists" "$ROOTFS is missing: run make first"
fi

# ---------------------------------------------------------------- 2. reproducible

source_=$(json_get "$ROOTFS.manifest.json" 'j["source"]' 2>/dev/null || true)
case $source_ in
  host:/*)
    scratch_dir
    again=$REPLY/$(basename -- "$ROOTFS")
    started=$(date +%s)
    if out=$("$BUILDER" --python "${source_#host:}" --output "$again" 2>&1); then
      diag "rebuilt $(basename -- "$ROOTFS") in $(($(date +%s) - started)) s"
      if cmp -s -- "$ROOTFS" "$again" && cmp -s -- "$ROOTFS.manifest.json" "$again.manifest.json"; then
        ok "a second build with --python ${source_#host:} is byte-identical"
      else
        not_ok "a second build with --python ${source_#host:} is byte-identical" \
          "first:  $(cat -- "$ROOTFS.sha256")" "second: $(cat -- "$again.sha256")"
      fi
      check "the second build's outputs agree with each other" check_outputs "$again"
    else
      not_ok "a second build with --python ${source_#host:} succeeds" "$out"
    fi
    ;;
  debootstrap:*)
    skip "a second build is byte-identical" "the test rootfs comes from debootstrap"
    ;;
  *)
    not_ok "the manifest names the source" "source: '$source_'"
    ;;
esac

# ---------------------------------------------------------------- 3. tarball rules

if [ -f "$ROOTFS" ]; then
  check "no absolute paths, '..', special files, setuid/setgid bits or entries below symlinks" \
    check_entries "$ROOTFS"
fi

# ---------------------------------------------------------------- 4. usage errors

# expect_error DESC STATUS PATTERN ARGS...: the builder exits with STATUS,
# prints one line on stderr matching PATTERN and writes no output.
expect_error () {
  local desc=$1 want=$2 pattern=$3 dir status=0 err
  shift 3
  scratch_dir
  dir=$REPLY
  "$BUILDER" --output "$dir/out.tar.zst" "$@" >"$dir/stdout" 2>"$dir/stderr" || status=$?
  err=$(cat -- "$dir/stderr")
  if [ "$status" != "$want" ]; then
    not_ok "$desc" "exit status $status, expected $want" "$err"
  elif [ "$(wc -l <"$dir/stderr")" != 1 ] || ! grep -qE "^csrun-rootfs-builder: .*$pattern" "$dir/stderr"; then
    not_ok "$desc" "expected one line matching '$pattern' on stderr, got:" "$err"
  elif [ -n "$(find "$dir" -mindepth 1 ! -name stdout ! -name stderr -print -quit)" ]; then
    not_ok "$desc" "it left files behind: $(ls -A -- "$dir")"
  else
    ok "$desc"
  fi
}

expect_error "an unknown option is a usage error (status 2, one line)" 2 "unknown option" --no-such-option
expect_error "--with without --debootstrap is a usage error" 2 "needs --debootstrap" --with python3-numpy
expect_error "--python /nonexistent fails with status 1 and says why" 1 "/nonexistent.*no such file" \
  --python /nonexistent
# shellcheck disable=SC2016 # $1 is expanded by the inner shell
check "--help prints the usage" sh -c '"$1" --help | grep -q -- --debootstrap' sh "$BUILDER"

# ---------------------------------------------------------------- 5. debootstrap

if ! is_root; then
  expect_error "--debootstrap without root says it needs root" 1 "--debootstrap needs root" --debootstrap
elif command -v setpriv >/dev/null 2>&1; then
  # As root, check the message by running a copy of the builder as nobody.
  scratch_dir
  dir=$REPLY
  chmod 0755 "$SCRATCH" "$dir"
  cp -- "$BUILDER" "$dir/builder"
  status=0
  err=$(cd "$dir" && setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$dir/builder" --debootstrap --output "$dir/x.tar.zst" 2>&1) || status=$?
  if [ "$status" = 1 ] && grep -q -- "--debootstrap needs root" <<<"$err"; then
    ok "--debootstrap as an unprivileged user says it needs root"
  else
    not_ok "--debootstrap as an unprivileged user says it needs root" "status $status" "$err"
  fi
fi

if [ "${CSRUN_DEBOOTSTRAP_TEST:-0}" != 1 ]; then
  diag "the debootstrap build was not requested (set CSRUN_DEBOOTSTRAP_TEST=1, as root, to run it)"
elif ! is_root; then
  skip "debootstrap build with python3-numpy" "CSRUN_DEBOOTSTRAP_TEST=1 needs root"
elif ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
  skip "debootstrap build with python3-numpy" "debootstrap is not installed"
else
  scratch_dir
  dir=$REPLY
  deb=$dir/deb-rootfs.tar.zst
  started=$(date +%s)
  if out=$("$BUILDER" --debootstrap --with python3-numpy --output "$deb" 2>&1); then
    diag "debootstrap build took $(($(date +%s) - started)) s, $(stat -c %s -- "$deb") bytes"
    ok "debootstrap build with python3-numpy"
    check "its .sha256 and .manifest.json agree with it" check_outputs "$deb"
    check "its manifest says debootstrap:bookworm with python3-numpy" \
      python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))
assert m["source"] == "debootstrap:bookworm" and m["extra_packages"] == ["python3-numpy"], m' \
      "$deb.manifest.json"
    check "it follows the tarball rules (no device nodes...)" check_entries "$deb"
    printf 'import numpy\nprint(int(numpy.arange(4).sum()))\n' > "$dir/np.py"
    out=$(CSRUN_CACHE_DIR="$dir/cache" "$CSRUN" run --rootfs "$deb" "$dir/np.py" 2>&1)
    [ "$out" = 6 ] && ok "csrun runs numpy from the debootstrap rootfs" || not_ok "numpy in csrun" "$out"
    printf 'print(int(np.arange(5).sum()))\n' > "$dir/np-alias.py"
    out=$(CSRUN_CACHE_DIR="$dir/cache" "$CSRUN" run --rootfs "$deb" "$dir/np-alias.py" 2>&1)
    [ "$out" = "$(printf '10\ncsrun run: healed after 2 attempts (missing-import); --json shows the patch')" ] \
      && ok "np heals to 'import numpy as np' when the rootfs has numpy" || not_ok "np alias heal" "$out"
  else
    not_ok "debootstrap build with python3-numpy" "$out"
  fi
fi

done_testing
