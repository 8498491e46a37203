# class: escape
# expect: status=ok; stdout~DENIED io_uring_setup; stdout!~ALLOWED
# why: io_uring is a large, frequently exploited kernel surface that also bypasses seccomp for the operations it performs; the default policy denies io_uring_*
import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
IO_URING_SETUP, IO_URING_ENTER, IO_URING_REGISTER = 425, 426, 427


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
r = libc.syscall(ctypes.c_long(IO_URING_SETUP), ctypes.c_long(4), params)
if r < 0:
    print("DENIED io_uring_setup", ename(ctypes.get_errno()))
else:
    print("ALLOWED io_uring_setup -> fd", r)
    os.close(r)
# enter/register on a bad fd: EBADF means the call reached io_uring; seccomp answers first
for label, nr in (("io_uring_enter", IO_URING_ENTER), ("io_uring_register", IO_URING_REGISTER)):
    r = libc.syscall(ctypes.c_long(nr), ctypes.c_long(-1), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), None, ctypes.c_long(0))
    print("INFO", label, "on fd -1:", ename(ctypes.get_errno()) if r < 0 else r)
