# class: escape
# expect: status=ok; stdout~DENIED unshare CLONE_NEWUSER; stdout~DENIED unshare CLONE_NEWNS; stdout~DENIED unshare CLONE_NEWNET; stdout!~ALLOWED
# why: a nested user namespace hands the snippet a full capability set again (and the kernel's namespaced-root attack surface: mount, netfilter, ...); seccomp denies unshare
import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP = 0x10000000, 0x20000000, 0x40000000, 0x02000000
MS_NOSUID = 2


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def in_child(fn):
    """Run fn() in a forked child (unshare changes the caller); collect its lines."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = fn()
        except OSError as e:
            out = "child OSError %s" % ename(e.errno)
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    print(data.decode().rstrip("\n"))


def unshare(label, flags):
    def fn():
        if libc.unshare(flags) != 0:
            return "DENIED unshare %s %s\n" % (label, ename(ctypes.get_errno()))
        out = "ALLOWED unshare %s\n" % label
        if flags & CLONE_NEWUSER:
            caps = [ln.split()[1] for ln in open("/proc/self/status") if ln.startswith("CapEff")]
            out += "ALLOWED capabilities again in the nested user namespace: CapEff %s\n" % caps[0]
            if libc.unshare(CLONE_NEWNS) == 0:
                out += "ALLOWED unshare CLONE_NEWNS inside it\n"
                if libc.mount(b"none", b"/tmp", b"tmpfs", MS_NOSUID, None) == 0:
                    out += "ALLOWED mount tmpfs on /tmp inside it\n"
                else:
                    out += "DENIED mount inside it %s\n" % ename(ctypes.get_errno())
        return out

    in_child(fn)


unshare("CLONE_NEWUSER", CLONE_NEWUSER)
unshare("CLONE_NEWNS", CLONE_NEWNS)
unshare("CLONE_NEWNET", CLONE_NEWNET)
unshare("CLONE_NEWUTS", CLONE_NEWUTS)
unshare("CLONE_NEWIPC", CLONE_NEWIPC)
unshare("CLONE_NEWPID", CLONE_NEWPID)
unshare("CLONE_NEWCGROUP", CLONE_NEWCGROUP)
