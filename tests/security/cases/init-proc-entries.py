# class: escape
# expect: status=ok; stdout~DENIED list /proc/1/fd; stdout~DENIED read /proc/1/maps; stdout~DENIED read /proc/1/environ; stdout~DENIED read /proc/1/auxv
# expect: stdout~DENIED read /proc/1/syscall; stdout~DENIED readlink /proc/1/cwd; stdout~DENIED readlink /proc/1/root; stdout~DENIED list /proc/1/fdinfo; stdout!~ALLOWED
# why: the jail's init is a fork of csrun that keeps full capabilities in the user namespace, no seccomp filter and csrun's memory: its /proc entries must be closed to the snippet (init not dumpable), not only guarded by the capability check of ptrace
import errno
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


st = os.stat("/proc/1/fd")
print("INFO /proc/1/fd owner uid %d (%s)" % (st.st_uid, "the snippet's own uid: init is dumpable" if st.st_uid == os.getuid() else "not the snippet's uid"))
caps = [ln.split()[1] for ln in open("/proc/1/status") if ln.startswith("CapEff")]
print("INFO init CapEff", caps[0] if caps else "?")
for d in ("fd", "fdinfo", "map_files", "task"):
    try:
        entries = os.listdir("/proc/1/" + d)
        if d == "task":
            print("INFO list /proc/1/task:", entries)
        else:
            print("ALLOWED list /proc/1/%s: %s" % (d, sorted(entries)[:12]))
    except OSError as e:
        print("DENIED list /proc/1/%s %s" % (d, ename(e.errno)))
for f in ("maps", "smaps", "environ", "auxv", "stack", "syscall", "timers", "personality", "io", "mem", "pagemap"):
    try:
        with open("/proc/1/" + f, "rb") as fh:
            data = fh.read(256)
        print("ALLOWED read /proc/1/%s: %d bytes" % (f, len(data)))
    except OSError as e:
        print("DENIED read /proc/1/%s %s" % (f, ename(e.errno)))
for link in ("cwd", "root", "exe", "ns/user"):
    try:
        print("ALLOWED readlink /proc/1/%s -> %s" % (link, os.readlink("/proc/1/" + link)))
    except OSError as e:
        print("DENIED readlink /proc/1/%s %s" % (link, ename(e.errno)))
