# class: escape
# expect: status=ok; stdout~DENIED mount tmpfs /tmp; stdout~DENIED remount / rw; stdout~DENIED umount2 /proc/keys; stdout~DENIED umount2 /proc/sys
# expect: stdout~DENIED pivot_root; stdout~DENIED chroot; stdout!~ALLOWED
# why: no mount, remount or unmount (which would unmask /proc or make the rootfs writable), no pivot_root or chroot: the snippet has no CAP_SYS_ADMIN/CAP_SYS_CHROOT and seccomp denies them
import ctypes
import errno
import os
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"pivot_root": 155}, "aarch64": {"pivot_root": 41}}[platform.machine()]
MS_RDONLY, MS_REMOUNT, MS_BIND, MNT_DETACH = 1, 32, 4096, 2


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def check(label, rc):
    if rc != 0:
        print("DENIED", label, ename(ctypes.get_errno()))
    else:
        print("ALLOWED", label)


check("mount tmpfs /tmp", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
check("mount proc /work", libc.mount(b"proc", b"/work", b"proc", 0, None))
check("bind /proc/1/root /work", libc.mount(b"/proc/1/root", b"/work", None, MS_BIND, None))
check("remount / rw", libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None))
check("remount /proc/sys rw", libc.mount(None, b"/proc/sys", None, MS_REMOUNT | MS_BIND, None))
check("umount2 /proc/keys", libc.umount2(b"/proc/keys", MNT_DETACH))
check("umount2 /proc/sys", libc.umount2(b"/proc/sys", MNT_DETACH))
check("umount2 /", libc.umount2(b"/", MNT_DETACH))
os.makedirs("/tmp/old", exist_ok=True)
check("pivot_root", libc.syscall(ctypes.c_long(NR["pivot_root"]), b"/tmp", b"/tmp/old"))
check("chroot", libc.chroot(b"/tmp"))
