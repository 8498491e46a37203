# class: escape
# expect: status=ok; stdout~DENIED perf_event_open self; stdout~DENIED perf_event_open pid 1; stdout!~ALLOWED
# why: perf_event_open is a kernel surface with a long CVE record and a side channel; seccomp denies it (even the self-monitoring that perf_event_paranoid=2 allows)
import ctypes
import errno
import os
import platform
import struct

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {"x86_64": 298, "aarch64": 241}[platform.machine()]
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK = 1, 0


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


# struct perf_event_attr (PERF_ATTR_SIZE_VER5 = 112): type, size, config, sample_period, sample_type,
# read_format, flags (bit 0 disabled, bit 5 exclude_kernel, bit 6 exclude_hv), ...
flags = (1 << 0) | (1 << 5) | (1 << 6)
attr = ctypes.create_string_buffer(struct.pack("IIQQQQQ", PERF_TYPE_SOFTWARE, 112, PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0, flags), 112)
for label, pid in (("perf_event_open self", 0), ("perf_event_open pid 1", 1)):
    r = libc.syscall(ctypes.c_long(NR), attr, ctypes.c_long(pid), ctypes.c_long(-1), ctypes.c_long(-1), ctypes.c_long(0))
    if r < 0:
        print("DENIED", label, ename(ctypes.get_errno()))
    else:
        print("ALLOWED", label, "-> fd", r)
        os.close(r)
