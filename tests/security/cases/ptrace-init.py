# class: escape
# expect: status=ok; stdout~DENIED PTRACE_ATTACH 1; stdout~DENIED PTRACE_SEIZE 1; stdout~DENIED open /proc/1/mem; stdout~DENIED process_vm_readv 1
# expect: stdout~DENIED pidfd_getfd 1; stdout~DENIED PTRACE_ATTACH own child; stdout!~ALLOWED
# why: the jail's init is a fork of csrun with the host binary mapped and csrun's memory (environment, arguments, fds); no ptrace, /proc/1/mem, process_vm_readv or pidfd_getfd into it; seccomp denies ptrace altogether
import ctypes
import errno
import os
import platform
import signal
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
NR = {"x86_64": {"process_vm_readv": 310}, "aarch64": {"process_vm_readv": 270}}[platform.machine()]
PIDFD_OPEN, PIDFD_GETFD = 434, 438
PTRACE_ATTACH, PTRACE_DETACH, PTRACE_SEIZE = 16, 17, 0x4206


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def ptrace(label, req, pid):
    if libc.ptrace(ctypes.c_long(req), ctypes.c_long(pid), None, None) < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
        return False
    print("ALLOWED", label)
    libc.ptrace(ctypes.c_long(PTRACE_DETACH), ctypes.c_long(pid), None, None)
    return True


ptrace("PTRACE_ATTACH 1", PTRACE_ATTACH, 1)
ptrace("PTRACE_SEIZE 1", PTRACE_SEIZE, 1)
try:
    fd = os.open("/proc/1/mem", os.O_RDONLY)
    print("ALLOWED open /proc/1/mem")
    os.close(fd)
except OSError as e:
    print("DENIED open /proc/1/mem", ename(e.errno))


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


buf = ctypes.create_string_buffer(64)
local = IOVec(ctypes.addressof(buf), 64)
remote = IOVec(0x400000, 64)
r = libc.syscall(ctypes.c_long(NR["process_vm_readv"]), ctypes.c_long(1), ctypes.byref(local), ctypes.c_long(1), ctypes.byref(remote), ctypes.c_long(1), ctypes.c_long(0))
if r < 0:
    print("DENIED process_vm_readv 1", ename(ctypes.get_errno()))
else:
    print("ALLOWED process_vm_readv 1 ->", r)

pidfd = libc.syscall(ctypes.c_long(PIDFD_OPEN), ctypes.c_long(1), ctypes.c_long(0))
if pidfd < 0:
    print("DENIED pidfd_getfd 1 (pidfd_open %s)" % ename(ctypes.get_errno()))
else:
    for target_fd in range(0, 8):
        got = libc.syscall(ctypes.c_long(PIDFD_GETFD), ctypes.c_long(pidfd), ctypes.c_long(target_fd), ctypes.c_long(0))
        if got >= 0:
            print("ALLOWED pidfd_getfd 1 fd %d -> %s" % (target_fd, os.readlink("/proc/self/fd/%d" % got)))
            os.close(got)
        elif ctypes.get_errno() != errno.EBADF:
            print("DENIED pidfd_getfd 1", ename(ctypes.get_errno()))
            break
    os.close(pidfd)

# Tracing one's own child is harmless in itself, but the policy denies ptrace whatever the target.
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
ptrace("PTRACE_ATTACH own child", PTRACE_ATTACH, child)
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
