# class: escape
# expect: status=ok; stdout~DENIED open /proc/1/ns/mnt; stdout~DENIED open /proc/1/ns/user; stdout~DENIED NS_GET_PARENT user
# expect: stdout~DENIED NS_GET_PARENT pid; stdout~DENIED setns own user; stdout!~ALLOWED
# why: a handle on a namespace outside the jail (the parent user or PID namespace through the nsfs ioctls, init's namespaces) plus setns would be a way back to the host
import ctypes
import errno
import fcntl
import os

libc = ctypes.CDLL(None, use_errno=True)
NS_GET_USERNS, NS_GET_PARENT = 0xB701, 0xB702
CLONE_NEWUSER = 0x10000000


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for ns in ("mnt", "net", "user", "pid", "cgroup", "uts", "ipc"):
    try:
        fd = os.open("/proc/1/ns/" + ns, os.O_RDONLY)
        print("ALLOWED open /proc/1/ns/%s" % ns)
        if libc.setns(fd, 0) == 0:
            print("ALLOWED setns into init's", ns)
        os.close(fd)
    except OSError as e:
        print("DENIED open /proc/1/ns/%s %s" % (ns, ename(e.errno)))

for ns in ("user", "pid"):
    fd = os.open("/proc/self/ns/" + ns, os.O_RDONLY)
    try:
        parent = fcntl.ioctl(fd, NS_GET_PARENT)
    except OSError as e:
        print("DENIED NS_GET_PARENT %s %s" % (ns, ename(e.errno)))
    else:
        print("ALLOWED NS_GET_PARENT %s -> fd %d (a namespace above the jail)" % (ns, parent))
        if libc.setns(parent, 0) == 0:
            print("ALLOWED setns into the parent", ns, "namespace")
        os.close(parent)
    os.close(fd)

# setns into one's own user namespace again (EINVAL by the kernel; seccomp denies setns outright).
fd = os.open("/proc/self/ns/user", os.O_RDONLY)
if libc.setns(fd, CLONE_NEWUSER) != 0:
    print("DENIED setns own user", ename(ctypes.get_errno()))
else:
    print("ALLOWED setns own user")
os.close(fd)
