# class: escape
# expect: status=ok; stdout~DENIED sysrq-trigger; stdout!~ALLOWED
# why: /proc/sysrq-trigger reboots, crashes or syncs the host with one byte; the jail masks it (or the kernel lacks it); it is never even opened for writing
import errno
import os
import stat


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


try:
    fd = os.open("/proc/sysrq-trigger", os.O_WRONLY)
except OSError as e:
    print("DENIED sysrq-trigger open", ename(e.errno))
else:
    st = os.fstat(fd)
    if stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3):
        print("DENIED sysrq-trigger masked by /dev/null")
    else:
        print("ALLOWED sysrq-trigger opened for writing (nothing written)")
    os.close(fd)
try:
    st = os.stat("/proc/sys/kernel/sysrq")
    print("INFO /proc/sys/kernel/sysrq exists, mode %o" % st.st_mode)
except OSError as e:
    print("INFO /proc/sys/kernel/sysrq", ename(e.errno))
