# class: info-leak
# expect: status=ok; stdout~DENIED /proc/kcore; stdout~DENIED /proc/kallsyms addresses; stdout~DENIED /proc/kmsg; stdout~DENIED syslog READ_ALL
# expect: stdout~DENIED /proc/timer_list; stdout~DENIED /proc/sched_debug; stdout!~LEAK
# why: /proc/kcore is the kernel's memory; kallsyms addresses, the kernel log and the timer/scheduler debug files defeat KASLR and show host activity: absent, masked or zeroed
import ctypes
import errno
import os
import platform

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_SYSLOG = {"x86_64": 103, "aarch64": 116}[platform.machine()]


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def read_some(label, path, n=4096):
    """DENIED when absent, unreadable or empty (masked by /dev/null or an empty tmpfs)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        print("DENIED", label, ename(e.errno))
        return
    try:
        data = os.read(fd, n)
    except OSError as e:
        print("DENIED", label, "read", ename(e.errno))
        return
    finally:
        os.close(fd)
    print(("LEAK %s readable: %d bytes, %r" % (label, len(data), data[:60])) if data else ("DENIED %s masked (empty)" % label))


read_some("/proc/kcore", "/proc/kcore")
read_some("/proc/kmsg", "/proc/kmsg")
read_some("/proc/timer_list", "/proc/timer_list")
read_some("/proc/sched_debug", "/proc/sched_debug")
read_some("/proc/vmallocinfo", "/proc/vmallocinfo")
read_some("/proc/slabinfo", "/proc/slabinfo")

try:
    lines = open("/proc/kallsyms").read(200000).splitlines()
    nonzero = [ln for ln in lines if ln.split()[0].strip("0")]
    print(("LEAK /proc/kallsyms addresses: %s" % nonzero[0]) if nonzero else "DENIED /proc/kallsyms addresses zeroed (%d symbols)" % len(lines))
except OSError as e:
    print("DENIED /proc/kallsyms addresses", ename(e.errno))
try:
    mods = open("/proc/modules").read().splitlines()
    leaked = [m for m in mods if "0x" in m and not m.rstrip().endswith("0x0000000000000000")]
    print(("LEAK /proc/modules addresses: %s" % leaked[0]) if leaked else "INFO /proc/modules: %d modules, addresses zeroed" % len(mods))
except OSError as e:
    print("INFO /proc/modules", ename(e.errno))

buf = ctypes.create_string_buffer(4096)
r = libc.syscall(ctypes.c_long(NR_SYSLOG), ctypes.c_long(3), buf, ctypes.c_long(4096))  # SYSLOG_ACTION_READ_ALL
if r < 0:
    print("DENIED syslog READ_ALL", ename(ctypes.get_errno()))
elif r == 0:
    print("DENIED syslog READ_ALL (empty)")
else:
    print("LEAK syslog READ_ALL: %d bytes of the host's kernel log" % r)
