# class: escape
# expect: status=ok; stdout~DENIED clone CLONE_NEWUSER|CLONE_NEWNS; stdout~DENIED clone3 CLONE_NEWUSER; stdout!~ALLOWED
# why: clone(2)/clone3(2) with CLONE_NEW* flags is unshare by another door: a child with full capabilities in a fresh user namespace, free to mount
import ctypes
import errno
import os
import platform
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"clone": 56, "clone3": 435}, "aarch64": {"clone": 220, "clone3": 435}}[platform.machine()]
CLONE_NEWNS, CLONE_NEWUSER, SIGCHLD = 0x00020000, 0x10000000, 17


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def child_body(w):
    """Runs in the cloned child (a copy of this interpreter, like after fork)."""
    caps = [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith("CapEff")][0]
    out = "ALLOWED child in a new user namespace with CapEff %s\n" % caps
    if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
        out += "ALLOWED mount tmpfs on /tmp in the clone\n"
    else:
        out += "DENIED mount in the clone %s\n" % ename(ctypes.get_errno())
    if libc.mount(b"proc", b"/work", b"proc", 0, None) == 0:
        out += "ALLOWED mount proc on /work in the clone\n"
    else:
        out += "DENIED mount proc in the clone %s\n" % ename(ctypes.get_errno())
    os.write(w, out.encode())
    os._exit(0)


def collect(label, pid, r, w):
    os.close(w)
    if pid < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
        os.close(r)
        return
    data = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    print("ALLOWED", label, "-> pid", pid)
    print(data.decode().rstrip("\n"))


# clone(flags, newsp=0 (copy of this stack, as fork), ptid, ctid, tls)
r, w = os.pipe()
flags = CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD
pid = libc.syscall(ctypes.c_long(NR["clone"]), ctypes.c_long(flags), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
if pid == 0:
    os.close(r)
    child_body(w)
collect("clone CLONE_NEWUSER|CLONE_NEWNS", pid, r, w)

# clone3 with struct clone_args (version 0: 64 bytes): flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls
args = ctypes.create_string_buffer(struct.pack("8Q", CLONE_NEWUSER | CLONE_NEWNS, 0, 0, 0, SIGCHLD, 0, 0, 0), 64)
r, w = os.pipe()
pid = libc.syscall(ctypes.c_long(NR["clone3"]), args, ctypes.c_long(64))
if pid == 0:
    os.close(r)
    child_body(w)
collect("clone3 CLONE_NEWUSER", pid, r, w)
