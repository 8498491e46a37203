# class: escape
# expect: status=ok; stdout~DENIED write /proc/sys/kernel/hostname; stdout~DENIED sethostname; stdout~DENIED open-write /proc/sys/kernel/core_pattern
# expect: stdout~DENIED open-write /proc/sys/kernel/modprobe; stdout~DENIED open-write /proc/sys/vm/drop_caches; stdout~DENIED lower /proc/self/oom_score_adj
# expect: stdout!~ALLOWED
# why: /proc/sys is read-only in the jail; core_pattern and modprobe are host-wide and run a program as host root when written; the snippet may not make itself the OOM killer's last choice either
import ctypes
import errno
import os

libc = ctypes.CDLL(None, use_errno=True)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


# The jail's own hostname (its own UTS namespace): written for real.
try:
    with open("/proc/sys/kernel/hostname", "w") as f:
        f.write("pwned")
    print("ALLOWED write /proc/sys/kernel/hostname")
except OSError as e:
    print("DENIED write /proc/sys/kernel/hostname", ename(e.errno))
if libc.sethostname(b"pwned", 5) != 0:
    print("DENIED sethostname", ename(ctypes.get_errno()))
else:
    print("ALLOWED sethostname")
print("INFO hostname now", os.uname().nodename)

# Host-wide knobs: only opened for writing, never written (if the open succeeds, that is the finding).
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
             "/proc/sys/kernel/panic", "/proc/sys/fs/binfmt_misc/register"):
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        print("DENIED open-write", path, ename(e.errno))
        continue
    print("ALLOWED open-write", path)
    os.close(fd)

try:
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("-1000")
    print("ALLOWED lower /proc/self/oom_score_adj")
except OSError as e:
    print("DENIED lower /proc/self/oom_score_adj", ename(e.errno))
