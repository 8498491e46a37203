# class: escape
# expect: status=ok; stdout~DENIED bpf MAP_CREATE; stdout~DENIED bpf PROG_LOAD; stdout!~ALLOWED
# why: unprivileged eBPF has been a steady source of verifier escapes to kernel code execution; denied by the kernel sysctl and by seccomp
import ctypes
import errno
import os
import platform
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
BPF_MAP_CREATE, BPF_PROG_LOAD = 0, 5
BPF_MAP_TYPE_ARRAY, BPF_PROG_TYPE_SOCKET_FILTER = 2, 1


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def bpf(label, cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(ctypes.c_long(NR_BPF), ctypes.c_long(cmd), buf, ctypes.c_long(128))
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
    else:
        print("ALLOWED", label, "-> fd", r)
        os.close(r)


bpf("bpf MAP_CREATE", BPF_MAP_CREATE, struct.pack("IIII", BPF_MAP_TYPE_ARRAY, 4, 4, 1))
# "r0 = 0; exit" as a socket filter: BPF_ALU64|BPF_MOV|BPF_K dst r0 imm 0; BPF_JMP|BPF_EXIT
insns = ctypes.create_string_buffer(struct.pack("<BBhi", 0xB7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0), 16)
lic = ctypes.create_string_buffer(b"GPL")
attr = struct.pack("IIQQ", BPF_PROG_TYPE_SOCKET_FILTER, 2, ctypes.addressof(insns), ctypes.addressof(lic))
bpf("bpf PROG_LOAD", BPF_PROG_LOAD, attr)
