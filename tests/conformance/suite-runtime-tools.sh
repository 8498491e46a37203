#!/bin/bash
# Run opencontainers/runtime-tools' validation suite (commit 0105384, built by
# prepare-runtime-tools.sh) against an OCI runtime.
#
#   suite-runtime-tools.sh --runtime BIN --suites DIR --results FILE [NAME...]
#
# NAME is a validation file: "validation/hostname.t", "hostname.t", "hostname" or
# "validation/hostname/hostname.t"; without NAME all of DIR/runtime-tools/validation/*/*.t
# run, one after the other, each as RUNTIME=BIN from the source directory (the tests
# read rootfs-amd64.tar.gz and runtimetest from there), bounded by
# $CSRUN_CONFORMANCE_TIMEOUT seconds (default 120; a hung file is killed and counts
# as "fail<TAB>validation/X.t<TAB>timeout").
#
# A file passes when it exits 0 and prints no "not ok" anywhere (the inner
# runtimetest's TAP included).  A passing file that ran no test ("1..0") is still
# "pass", with DETAIL "vacuous (1..0)": count those apart (some of them print an
# "error" diagnostic instead of "not ok"; DETAIL shows it).  FILE gets one line per
# file: STATUS<TAB>validation/X.t<TAB>DETAIL; FILE.d/X.log holds each file's output.
#
# Needs root (the suite creates root containers).  It re-executes itself under
# `unshare -m --propagation private`.  When the runtime is crun and the host is a
# cgroup v1/v2 hybrid whose v2 hierarchy has controllers, an empty file is
# bind-mounted over /sys/fs/cgroup/unified/cgroup.controllers in that private mount
# namespace only (crun refuses such hosts outright, "cgroups in hybrid mode not
# supported"); the host's files are never written.  XDG_RUNTIME_DIR points to a
# private directory (csrun's and crun's state root; runc as root ignores it).
# Containers a killed file left behind are deleted with BIN delete --force, and
# the empty cgroups its containers left (runtimes remove the leaf of a cgroupsPath,
# not the parents they made) with rmdir; the log says so.  Bundles live in a
# private TMPDIR (a tmpfs per file) removed at the end.
#
# Exit status: 0 when the suite ran (whatever the results), 2 when it cannot run
# here (no source, not built, not root, missing tool: stderr says which, one line).
set -uo pipefail

me=suite-runtime-tools.sh
usage () {
  echo "usage: $0 --runtime BIN --suites DIR --results FILE [NAME...]" >&2
  exit 2
}

runtime=
suites=
results=
names=()
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=${2:-}; shift 2 || usage ;;
    --suites) suites=${2:-}; shift 2 || usage ;;
    --results) results=${2:-}; shift 2 || usage ;;
    -h | --help) sed -n '2,/^set -uo/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    --*) usage ;;
    *) names+=("$1"); shift ;;
  esac
done
[ -n "$runtime" ] && [ -n "$suites" ] && [ -n "$results" ] || usage

src=$suites/runtime-tools
if [ ! -d "$src/validation" ]; then
  echo "$me: runtime-tools source not present: $src (set CSRUN_RUNTIME_TOOLS_SRC and run tests/conformance/prepare-runtime-tools.sh $suites)" >&2
  exit 2
fi
if [ ! -x "$src/runtimetest" ] || [ ! -f "$src/rootfs-amd64.tar.gz" ]; then
  echo "$me: runtime-tools not built: $src/runtimetest missing (run tests/conformance/prepare-runtime-tools.sh $suites)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "$me: runtime-tools validation needs root" >&2
  exit 2
fi
ME=$me
. "$(dirname "$0")/suite-lib.sh"
suite_need_tools timeout unshare tar
suite_resolve_paths

# The files to run, as paths relative to $src.
selected=()
if [ ${#names[@]} -eq 0 ]; then
  for f in "$src"/validation/*/*.t; do
    [ -x "$f" ] && selected+=("${f#"$src"/}")
  done
else
  for n in "${names[@]}"; do
    base=${n#validation/}
    base=${base%.t}
    base=${base%%/*}
    if [ ! -x "$src/validation/$base/$base.t" ]; then
      echo "$me: no such validation file (or not built): $n" >&2
      exit 2
    fi
    selected+=("validation/$base/$base.t")
  done
fi
if [ ${#selected[@]} -eq 0 ]; then
  echo "$me: no validation executables in $src/validation (run prepare-runtime-tools.sh)" >&2
  exit 2
fi

if [ -z "${CSRUN_SUITE_RT_NS:-}" ]; then
  export CSRUN_SUITE_RT_NS=1
  exec unshare -m --propagation private "$0" --runtime "$runtime" --suites "$suites" \
    --results "$results" "${selected[@]}"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/suite-rt.XXXXXX") && chmod 0755 "$work" || exit 2
private_null=
trap 'umount -l "$work/tmp" 2>/dev/null; [ -z "$private_null" ] || umount -l /dev/null; umount -l "$work/dev" 2>/dev/null; rm -rf --one-file-system "$work"' EXIT
# Host safety: runtimes change their stdio (crun 1.8.1 fchown()s its stdin to the
# container's user), so no test gets the host's /dev/null: stdin is an empty pipe,
# and in this private mount namespace /dev/null is a private node of our own tmpfs.
mkdir "$work/dev" && mount -t tmpfs -o mode=0755,size=16k csrun-suite-null "$work/dev" \
  && mknod -m 0666 "$work/dev/null" c 1 3 && mount --bind "$work/dev/null" /dev/null && private_null=1 \
  || { echo "$me: cannot put a private /dev/null in place" >&2; exit 2; }
rtversion=$("$runtime" --version 2>/dev/null | head -n 1)
if [ "${rtversion#crun version}" != "$rtversion" ] \
  && [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] \
  && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
  : > "$work/empty"
  mount --bind "$work/empty" /sys/fs/cgroup/unified/cgroup.controllers \
    || echo "$me: warning: cannot mask unified/cgroup.controllers; crun refuses this hybrid host" >&2
fi

# A private XDG_RUNTIME_DIR: csrun (and crun) keep their state root there, so the
# run neither sees nor disturbs containers of other users of /run/csrun (nor reuses
# a seccomp program another csrun build cached there); runc as root ignores it.
mkdir -m 0700 "$work/run" || exit 2
export XDG_RUNTIME_DIR=$work/run

timeout_s=${CSRUN_CONFORMANCE_TIMEOUT:-120}
logdir=$results.d
rm -rf "$logdir"
mkdir -p "$logdir" || exit 2
: > "$results" || exit 2

# The cgroup directories of the suite's cgroupsPath values ("/cgrouptest" and
# "testdir/cgrouptest/container": runtimes remove the leaf, not the parents they
# made for it).  Only those names: other users' cgroups are never touched.
cgroup_dirs () {
  find /sys/fs/cgroup -mindepth 1 -type d \( -name cgrouptest -o -name testdir -o -path '*/testdir/cgrouptest/*' \) \
    2>/dev/null | sort
}

list_ids () {
  timeout 20 "$runtime" list 2>/dev/null | awk 'NR > 1 && $1 != "" { print $1 }' | sort
}

for f in "${selected[@]}"; do
  base=$(basename "$f" .t)
  name=validation/$base.t
  log=$logdir/$base.log
  # The bundles go to a tmpfs of their own: a config without a mount namespace has
  # the runtime mount proc, sysfs, ... into the bundle in this namespace, and
  # detaching the tmpfs drops all of that at once (never rm -r across a mount).
  # Mode 1777 like /tmp: in the user-namespace tests the container's root must reach
  # the bundle.
  mkdir -p "$work/tmp" && mount -t tmpfs -o mode=1777 csrun-suite-rt "$work/tmp" || exit 2
  before=$(list_ids)
  cg_before=$(cgroup_dirs)
  rc=0
  : | (cd "$src" && exec env RUNTIME="$runtime" TMPDIR="$work/tmp" \
    timeout -k 10 "$timeout_s" "./$f") > "$log" 2>&1 || rc=$?
  # Containers the file left (killed, or its cleanup failed): delete them.
  for id in $(comm -13 <(printf '%s\n' "$before") <(list_ids)); do
    echo "# $me: deleting the container $id the file left" >> "$log"
    timeout 20 "$runtime" delete --force "$id" >> "$log" 2>&1
  done
  umount -l "$work/tmp" && rmdir "$work/tmp" || exit 2
  # Empty cgroups the file's containers left: remove them, deepest first
  # (rmdir refuses a cgroup with processes or children, so nothing else goes).
  while IFS= read -r d; do
    [ -n "$d" ] && rmdir "$d" 2>/dev/null && echo "# $me: removed the cgroup $d the file left" >> "$log"
  done < <(comm -13 <(printf '%s\n' "$cg_before") <(cgroup_dirs) | sort -r)
  nnotok=$(grep -o 'not ok' "$log" | wc -l)
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    status=fail detail="timeout (${timeout_s}s)"
  elif [ "$rc" = 0 ] && [ "$nnotok" = 0 ]; then
    status=pass detail=
    if grep -q '^1\.\.0$' "$log" && ! grep -q '^ok ' "$log"; then
      # Some files (the hooks ones) report a failure only as a YAML "error"
      # diagnostic, never as "not ok": show it, the issue's rule still says pass.
      diag=$(grep -m1 '^ *"error": ' "$log" | sed 's/^ *"error": "//; s/\\n.*//; s/",\{0,1\}$//' | cut -c1-160)
      detail="vacuous (1..0)"
      [ -z "$diag" ] || detail="$detail; error diagnostic: $diag"
    fi
  else
    status=fail
    first=$(grep -m1 '^not ok' "$log" | tr '\t' ' ' | cut -c1-120)
    # The first message that is not TAP: usually the runtime's error.
    msg=$(grep -v -E '^( |TAP version|ok |not ok|1\.\.|#|Refer to:|failed to create the container$|exit status [0-9]+$|$)' "$log" \
      | head -n 1 | tr '\t' ' ' | cut -c1-200)
    if [ -n "$first" ]; then
      detail="$nnotok not ok, first: $first"
    else
      detail="exit $rc"
    fi
    [ -z "$msg" ] || detail="$detail; $msg"
    [ -n "$first" ] && [ "$rc" != 0 ] && detail="$detail (exit $rc)"
  fi
  printf '%s\t%s\t%s\n' "$status" "$name" "$detail" >> "$results"
done
exit 0
