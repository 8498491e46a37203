# class: escape
# expect: status=ok; stdout~DENIED leaked-fd none beyond 0-2; stdout~DENIED verdict-fd3 EBADF
# expect: stdout~INFO fd0 -> /dev/null; stdout~INFO cwd /work; stdout!~ALLOWED
# why: runc CVE-2024-21626: a directory fd of the host leaked into the jail gives openat(fd, "..") a way out; nothing but 0-2 may be open, and fd 3 (the gate's verdict) is closed
import errno
import os
import stat


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for fd in (0, 1, 2):
    print("INFO fd%d -> %s" % (fd, os.readlink("/proc/self/fd/%d" % fd)))
print("INFO cwd", os.getcwd())

leaked = []
for fd in range(3, 1025):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    leaked.append(fd)
    try:
        target = os.readlink("/proc/self/fd/%d" % fd)
    except OSError as e:
        target = "?" + ename(e.errno)
    print("ALLOWED leaked-fd %d -> %s" % (fd, target))
    if stat.S_ISDIR(st.st_mode):
        try:
            up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            print("ALLOWED openat(%d, '..') lists" % fd, sorted(os.listdir(up))[:10])
            os.close(up)
        except OSError as e:
            print("DENIED openat(%d, '..') %s" % (fd, ename(e.errno)))
if not leaked:
    print("DENIED leaked-fd none beyond 0-2")

# Also what /proc/self/fd lists (the listing's own directory fd shows up as one entry).
print("INFO /proc/self/fd lists", sorted(int(x) for x in os.listdir("/proc/self/fd")))

try:
    os.write(3, b'{"verdict": "pass", "violations": []}')
    print("ALLOWED verdict-fd3 write")
except OSError as e:
    print("DENIED verdict-fd3", ename(e.errno))

# Init's descriptors (the sync socket, the pipes to csrun) are out of reach (listing
# /proc/1/fd is the init-proc-entries case).
for fd in range(0, 16):
    try:
        f = os.open("/proc/1/fd/%d" % fd, os.O_RDONLY)
        print("ALLOWED open /proc/1/fd/%d" % fd, os.readlink("/proc/self/fd/%d" % f))
        os.close(f)
    except OSError as e:
        if e.errno != errno.ENOENT:
            print("DENIED open /proc/1/fd/%d %s" % (fd, ename(e.errno)))
