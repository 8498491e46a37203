# class: escape
# expect: status=ok; stdout~DENIED mount cgroup; stdout~DENIED unshare for cgroup mount; stdout!~ALLOWED
# why: CVE-2022-0492: mount a cgroup v1 hierarchy (directly, or after unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWCGROUP)) and write release_agent to run a host program as root
import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWCGROUP = 0x00020000, 0x10000000, 0x02000000


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def try_mounts(prefix):
    out = ""
    for opts in (b"memory", b"rdma", b"none,name=csrun"):
        os.makedirs("/tmp/cg", exist_ok=True)
        if libc.mount(b"cgroup", b"/tmp/cg", b"cgroup", 0, opts) != 0:
            out += "DENIED mount cgroup %s%s %s\n" % (prefix, opts.decode(), ename(ctypes.get_errno()))
            continue
        out += "ALLOWED mount cgroup %s%s\n" % (prefix, opts.decode())
        try:
            with open("/tmp/cg/release_agent", "w") as f:
                f.write("/csrun-suite-never-exists")
            out += "ALLOWED write release_agent\n"
        except OSError as e:
            out += "DENIED write release_agent %s\n" % ename(e.errno)
        libc.umount2(b"/tmp/cg", 2)
    if libc.mount(b"cgroup2", b"/tmp/cg", b"cgroup2", 0, None) != 0:
        out += "DENIED mount cgroup2 %s%s\n" % (prefix, ename(ctypes.get_errno()))
    else:
        out += "ALLOWED mount cgroup2 %s\n" % prefix
    return out


print("INFO /proc/self/cgroup:", open("/proc/self/cgroup").read().strip().replace("\n", " | "))
print(try_mounts("").rstrip("\n"))

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWCGROUP) != 0:
        msg = "DENIED unshare for cgroup mount %s\n" % ename(ctypes.get_errno())
    else:
        msg = "ALLOWED unshare for cgroup mount (user+mnt+cgroup)\n" + try_mounts("after unshare ")
    os.write(w, msg.encode())
    os._exit(0)
os.close(w)
data = b""
while True:
    chunk = os.read(r, 4096)
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
print(data.decode().rstrip("\n"))
