# class: escape
# expect: status=ok; stdout~DENIED add_key; stdout~DENIED request_key; stdout~DENIED keyctl GET_KEYRING_ID user; stdout~DENIED keyctl JOIN_SESSION_KEYRING
# expect: stdout!~ALLOWED
# why: the kernel keyring is not namespaced the way the jail is (keys are per host uid; a long history of keyring CVEs); seccomp denies keyctl, add_key and request_key
import ctypes
import errno
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250},
      "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219}}[platform.machine()]
KEY_SPEC_PROCESS_KEYRING, KEY_SPEC_USER_KEYRING = -2, -4
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_DESCRIBE = 0, 1, 6


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def sysc(label, nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
        return None
    print("ALLOWED", label, "->", r)
    return r


sysc("add_key", NR["add_key"], b"user", b"csrun-suite", b"secret", 6, KEY_SPEC_PROCESS_KEYRING)
sysc("request_key", NR["request_key"], b"user", b"csrun-suite-none", None, 0)
ring = sysc("keyctl GET_KEYRING_ID user", NR["keyctl"], KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)
if ring is not None:
    buf = ctypes.create_string_buffer(256)
    if sysc("keyctl DESCRIBE user keyring", NR["keyctl"], KEYCTL_DESCRIBE, ring, buf, 256) is not None:
        print("INFO user keyring:", buf.value.decode(errors="replace"))
sysc("keyctl JOIN_SESSION_KEYRING", NR["keyctl"], KEYCTL_JOIN_SESSION_KEYRING, None)
