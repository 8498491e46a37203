#!/bin/bash
# Build opencontainers/runtime-tools' validation suite for suite-runtime-tools.sh.
#
#   prepare-runtime-tools.sh [--install] DIR
#
# The source is not in Debian's archive and CI has no GitHub, so it must be on the
# machine already: DIR/runtime-tools (a checkout), or $CSRUN_RUNTIME_TOOLS_SRC (a
# checkout or a bare git directory of https://github.com/opencontainers/runtime-tools),
# which is cloned into DIR/runtime-tools and checked out at commit 0105384 (the one
# with vendored dependencies).  It is built offline with Debian's golang-go:
#   GOFLAGS=-mod=vendor GOPROXY=off make runtimetest validation-executables
# with Go's caches under DIR/.cache.  Idempotent: a build newer than every source
# file is reused.  DIR/runtime-tools must be owned by the caller and not writable by
# group or others (the suite runs its binaries as root); otherwise it is refused.
# --install first installs the Debian packages it needs (golang-go git make tar).
#
# Exit status: 0 built (or up to date), 2 the source or a tool is missing (stderr
# says which, one line), 1 the build failed.
set -uo pipefail

me=prepare-runtime-tools.sh
commit=0105384
install=no
if [ "${1:-}" = --install ]; then
  install=yes
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: $0 [--install] DIR" >&2
  exit 2
fi
dir=$1
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
dest=$dir/runtime-tools

if [ "$install" = yes ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    golang-go git make tar ca-certificates >/dev/null || {
    echo "$me: apt-get install golang-go git make tar failed" >&2
    exit 2
  }
fi

need () {
  local tool
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null; then
      echo "$me: $tool not installed (Debian: apt-get install golang-go git make tar, or run with --install)" >&2
      exit 2
    fi
  done
}

# Obtain the checkout.
if [ ! -d "$dest/validation" ]; then
  srcin=${CSRUN_RUNTIME_TOOLS_SRC:-}
  if [ -z "$srcin" ]; then
    echo "$me: runtime-tools source not present: put a checkout in $dest or set CSRUN_RUNTIME_TOOLS_SRC (a checkout or git dir)" >&2
    exit 2
  fi
  if [ ! -d "$srcin" ]; then
    echo "$me: CSRUN_RUNTIME_TOOLS_SRC is not a directory: $srcin" >&2
    exit 2
  fi
  need git
  mkdir -p "$dir" || exit 1
  rm -rf "$dest.tmp"
  if ! git clone -q --no-checkout "$srcin" "$dest.tmp" 2>/dev/null \
    || ! git -C "$dest.tmp" -c advice.detachedHead=false checkout -q "$commit" 2>/dev/null; then
    rm -rf "$dest.tmp"
    echo "$me: cannot check out commit $commit from $srcin" >&2
    exit 2
  fi
  mv "$dest.tmp" "$dest" || exit 1
fi

# Trust: the tree's binaries run as root.
owner=$(stat -c %u "$dest")
mode=$(stat -c %a "$dest")
if [ "$owner" != "$(id -u)" ] || [ $((8#$mode & 8#022)) -ne 0 ]; then
  echo "$me: refusing $dest: owned by uid $owner, mode $mode (must be ours and not group/other-writable)" >&2
  exit 2
fi
if { [ -d "$dest/.git" ] || [ -f "$dest/.git" ]; } && command -v git >/dev/null; then
  head=$(git -C "$dest" rev-parse --short=7 HEAD 2>/dev/null)
  if [ "$head" != "$commit" ]; then
    echo "$me: warning: $dest is at $head, not $commit" >&2
  fi
fi
if [ ! -d "$dest/vendor" ]; then
  echo "$me: $dest has no vendor/ directory (commit $commit has one; the build is offline)" >&2
  exit 2
fi

# Up to date?  Every validation executable and runtimetest newer than every .go file.
newest=$(find "$dest" -name '*.go' -newer "$dest/runtimetest" -print -quit 2>/dev/null)
uptodate=no
if [ -x "$dest/runtimetest" ] && [ -z "$newest" ]; then
  uptodate=yes
  for g in "$dest"/validation/*/*.go; do
    case $g in */validation/util/*) continue ;; esac
    t=${g%.go}.t
    if [ ! -x "$t" ] || [ "$g" -nt "$t" ]; then
      uptodate=no
      break
    fi
  done
fi
if [ "$uptodate" = yes ]; then
  echo "$me: $dest is built"
  exit 0
fi

need go make
mkdir -p "$dir/.cache/go-build" "$dir/.cache/gopath" || exit 1
echo "$me: building runtime-tools in $dest (offline, vendored)"
if ! (cd "$dest" && env GOFLAGS=-mod=vendor GOPROXY=off GO111MODULE=on \
  GOCACHE="$dir/.cache/go-build" GOPATH="$dir/.cache/gopath" \
  make runtimetest validation-executables > "$dir/runtime-tools-build.log" 2>&1); then
  echo "$me: build failed (see $dir/runtime-tools-build.log)" >&2
  tail -n 5 "$dir/runtime-tools-build.log" >&2
  exit 1
fi
echo "$me: built $(ls "$dest"/validation/*/*.t | wc -l) validation executables"
exit 0
