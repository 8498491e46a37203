# class: resources
# expect: status=ok; stdout~DENIED inodes /tmp ENOSPC; stdout~DENIED inodes /work ENOSPC; stdout~DENIED inodes /dev/shm ENOSPC; stdout!~ALLOWED
# why: empty files cost kernel memory, not tmpfs bytes: each tmpfs has an inode limit (16384 for /tmp and /work, 1024 for /dev/shm)
import errno
import os

CAP = 100000


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for d in ("/tmp", "/work", "/dev/shm"):
    os.makedirs(d + "/many", exist_ok=True)
    n = 0
    err = None
    while n < CAP:
        try:
            os.close(os.open("%s/many/%d" % (d, n), os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as e:
            err = e.errno
            break
        n += 1
    print(("DENIED inodes %s %s after %d files" % (d, ename(err), n)) if err else ("ALLOWED inodes %s: %d files, no limit" % (d, n)))
