# class: resources
# options: --tmp-size 16M
# expect: status=ok; stdout~DENIED fill /tmp ENOSPC; stdout~DENIED fill /work ENOSPC; stdout~DENIED fill /dev/shm ENOSPC; stdout!~ALLOWED
# why: the writable tmpfs mounts are bounded (--tmp-size for /tmp and /work, 64 MiB for /dev/shm): filling them ends in ENOSPC, not in host memory exhaustion
import errno
import os

chunk = b"\0" * (1 << 20)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for d, cap_mib in (("/tmp", 256), ("/work", 256), ("/dev/shm", 256)):
    written = 0
    err = None
    i = 0
    while written < cap_mib << 20 and err is None:
        try:
            with open("%s/fill%d" % (d, i), "wb") as f:  # 4 MiB files: below RLIMIT_FSIZE
                for _ in range(4):
                    f.write(chunk)
                    written += len(chunk)
        except OSError as e:
            err = e.errno
        i += 1
    if err is None:
        print("ALLOWED fill %s: %d MiB written, no limit" % (d, written >> 20))
    else:
        print("DENIED fill %s %s after %d MiB" % (d, ename(err), written >> 20))
    for name in os.listdir(d):
        if name.startswith("fill"):
            os.unlink(os.path.join(d, name))
