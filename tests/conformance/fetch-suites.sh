#!/bin/bash
# Obtain and build the OCI conformance suites run by tests/conformance/run.sh:
#
#   fetch-suites.sh [--install] DIR
#
# crun 1.8.1's and runc 1.1.5's tests come from their Debian (bookworm) source
# packages, downloaded through a private apt directory DIR/apt (its own
# sources.list with deb-src lines for bookworm, bookworm-updates and
# bookworm-security, its own lists and archives; the system's apt sources are
# neither read nor changed), with `apt-get source --download-only crun runc`, and
# unpacked with dpkg-source -x to DIR/crun-1.8.1 and DIR/runc-1.1.5.  Then it runs
# prepare-crun.sh, prepare-runc.sh and, when opencontainers/runtime-tools' source is
# on the machine (DIR/runtime-tools, or $CSRUN_RUNTIME_TOOLS_SRC: a checkout or git
# dir; it is not in Debian's archive), prepare-runtime-tools.sh.
#
# Idempotent: a source tree already unpacked is reused (not downloaded again).  DIR
# and what is in it must be owned by root (or the caller) and not writable by group
# or others: the suites run their binaries as root.  --install installs the Debian
# packages the suites need first (dpkg-dev for dpkg-source, and each prepare
# script's own list); CI uses it.
#
# Exit status: 0 the suites are ready, 1 a step failed, 2 usage, or a tool or the
# archive is missing (stderr says which).
set -uo pipefail
me=fetch-suites.sh
here=$(cd "$(dirname "$0")" && pwd)

install=
if [ "${1:-}" = --install ]; then
  install=--install
  shift
fi
if [ $# -ne 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 [--install] DIR" >&2
  exit 2
fi
dir=$1
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac

crun_version=1.8.1
runc_version=1.1.5

if [ -n "$install" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends dpkg-dev xz-utils ca-certificates >/dev/null \
    || { echo "$me: cannot install dpkg-dev xz-utils" >&2; exit 2; }
fi
for tool in apt-get dpkg-source; do
  command -v "$tool" >/dev/null || { echo "$me: $tool not installed (apt-get install dpkg-dev, or --install)" >&2; exit 2; }
done

# DIR must be ours: owned by us or root, not writable by group or others.
trusted () {
  local owner mode
  owner=$(stat -c %u "$1") || return 1
  mode=$(stat -c %a "$1") || return 1
  { [ "$owner" = "$(id -u)" ] || [ "$owner" = 0 ]; } && [ $((0$mode & 022)) = 0 ]
}
[ -d "$dir" ] || mkdir -m 0755 "$dir" || exit 1
if ! trusted "$dir"; then
  echo "$me: $dir is not owned by us or root, or is writable by group/others: refusing to build there" >&2
  exit 1
fi

have_crun () { [ -f "$dir/crun-$crun_version/tests/tests_utils.py" ]; }
have_runc () { [ -d "$dir/runc-$runc_version/tests/integration" ]; }

if ! have_crun || ! have_runc; then
  apt=$dir/apt
  mkdir -p "$apt/etc/sources.list.d" "$apt/etc/preferences.d" "$apt/lists/partial" \
    "$apt/archives/partial" || exit 1
  cat > "$apt/etc/sources.list" <<'EOF'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian-security bookworm-security main
deb-src http://deb.debian.org/debian bookworm-updates main
EOF
  aptopts=(-o "Dir::Etc::sourcelist=$apt/etc/sources.list"
    -o "Dir::Etc::sourceparts=$apt/etc/sources.list.d"
    -o "Dir::Etc::preferencesparts=$apt/etc/preferences.d"
    -o "Dir::State::Lists=$apt/lists"
    -o "Dir::Cache::archives=$apt/archives"
    -o "APT::Sandbox::User=root")
  echo "$me: fetching crun's and runc's Debian source packages into $dir"
  if ! apt-get -q "${aptopts[@]}" update > "$apt/update.log" 2>&1; then
    echo "$me: apt-get update (private sources, $apt) failed: $(grep -E '^(E|W):' "$apt/update.log" | head -n 1)" >&2
    exit 2
  fi
  if ! (cd "$dir" && apt-get -q "${aptopts[@]}" source --download-only crun runc) > "$apt/source.log" 2>&1; then
    echo "$me: apt-get source --download-only crun runc failed: $(grep -E '^(E|W):' "$apt/source.log" | head -n 1)" >&2
    exit 2
  fi
  unpack () {
    local pkg=$1 version=$2 dsc
    dsc=
    for f in "$dir/${pkg}_${version}"*.dsc; do [ -f "$f" ] && dsc=$f; done
    if [ -z "$dsc" ]; then
      echo "$me: no ${pkg}_${version}*.dsc in $dir (found: $(cd "$dir" && echo "${pkg}"_*.dsc))" >&2
      return 2
    fi
    rm -rf "$dir/$pkg-$version.tmp"
    if ! dpkg-source --no-check -x "$dsc" "$dir/$pkg-$version.tmp" > "$dir/$pkg-unpack.log" 2>&1; then
      echo "$me: dpkg-source -x $dsc failed (see $dir/$pkg-unpack.log)" >&2
      return 1
    fi
    rm -rf "$dir/$pkg-$version"
    mv "$dir/$pkg-$version.tmp" "$dir/$pkg-$version"
  }
  # The Sources index apt verified lists the files' checksums, and apt-get source
  # checked them on download: hence --no-check (no debian-keyring needed).
  have_crun || unpack crun "$crun_version" || exit $?
  have_runc || unpack runc "$runc_version" || exit $?
fi
for t in "$dir/crun-$crun_version" "$dir/runc-$runc_version"; do
  if ! trusted "$t"; then
    echo "$me: $t is not owned by us or root, or is writable by group/others" >&2
    exit 1
  fi
done

status=0
"$here/prepare-crun.sh" $install "$dir" || status=1
if [ -x "$here/prepare-runc.sh" ]; then
  "$here/prepare-runc.sh" $install "$dir" || status=1
fi
if [ -x "$here/prepare-runtime-tools.sh" ]; then
  if [ -e "$dir/runtime-tools" ] || [ -n "${CSRUN_RUNTIME_TOOLS_SRC:-}" ]; then
    "$here/prepare-runtime-tools.sh" $install "$dir" || status=1
  else
    echo "$me: runtime-tools: source not present (DIR/runtime-tools or CSRUN_RUNTIME_TOOLS_SRC); not built"
  fi
fi
exit $status
