# class: escape
# expect: status=ok; stdout~DENIED userfaultfd(0); stdout~DENIED userfaultfd(UFFD_USER_MODE_ONLY); stdout~DENIED open /dev/userfaultfd
# expect: stdout!~ALLOWED
# why: userfaultfd lets a snippet stall the kernel at a chosen page fault, the classic way to win kernel races; seccomp denies it (even the user-mode-only flavour)
import ctypes
import errno
import os
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_USERFAULTFD = {"x86_64": 323, "aarch64": 282}[platform.machine()]
UFFD_USER_MODE_ONLY = 1


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for label, flags in (("userfaultfd(0)", 0), ("userfaultfd(UFFD_USER_MODE_ONLY)", os.O_CLOEXEC | UFFD_USER_MODE_ONLY)):
    r = libc.syscall(ctypes.c_long(NR_USERFAULTFD), ctypes.c_long(flags))
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
    else:
        print("ALLOWED", label, "-> fd", r)
        os.close(r)
try:
    os.close(os.open("/dev/userfaultfd", os.O_RDWR))
    print("ALLOWED open /dev/userfaultfd")
except OSError as e:
    print("DENIED open /dev/userfaultfd", ename(e.errno))
