#!/bin/bash
# Build what runc 1.1.5's tests/integration bats suite needs, offline, from
# Debian's packages:
#
#   prepare-runc.sh [--install] DIR
#
# DIR/runc-1.1.5 is runc's Debian source package (runc_1.1.5+ds1), unpacked
# (tests/conformance/fetch-suites.sh does that).  This script
#  - builds contrib/cmd/{recvtty,sd-helper,seccompagent} with Debian's Go in
#    GOPATH mode (GO111MODULE=off) against the golang-*-dev packages under
#    /usr/share/gocode: the +ds1 source has no vendor directory;
#  - builds the two test images that tests/integration/get-images.sh would
#    download, testdata/busybox-ARCH.tar.xz and testdata/debian-ARCH.tar.xz,
#    from busybox-static (and, for the "debian" image that only hooks.bats
#    uses, the host's static ldconfig, which that test runs).
# What is already built is reused when it is owned by us (or root) and not
# writable by group or others; anything else is rebuilt.
# --install first installs the Debian packages the suite needs (CI does).
#
# Exit status: 0 built (or already there), 2 cannot build here (stderr says why).
set -euo pipefail

# Debian packages: the tools the bats files call, and the Go libraries the
# three helpers import (see debian/control's Build-Depends of runc).
PACKAGES="bats gawk jq busybox-static gcc libc6-dev libseccomp-dev pkgconf golang-go util-linux
  golang-github-containerd-console-dev golang-github-urfave-cli-dev golang-golang-x-sys-dev
  golang-github-sirupsen-logrus-dev golang-github-coreos-go-systemd-dev golang-dbus-dev
  golang-github-cilium-ebpf-dev golang-github-moby-sys-dev
  golang-github-cyphar-filepath-securejoin-dev golang-github-opencontainers-specs-dev
  golang-github-seccomp-libseccomp-golang-dev golang-github-opencontainers-selinux-dev
  golang-github-docker-go-units-dev"

install=0
if [ "${1:-}" = --install ]; then
  install=1
  shift
fi
if [ $# -ne 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 [--install] DIR" >&2
  exit 2
fi
dir=$1
src=$dir/runc-1.1.5
die () {
  echo "prepare-runc.sh: $*" >&2
  exit 2
}

if [ $install = 1 ]; then
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $PACKAGES >&2 \
    || die "apt-get install failed"
fi
[ -f "$src/tests/integration/helpers.bash" ] || die "runc's source not present: $src"
for tool in go bats gawk jq busybox gcc script tar xz; do
  command -v "$tool" >/dev/null || die "$tool not installed (run with --install)"
done
busybox=$(command -v busybox)

# Tests that would change the host, made to skip (idempotent): csrun's tests
# never touch what they did not create.  "per-device io weight for bfq"
# switches a host block device's I/O scheduler to bfq (and leaves it so) when
# the kernel has BFQ; on kernels without it runc's test skips by itself.
bats_cg=$src/tests/integration/cgroups.bats
bfq_test='@test "runc run (per-device io weight for bfq)" {'
if grep -qF "$bfq_test" "$bats_cg" && ! grep -q 'csrun: changes the host' "$bats_cg"; then
  sed -i "/^@test \"runc run (per-device io weight for bfq)\" {\$/a\\
	skip \"csrun: changes the host's block I/O scheduler\"" "$bats_cg" \
    || die "could not patch $bats_cg"
fi
# static: ldd (libc-bin, always there; file(1) may not be) says so.
static () {
  local out
  out=$(ldd "$1" 2>&1) || true
  [[ $out == *"not a dynamic executable"* || $out == *"statically linked"* ]]
}
static "$busybox" \
  || die "$busybox is not statically linked (install busybox-static)"

# trusted FILE: exists, owned by us or root, not group/other-writable.
trusted () {
  local owner mode
  [ -f "$1" ] || return 1
  owner=$(stat -c %u "$1") mode=$(stat -c %a "$1")
  [ "$owner" = "$(id -u)" ] || [ "$owner" = 0 ] || return 1
  (((8#$mode & 8#022) == 0))
}

build=$dir/runc-build
mkdir -p "$build/gopath/src/github.com/opencontainers" "$build/gocache"
ln -sfn "$(readlink -f "$src")" "$build/gopath/src/github.com/opencontainers/runc"
for cmd in recvtty sd-helper seccompagent; do
  out=$src/contrib/cmd/$cmd/$cmd
  trusted "$out" && continue
  tags=
  [ $cmd = seccompagent ] && tags=seccomp # without it only the stub builds
  echo "prepare-runc.sh: building $cmd" >&2
  (cd "$build/gopath/src/github.com/opencontainers/runc" \
    && GO111MODULE=off GOPATH=$build/gopath:/usr/share/gocode GOCACHE=$build/gocache \
      GOFLAGS='' GOPROXY=off CGO_ENABLED=1 go build -tags "$tags" -o "$out.tmp" "./contrib/cmd/$cmd") \
    || die "cannot build $cmd (missing golang-*-dev package? run with --install)"
  chmod 755 "$out.tmp"
  mv "$out.tmp" "$out"
done

# The images.  get-images.sh names them after `go env GOARCH` and only
# downloads what is missing.
arch=$(go env GOARCH)
testdata=$src/tests/integration/testdata

# busybox_root DIR: a busybox image like the one runc's tests download
# (docker-library busybox): applets as hard links in /bin, the same
# /etc/passwd and /etc/group, /root 0700, /tmp 1777, no /proc or /sys
# (mask.bats replaces them with symlinks).
busybox_root () {
  local r=$1 a
  mkdir -p "$r"/{bin,dev,etc,home,lib,root,tmp,usr/bin,usr/sbin,var/spool/mail,var/www}
  chmod 755 "$r" "$r"/{bin,dev,etc,home,lib,usr,usr/bin,usr/sbin,var,var/www}
  chmod 700 "$r/root"
  chmod 1777 "$r/tmp"
  cp "$busybox" "$r/bin/busybox"
  chmod 755 "$r/bin/busybox"
  for a in $("$busybox" --list); do
    case $a in busybox | */*) continue ;; esac
    ln "$r/bin/busybox" "$r/bin/$a"
  done
  cat > "$r/etc/passwd" << 'EOF'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
EOF
  cat > "$r/etc/group" << 'EOF'
root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
lp:x:7:
mail:x:8:
kmem:x:9:
wheel:x:10:root
cdrom:x:11:
dialout:x:18:
floppy:x:19:
video:x:28:
audio:x:29:
tape:x:32:
www-data:x:33:daemon
operator:x:37:
utmp:x:43:
plugdev:x:46:
staff:x:50:
lock:x:54:
netdev:x:82:
users:x:100:
nogroup:x:65534:
EOF
  chmod 644 "$r/etc/passwd" "$r/etc/group"
}

# make_image OUT KIND
make_image () {
  local out=$1 kind=$2 r
  trusted "$out" && return 0
  echo "prepare-runc.sh: building $(basename "$out")" >&2
  r=$(mktemp -d "$build/image.XXXXXX")
  busybox_root "$r/root"
  if [ "$kind" = debian ]; then
    # hooks.bats runs `ldconfig` and `ldconfig -p` in it: Debian's ldconfig is
    # static-pie, so the host's copy runs there.
    static /sbin/ldconfig || die "/sbin/ldconfig is not static"
    mkdir -p "$r/root/sbin" "$r/root/etc/ld.so.conf.d" "$r/root/usr/lib"
    cp /sbin/ldconfig "$r/root/sbin/ldconfig"
    chmod 755 "$r/root/sbin" "$r/root/sbin/ldconfig" "$r/root/etc/ld.so.conf.d" "$r/root/usr/lib"
    echo 'include /etc/ld.so.conf.d/*.conf' > "$r/root/etc/ld.so.conf"
    chmod 644 "$r/root/etc/ld.so.conf"
  fi
  tar --numeric-owner --owner=0 --group=0 -C "$r/root" -cJf "$out.tmp" . || die "tar $out"
  chmod 644 "$out.tmp"
  mv "$out.tmp" "$out"
  rm -rf "$r"
}
make_image "$testdata/busybox-$arch.tar.xz" busybox
make_image "$testdata/debian-$arch.tar.xz" debian

# get-images.sh must now find both without downloading.
(cd "$src/tests/integration" && ./get-images.sh > /dev/null) || die "get-images.sh still wants to download"
echo "prepare-runc.sh: ready: $src" >&2
