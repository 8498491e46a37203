#!/bin/bash
# The cache is trusted only when it is the caller's own: a cache directory
# (--cache-dir, CSRUN_CACHE_DIR, XDG_CACHE_HOME) owned by another user, or
# writable by group/others, or reached through another user's directory or
# symlink, is refused (exit 125, one line naming the path and its owner);
# a cached seccomp program or compiled gate that is not exactly what csrun
# wrote (or not owned by the caller) is rebuilt, never used.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

if [ ! -r "$CSRUN_TEST_ROOTFS" ]; then
  skip "cache trust tests" "no rootfs tarball at $CSRUN_TEST_ROOTFS"
  done_testing
  exit
fi

T=$(tmpdir)
me=$(id -u)

# The probe: keyctl, io_uring_setup and bpf must be refused by seccomp (EPERM).
cat >"$T/probe.py" <<'EOF'
import ctypes, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": (250, 425, 321), "aarch64": (219, 425, 280)}[platform.machine()]
out = []
for name, nr in zip(("keyctl", "io_uring_setup", "bpf"), NR):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(0)] * 5)
    e = ctypes.get_errno()
    out.append("%s=%s" % (name, "EPERM" if r < 0 and e == 1 else "reached:%d:%d" % (r, e)))
print(" ".join(out))
EOF
denied="keyctl=EPERM io_uring_setup=EPERM bpf=EPERM"

# run_probe OUT ERR [env NAME=VALUE...] -- [csrun run options...]: sets $rc.
run_probe () {
  local out=$1 err=$2
  shift 2
  local envs=()
  while [ "$1" != -- ]; do
    envs+=("$1")
    shift
  done
  shift
  env "${envs[@]}" "$CSRUN" run --quiet --no-heal "$@" "$T/probe.py" >"$out" 2>"$err" </dev/null
  rc=$?
}

# allow_all FILE: a seccomp program that loads the arch and allows everything.
allow_all () {
  python3 -c 'import struct, sys
sys.stdout.buffer.write(struct.pack("<HBBI", 0x20, 0, 0, 4) + struct.pack("<HBBI", 6, 0, 0, 0x7fff0000))' >"$1"
}

# refused ERR PATH OWNER: exit 125 and one line naming PATH and OWNER.
refused () {
  [ "$rc" = 125 ] && [ "$(wc -l <"$1")" = 1 ] && grep -qF "'$2'" "$1" && grep -qF "$3" "$1"
}

# ---------------------------------------------------------------- a trusted cache
B=$T/base
run_probe "$T/o" "$T/e" -- --cache-dir "$B" --rootfs "$CSRUN_TEST_ROOTFS"
if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ]; then
  ok "a fresh cache: keyctl, io_uring_setup and bpf are denied (EPERM)"
else
  not_ok "a fresh cache: keyctl, io_uring_setup and bpf are denied (EPERM)" "exit $rc" \
    "$(cat "$T/o" "$T/e")"
fi
modes=$(stat -c '%a %u' "$B" "$B/seccomp" "$B/gate" 2>&1 | tr '\n' ' ')
files=$(stat -c '%a %u' "$B"/seccomp/*.bpf "$B"/gate/*.bin 2>&1 | tr '\n' ' ')
if [ "$modes" = "700 $me 700 $me 700 $me " ] && [ "$files" = "600 $me 600 $me " ]; then
  ok "a new cache directory is 0700 and its seccomp and gate entries 0600, owned by uid $me"
else
  not_ok "a new cache directory is 0700 and its seccomp and gate entries 0600" "$modes" "$files"
fi
tree=$(find "$B" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended -regex '.*/[0-9a-f]{64}')
bpf=$(ls "$B"/seccomp/*.bpf 2>/dev/null | head -1)
bpf=${bpf#"$B"/}
gate=$(ls "$B"/gate/*.bin 2>/dev/null | head -1)
gate=${gate#"$B"/}

# fresh NAME: a copy of the cache's seccomp and gate entries (and the
# .empty layer) in $T/NAME, owned by the caller; the rootfs tree is the
# base cache's, given as --rootfs DIR.
fresh () {
  rm -rf "${T:?}/$1"
  mkdir -m 700 "$T/$1" && cp -a "$B/seccomp" "$B/gate" "$B/.empty" "$T/$1/"
}

# ---------------------------------------------------------------- a file planted in one's own cache
fresh own
allow_all "$T/own/$bpf"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/own" --rootfs "$tree"
if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ] && ! cmp -s <(allow_all /dev/stdout) "$T/own/$bpf"; then
  ok "an allow-all program in one's own seccomp cache is rebuilt, not loaded"
else
  not_ok "an allow-all program in one's own seccomp cache is rebuilt, not loaded" "exit $rc" \
    "$(cat "$T/o" "$T/e")"
fi
for bad in "" "12345678" "csrun-seccomp-cache 2"; do
  fresh own
  printf '%s' "$bad" >"$T/own/$bpf"
  run_probe "$T/o" "$T/e" -- --cache-dir "$T/own" --rootfs "$tree"
  if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ] && [ "$(stat -c %s "$T/own/$bpf")" -gt 64 ]; then
    ok "a corrupt seccomp cache entry ('$bad') is rebuilt"
  else
    not_ok "a corrupt seccomp cache entry ('$bad') is rebuilt" "exit $rc" "$(cat "$T/o" "$T/e")"
  fi
done

# A compiled gate planted in one's own cache (the right interpreter's marshal
# format, a code object that bypasses the gate) is not used either.
fresh own
"$CSRUN" run --quiet --no-heal --cache-dir "$T/own" --rootfs "$tree" - >"$T/planted.hex" 2>"$T/e" <<'EOF'
import marshal, sys
def planted():
    import os
    os.write(1, b"PLANTED GATE\n")
    os._exit(0)
print((sys.version.encode() + b"\n" + marshal.dumps((planted.__code__, None))).hex())
EOF
if python3 -c 'import sys; open(sys.argv[2], "wb").write(bytes.fromhex(open(sys.argv[1]).read()))' \
  "$T/planted.hex" "$T/own/$gate" 2>"$T/e"; then
  run_probe "$T/o" "$T/e" -- --cache-dir "$T/own" --rootfs "$tree"
  if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ] && ! grep -q PLANTED "$T/o" "$T/own/$gate"; then
    ok "a compiled gate planted in one's own cache is rebuilt, not run"
  else
    not_ok "a compiled gate planted in one's own cache is rebuilt, not run" "exit $rc" \
      "$(cat "$T/o" "$T/e")"
  fi
else
  not_ok "make a planted gate" "$(cat "$T/planted.hex" "$T/e")"
fi

# ---------------------------------------------------------------- group/other-writable, root-owned (any user)
for mode in 777 775 757 1777; do
  fresh gw
  chmod "$mode" "$T/gw"
  run_probe "$T/o" "$T/e" -- --cache-dir "$T/gw" --rootfs "$tree"
  if refused "$T/e" "$T/gw" "writable" && [ ! -s "$T/o" ]; then
    ok "a cache directory of mode $mode (writable by group/others) is refused with 125"
  else
    not_ok "a cache directory of mode $mode is refused" "exit $rc" "$(cat "$T/o" "$T/e")"
  fi
done
mkdir -m 777 "$T/open"
mkdir -m 700 "$T/open/cache"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/open/cache" --rootfs "$tree"
if refused "$T/e" "$T/open" "writable"; then
  ok "a cache directory in a directory anyone can write (not sticky) is refused"
else
  not_ok "a cache directory in a directory anyone can write is refused" "exit $rc" "$(cat "$T/e")"
fi
chmod 1777 "$T/open"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/open/cache" --rootfs "$tree"
if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ]; then
  ok "a cache directory of one's own in a sticky directory (like /tmp) is used"
else
  not_ok "a cache directory of one's own in a sticky directory is used" "exit $rc" "$(cat "$T/e")"
fi
ln -s "$T/base" "$T/mylink"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/mylink" --rootfs "$CSRUN_TEST_ROOTFS"
if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ]; then
  ok "a symlink of one's own to one's own cache is followed"
else
  not_ok "a symlink of one's own to one's own cache is followed" "exit $rc" "$(cat "$T/e")"
fi

# XDG_CACHE_HOME goes through the same check, and the message names it.
mkdir -m 777 "$T/xdgopen"
chmod 777 "$T/xdgopen"
run_probe "$T/o" "$T/e" -u CSRUN_CACHE_DIR XDG_CACHE_HOME="$T/xdgopen" -- --rootfs "$tree"
if refused "$T/e" "$T/xdgopen/csrun/rootfs" "'$T/xdgopen' is writable by group or others" &&
  grep -q "(XDG_CACHE_HOME)" "$T/e" && [ ! -e "$T/xdgopen/csrun" ]; then
  ok "a cache under an XDG_CACHE_HOME anyone can write is refused, naming XDG_CACHE_HOME"
else
  not_ok "a cache under an XDG_CACHE_HOME anyone can write is refused" "exit $rc" "$(cat "$T/e")"
fi

if ! is_root; then
  # Rootless: a directory of root's is not the user's cache.
  run_probe "$T/o" "$T/e" -- --cache-dir /tmp --rootfs "$tree"
  if refused "$T/e" /tmp "owned by root (uid 0)"; then
    ok "rootless: a cache directory owned by root (/tmp) is refused with 125"
  else
    not_ok "rootless: a cache directory owned by root is refused" "exit $rc" "$(cat "$T/e")"
  fi
  skip "another user's cache directory is refused" "n/a: needs root to make one (the root pass runs it)"
  done_testing
  exit
fi

# ---------------------------------------------------------------- as root: another user's cache
other=nobody
ouid=$(id -u "$other")
# The reviewer's case: a tarball run against another user's cache in which a
# previous run's seccomp program was replaced by an allow-all one.
E=$T/evil
run_probe "$T/o" "$T/e" -- --cache-dir "$E" --rootfs "$CSRUN_TEST_ROOTFS"
evil_bpf=$(ls "$E"/seccomp/*.bpf 2>/dev/null | head -1)
if [ -n "$evil_bpf" ]; then
  allow_all "$evil_bpf"
  chown -R "$other" "$E"
  chmod 755 "$E"
  for route in --cache-dir CSRUN_CACHE_DIR XDG_CACHE_HOME; do
    case $route in
      --cache-dir) run_probe "$T/o" "$T/e" -- --cache-dir "$E" --rootfs "$CSRUN_TEST_ROOTFS" ;;
      CSRUN_CACHE_DIR) run_probe "$T/o" "$T/e" CSRUN_CACHE_DIR="$E" -- --rootfs "$CSRUN_TEST_ROOTFS" ;;
      XDG_CACHE_HOME)
        mkdir -p "$T/xdg/csrun"
        rm -rf "$T/xdg/csrun/rootfs"
        cp -a "$E" "$T/xdg/csrun/rootfs"
        chown "$other" "$T/xdg" "$T/xdg/csrun"
        run_probe "$T/o" "$T/e" -u CSRUN_CACHE_DIR XDG_CACHE_HOME="$T/xdg" -- \
          --rootfs "$CSRUN_TEST_ROOTFS"
        ;;
    esac
    want=$E
    [ "$route" = XDG_CACHE_HOME ] && want=$T/xdg
    if refused "$T/e" "$want" "owned by $other (uid $ouid)" && [ ! -s "$T/o" ]; then
      ok "root: another user's cache with a planted allow-all seccomp program ($route) is refused with 125"
    else
      not_ok "root: another user's cache with a planted allow-all seccomp program ($route) is refused" \
        "exit $rc" "stdout: $(cat "$T/o")" "stderr: $(cat "$T/e")"
    fi
  done
else
  not_ok "root: make a cache to plant in" "exit $rc" "$(cat "$T/e")"
fi

# Root's own cache inside another user's directory: that user could rename it.
mkdir -p "$T/alice"
fresh alice/cache
chown "$other" "$T/alice"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/alice/cache" --rootfs "$tree"
if refused "$T/e" "$T/alice" "owned by $other (uid $ouid)"; then
  ok "root: a cache directory inside another user's directory is refused"
else
  not_ok "root: a cache directory inside another user's directory is refused" "exit $rc" \
    "$(cat "$T/o" "$T/e")"
fi

# A symlink owned by another user, to a cache of root's, is not followed.
fresh target
ln -s "$T/target" "$T/theirlink"
chown -h "$other" "$T/theirlink"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/theirlink" --rootfs "$tree"
if refused "$T/e" "$T/theirlink" "owned by $other (uid $ouid)"; then
  ok "root: a symlink owned by another user in the cache path is refused"
else
  not_ok "root: a symlink owned by another user in the cache path is refused" "exit $rc" \
    "$(cat "$T/o" "$T/e")"
fi

# Inside root's own cache: an entry owned by another uid, or a symlink, is not used.
fresh mixed
allow_all "$T/mixed/$bpf"
chown "$other" "$T/mixed/$bpf"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/mixed" --rootfs "$tree"
if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ] && [ "$(stat -c %u "$T/mixed/$bpf")" = 0 ]; then
  ok "root: a seccomp cache entry owned by another uid is not used (rebuilt as root's)"
else
  not_ok "root: a seccomp cache entry owned by another uid is not used" "exit $rc" \
    "$(cat "$T/o" "$T/e")" "$(ls -ln "$T/mixed/seccomp")"
fi
fresh mixed
allow_all "$T/allow.bpf"
rm -f "$T/mixed/$bpf"
ln -s "$T/allow.bpf" "$T/mixed/$bpf"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/mixed" --rootfs "$tree"
if [ "$rc" = 0 ] && [ "$(cat "$T/o")" = "$denied" ]; then
  ok "root: a symlink in the seccomp cache is not followed"
else
  not_ok "root: a symlink in the seccomp cache is not followed" "exit $rc" "$(cat "$T/o" "$T/e")"
fi
fresh mixed
chown "$other" "$T/mixed/seccomp"
run_probe "$T/o" "$T/e" -- --cache-dir "$T/mixed" --rootfs "$tree"
if refused "$T/e" "$T/mixed/seccomp" "owned by $other (uid $ouid)"; then
  ok "root: a seccomp cache subdirectory owned by another uid is refused"
else
  not_ok "root: a seccomp cache subdirectory owned by another uid is refused" "exit $rc" \
    "$(cat "$T/o" "$T/e")"
fi

done_testing
