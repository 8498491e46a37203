# class: escape
# expect: status=ok; stdout~DENIED open_by_handle_at own /; stdout~DENIED open_by_handle_at inode 2; stdout!~ALLOWED
# why: the "shocker" escape: open_by_handle_at with a guessed handle (inode 2 is the root of the host's ext4 file system) opens files outside the bind-mounted rootfs
import ctypes
import errno
import os
import platform
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"name_to_handle_at": 303, "open_by_handle_at": 304},
      "aarch64": {"name_to_handle_at": 264, "open_by_handle_at": 265}}[platform.machine()]
AT_FDCWD = -100


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def open_by_handle(label, mount_fd, handle):
    r = libc.syscall(ctypes.c_long(NR["open_by_handle_at"]), ctypes.c_long(mount_fd), handle, ctypes.c_long(os.O_RDONLY | os.O_DIRECTORY))
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
        return
    try:
        print("ALLOWED", label, "-> lists", sorted(os.listdir(r))[:12])
    except OSError as e:
        print("ALLOWED", label, "-> fd", r, ename(e.errno))
    os.close(r)


root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
# struct file_handle { u32 handle_bytes; int handle_type; unsigned char f_handle[128]; }
handle = ctypes.create_string_buffer(struct.pack("Ii", 128, 0), 8 + 128)
mount_id = ctypes.c_int(0)
r = libc.syscall(ctypes.c_long(NR["name_to_handle_at"]), ctypes.c_long(AT_FDCWD), b"/", handle, ctypes.byref(mount_id), ctypes.c_long(0))
if r < 0:
    # No handle of its own to replay: the way in is closed one step earlier.
    print("DENIED open_by_handle_at own / (name_to_handle_at %s)" % ename(ctypes.get_errno()))
else:
    nbytes, htype = struct.unpack_from("Ii", handle.raw)
    print("INFO name_to_handle_at / : type %d, %d bytes" % (htype, nbytes))
    open_by_handle("open_by_handle_at own /", root, handle)
# The brute-force handle: FILEID_INO32_GEN (1) with inode 2, generation 0: the host file system's root.
guess = ctypes.create_string_buffer(struct.pack("IiII", 8, 1, 2, 0), 8 + 128)
open_by_handle("open_by_handle_at inode 2", root, guess)
