# class: escape
# expect: status=ok; stdout~DENIED open /dev/mem; stdout~DENIED open /dev/kmem; stdout~DENIED open /dev/port; stdout~DENIED open /dev/vda
# expect: stdout~DENIED /dev has only the standard nodes; stdout!~ALLOWED
# why: /dev/mem, /dev/kmem, /dev/port and block devices are the host's memory and disks; the jail's /dev holds only null, zero, full, random, urandom, tty, pts, shm
import errno
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for dev in ("mem", "kmem", "port", "vda", "sda", "nvme0n1", "kvm", "fuse", "net/tun", "loop-control",
            "loop0", "console", "kmsg", "cpu/0/msr", "hwrng", "dri/card0", "watchdog", "tty0"):
    path = "/dev/" + dev
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        print("DENIED open %s %s" % (path, ename(e.errno)))
        continue
    print("ALLOWED open", path)
    os.close(fd)

expected = {"null", "zero", "full", "random", "urandom", "tty", "pts", "shm", "ptmx", "fd", "stdin", "stdout", "stderr"}
extra = sorted(set(os.listdir("/dev")) - expected)
if extra:
    print("ALLOWED unexpected entries in /dev:", extra)
else:
    print("DENIED /dev has only the standard nodes")
print("INFO /dev/pts:", sorted(os.listdir("/dev/pts")))
