# class: escape
# expect: status=ok; stdout~DENIED fsopen tmpfs; stdout~DENIED fsopen proc; stdout~DENIED open_tree clone /; stdout~DENIED fspick /
# expect: stdout~DENIED mount_setattr /; stdout!~ALLOWED
# why: the new mount API (fsopen/fsmount/move_mount/open_tree/fspick/mount_setattr) is a second way to mount, unmask and remount; denied like mount(2)
import ctypes
import errno
import os
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# The same numbers on every architecture (added after the syscall table unification).
OPEN_TREE, MOVE_MOUNT, FSOPEN, FSCONFIG, FSMOUNT, FSPICK, MOUNT_SETATTR = 428, 429, 430, 431, 432, 433, 442
AT_FDCWD, OPEN_TREE_CLONE, AT_RECURSIVE = -100, 1, 0x8000
FSCONFIG_CMD_CREATE, MOVE_MOUNT_F_EMPTY_PATH, AT_EMPTY_PATH = 6, 4, 0x1000


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def sysc(label, nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
        return None
    print("ALLOWED", label, "->", r)
    return r


for fstype in (b"tmpfs", b"proc"):
    fs = sysc("fsopen %s" % fstype.decode(), FSOPEN, fstype, 0)
    if fs is not None:
        if sysc("fsconfig create %s" % fstype.decode(), FSCONFIG, fs, FSCONFIG_CMD_CREATE, None, None, 0) is not None:
            m = sysc("fsmount %s" % fstype.decode(), FSMOUNT, fs, 0, 0)
            if m is not None:
                sysc("move_mount %s onto /work" % fstype.decode(), MOVE_MOUNT, m, b"", AT_FDCWD, b"/work", MOVE_MOUNT_F_EMPTY_PATH)
        os.close(fs)

t = sysc("open_tree clone /", OPEN_TREE, AT_FDCWD, b"/", OPEN_TREE_CLONE | AT_RECURSIVE)
if t is not None:
    sysc("move_mount the clone onto /tmp", MOVE_MOUNT, t, b"", AT_FDCWD, b"/tmp", MOVE_MOUNT_F_EMPTY_PATH)
sysc("open_tree clone /proc", OPEN_TREE, AT_FDCWD, b"/proc", OPEN_TREE_CLONE)
p = sysc("fspick /", FSPICK, AT_FDCWD, b"/", 0)
# struct mount_attr { u64 attr_set, attr_clr, propagation, userns_fd }: clear MOUNT_ATTR_RDONLY (1)
attr = ctypes.create_string_buffer(struct.pack("4Q", 0, 1, 0, 0), 32)
sysc("mount_setattr /", MOUNT_SETATTR, AT_FDCWD, b"/", 0, attr, 32)
sysc("mount_setattr /proc/sys", MOUNT_SETATTR, AT_FDCWD, b"/proc/sys", 0, attr, 32)
