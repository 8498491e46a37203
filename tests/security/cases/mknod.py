# class: escape
# expect: status=ok; stdout~DENIED mknod /tmp/mem; stdout~DENIED mknod /work/vda; stdout~DENIED mknod /dev/shm/kmsg; stdout!~ALLOWED
# why: a device node made inside the jail (with the host's major/minor) would open the host's memory or disks; no CAP_MKNOD, and every writable mount is nodev
import errno
import os
import stat


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for label, path, dev in (("mknod /tmp/mem", "/tmp/mem", os.makedev(1, 1)),
                         ("mknod /work/vda", "/work/vda", os.makedev(254, 0)),
                         ("mknod /dev/shm/kmsg", "/dev/shm/kmsg", os.makedev(1, 11))):
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, dev)
    except OSError as e:
        print("DENIED", label, ename(e.errno))
        continue
    print("ALLOWED", label)
    try:
        fd = os.open(path, os.O_RDONLY)
        print("ALLOWED open of the new node", path)
        os.close(fd)
    except OSError as e:
        print("INFO open of the new node", path, ename(e.errno))
try:
    os.mknod("/tmp/blk", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    print("ALLOWED mknod block /tmp/blk")
except OSError as e:
    print("DENIED mknod block /tmp/blk", ename(e.errno))
