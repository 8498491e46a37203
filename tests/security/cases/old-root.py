# class: escape
# expect: status=ok; stdout~DENIED dotdot from /; stdout~DENIED /proc/1/root; stdout~DENIED /proc/self/root/..; stdout~DENIED chroot
# expect: stdout~DENIED host test directory; stdout~DENIED host canary; stdout~DENIED mountinfo mount points; stdout~DENIED /sys is empty; stdout!~ALLOWED
# why: after pivot_root the old root must be detached and unreachable: not through "..", /proc/1/root, a chroot trick, a mount point naming host paths, or sysfs
import ctypes
import errno
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
ARGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


root = os.stat("/")
up = os.stat("/" + "../" * 40)
print(("DENIED dotdot from / (same inode)" if (up.st_dev, up.st_ino) == (root.st_dev, root.st_ino) else "ALLOWED dotdot from / leaves the root"))
try:
    print("ALLOWED /proc/1/root lists", sorted(os.listdir("/proc/1/root/.."))[:12])
except OSError as e:
    print("DENIED /proc/1/root", ename(e.errno))
s = os.stat("/proc/self/root/..")
print(("DENIED /proc/self/root/.. is /" if (s.st_dev, s.st_ino) == (root.st_dev, root.st_ino) else "ALLOWED /proc/self/root/.. is elsewhere"))

# The classic chroot break-out: chroot into a subdirectory, then walk up from the old cwd.
os.makedirs("/tmp/jail", exist_ok=True)
if libc.chroot(b"/tmp/jail") != 0:
    print("DENIED chroot", ename(ctypes.get_errno()))
else:
    os.chdir("../../../../..")
    print("ALLOWED chroot; cwd after walking up lists", sorted(os.listdir("."))[:12])

# Paths that only exist on the host (the harness's own temporary directory and canary file).
for label, key in (("host test directory", "hostdir"), ("host canary", "canary")):
    path = ARGS.get(key)
    if path and os.path.exists(path):
        print("ALLOWED", label, "reachable at", path)
    else:
        print("DENIED", label, "not reachable:", path)
for path in ("/home", "/root", "/old", "/oldroot", "/.oldroot", "/host", "/mnt", "/var/cache/csrun", "/run/user"):
    if os.path.exists(path):
        print("INFO exists in the rootfs:", path, sorted(os.listdir(path))[:5] if os.path.isdir(path) else "")

expected = {"/", "/proc", "/dev", "/tmp", "/work", "/dev/shm", "/dev/pts"}
odd = []
for line in open("/proc/self/mountinfo"):
    mnt = line.split()[4]
    if mnt not in expected and not mnt.startswith(("/proc/", "/dev/")):
        odd.append(mnt)
print(("ALLOWED mountinfo mount points outside the jail's own: %s" % odd) if odd else "DENIED mountinfo mount points are the jail's own")
try:
    entries = os.listdir("/sys")
    print(("ALLOWED /sys lists %s" % entries[:10]) if entries else "DENIED /sys is empty")
except OSError as e:
    print("DENIED /sys is empty (%s)" % ename(e.errno))
