# class: info-leak
# expect: status=ok; stdout~CHECKED 19 paths; stdout!~LEAK
# why: /proc/cmdline (boot parameters), /proc/config.gz (the kernel's build), /proc/partitions and /proc/diskstats (the host's disks), and the paths the OCI runtimes mask (runc, crun, podman) say nothing in the jail: masked (empty) or absent
import errno
import os

PATHS = [
    # masked for the snippet jail since issue 11
    "/proc/cmdline", "/proc/config.gz", "/proc/partitions", "/proc/diskstats",
    # the OCI default masked paths (runc's spec, containers/common)
    "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/proc/interrupts",
    "/sys/firmware", "/sys/fs/selinux", "/sys/dev/block", "/sys/devices/virtual/powercap",
    # read-only in OCI; masked here
    "/proc/sysrq-trigger",
]


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for p in PATHS:
    try:
        if os.path.isdir(p):
            names = os.listdir(p)
            print(("LEAK %s: %r" % (p, names[:10])) if names else "DENIED %s masked (empty directory)" % p)
            continue
        with open(p, "rb") as f:
            data = f.read(4096)
        print(("LEAK %s: %r" % (p, data[:120])) if data else "DENIED %s masked (empty)" % p)
    except OSError as e:
        print("DENIED %s %s" % (p, ename(e.errno)))
print("CHECKED %d paths" % len(PATHS))
