# class: escape
# expect: status=ok; stdout~DENIED write /proc/self/exe; stdout~DENIED open /proc/1/exe; stdout~DENIED write /proc/1/exe
# expect: stdout~DENIED path /proc/1/exe; stdout~DENIED readlink /proc/1/exe; stdout!~ALLOWED
# why: runc CVE-2019-5736: the jail's init is a fork of csrun, so /proc/1/exe is the host's csrun binary; no handle on it, and the interpreter's own binary is read-only
import errno
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def try_open(label, path, flags):
    try:
        fd = os.open(path, flags)
    except OSError as e:
        print("DENIED", label, ename(e.errno))
        return None
    print("ALLOWED", label, "fd", fd, "->", os.readlink("/proc/self/fd/%d" % fd))
    return fd


# The interpreter itself (the rootfs's python3): read-only.
try_open("write /proc/self/exe", "/proc/self/exe", os.O_WRONLY)
try_open("rdwr /proc/self/exe", "/proc/self/exe", os.O_RDWR)

# Every other process of the jail: pid 1 is csrun's init (a fork of the host binary).
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid())
print("INFO jail pids besides me:", pids)
for pid in pids:
    exe = "/proc/%d/exe" % pid
    try:
        print("ALLOWED readlink %s ->" % exe, os.readlink(exe))
    except OSError as e:
        print("DENIED readlink %s %s" % (exe, ename(e.errno)))
    fd = try_open("open %s" % exe, exe, os.O_RDONLY)
    path_fd = try_open("path %s" % exe, exe, os.O_PATH)
    try_open("write %s" % exe, exe, os.O_WRONLY)
    # The CVE's second step: reopen an O_PATH/O_RDONLY handle for writing through /proc/self/fd.
    for held in (fd, path_fd):
        if held is not None:
            try_open("reopen-write %s via fd %d" % (exe, held), "/proc/self/fd/%d" % held, os.O_WRONLY)
    try:
        print("ALLOWED list /proc/%d/map_files:" % pid, len(os.listdir("/proc/%d/map_files" % pid)))
    except OSError as e:
        print("DENIED list /proc/%d/map_files %s" % (pid, ename(e.errno)))
