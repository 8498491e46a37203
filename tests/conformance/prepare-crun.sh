#!/bin/bash
# Build what crun 1.8.1's tests (DIR/crun-1.8.1/tests/test_*.py) need:
#
#   prepare-crun.sh [--install] DIR
#
# tests/init, the static helper every test container runs (crun's Makefile builds
# it with its autotools config.h; here a two-line config.h defines HAVE_ERROR_H
# and HAVE_SECCOMP), linked -static with libseccomp-dev's libseccomp.a.  Reused
# when it is newer than tests/init.c, owned by us or root and not writable by
# group or others.  --install first installs the Debian packages the suite needs.
#
# Exit status: 0 built (or already there), 1 the build failed, 2 cannot build here
# (the source or a tool is missing: stderr says which, one line).
set -uo pipefail
me=prepare-crun.sh

# gcc/libc6-dev/libseccomp-dev build init; python3 runs the tests; util-linux has
# script(1) (test_tty.py wants a terminal) and unshare.
PACKAGES="gcc libc6-dev libseccomp-dev python3 util-linux coreutils findutils"

install=no
if [ "${1:-}" = --install ]; then
  install=yes
  shift
fi
if [ $# -ne 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 [--install] DIR" >&2
  exit 2
fi
src=$1/crun-1.8.1
if [ "$install" = yes ]; then
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PACKAGES >/dev/null \
    || { echo "$me: cannot install $PACKAGES" >&2; exit 2; }
fi
if [ ! -f "$src/tests/init.c" ]; then
  echo "$me: $src/tests/init.c not found (run tests/conformance/fetch-suites.sh ${1})" >&2
  exit 2
fi
for tool in gcc python3 script; do
  command -v "$tool" >/dev/null || { echo "$me: $tool not installed (or run with --install)" >&2; exit 2; }
done
libseccomp_a=$(gcc -print-file-name=libseccomp.a)
if [ ! -f "$libseccomp_a" ] || [ ! -f /usr/include/seccomp.h ]; then
  echo "$me: libseccomp-dev (static libseccomp.a and seccomp.h) not installed" >&2
  exit 2
fi

init=$src/tests/init
ok_file () {
  local owner mode
  owner=$(stat -c %u "$1") && mode=$(stat -c %a "$1") || return 1
  { [ "$owner" = "$(id -u)" ] || [ "$owner" = 0 ]; } && [ $((0$mode & 022)) = 0 ]
}
if [ -x "$init" ] && [ "$init" -nt "$src/tests/init.c" ] && ok_file "$init" && ok_file "$src/tests"; then
  exit 0
fi
cfg=$(mktemp -d) || exit 1
trap 'rm -rf "$cfg"' EXIT
printf '#define HAVE_ERROR_H 1\n#define HAVE_SECCOMP 1\n' > "$cfg/config.h" || exit 1
rm -f "$init.tmp"
if ! gcc -O2 -I"$cfg" -static -o "$init.tmp" "$src/tests/init.c" -lseccomp > "$src/tests/init.build.log" 2>&1; then
  echo "$me: building $init failed: $(grep -m1 -i error "$src/tests/init.build.log")" >&2
  exit 1
fi
chmod 0755 "$init.tmp" && mv -f "$init.tmp" "$init" || exit 1
echo "$me: built $init"
