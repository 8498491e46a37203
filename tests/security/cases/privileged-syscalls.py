# class: escape
# expect: status=ok; stdout~DENIED init_module; stdout~DENIED finit_module; stdout~DENIED kexec_load; stdout~DENIED reboot
# expect: stdout~DENIED swapon; stdout~DENIED acct; stdout~DENIED syslog; stdout~DENIED personality READ_IMPLIES_EXEC; stdout!~ALLOWED
# why: kernel modules, kexec, reboot, swap, process accounting and the kernel log are host-wide; the jail holds no capability for them and seccomp denies them
import ctypes
import errno
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"init_module": 175, "finit_module": 313, "kexec_load": 246, "reboot": 169, "swapon": 167,
                 "acct": 163, "syslog": 103, "personality": 135},
      "aarch64": {"init_module": 105, "finit_module": 273, "kexec_load": 104, "reboot": 142, "swapon": 224,
                  "acct": 89, "syslog": 116, "personality": 92}}[platform.machine()]


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def sysc(label, nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
        return None
    print("ALLOWED", label, "->", r)
    return r


# Every call is made with arguments the kernel would refuse after its permission check, so that
# reaching the argument check (EINVAL/EFAULT/EBADF) shows a missing permission check, without effect.
def expect_eperm(label, nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    err = ctypes.get_errno()
    if r < 0 and err in (errno.EPERM, errno.EACCES, errno.ENOSYS):
        print("DENIED", label, ename(err))
    else:
        print("ALLOWED", label, "reached the kernel's argument checks:", ename(err) if r < 0 else r)


expect_eperm("init_module", NR["init_module"], None, 0, b"")
expect_eperm("finit_module", NR["finit_module"], -1, b"", 0)
expect_eperm("kexec_load", NR["kexec_load"], 0, 0, None, 0)
expect_eperm("reboot", NR["reboot"], 0, 0, 0, None)  # bad magic: EINVAL after the CAP_SYS_BOOT check
expect_eperm("swapon", NR["swapon"], None, 0)
expect_eperm("acct", NR["acct"], None)
expect_eperm("syslog", NR["syslog"], 3, None, 0)  # SYSLOG_ACTION_READ_ALL into NULL
# personality: reading it is fine; READ_IMPLIES_EXEC (0x0400000) is not among the safe values
current = libc.syscall(ctypes.c_long(NR["personality"]), ctypes.c_long(0xFFFFFFFF))
print("INFO personality", hex(current))
sysc("personality READ_IMPLIES_EXEC", NR["personality"], 0x0400000)
libc.syscall(ctypes.c_long(NR["personality"]), ctypes.c_long(current))
