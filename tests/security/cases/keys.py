# class: info-leak
# expect: status=ok; stdout~DENIED /proc/keys; stdout!~LEAK
# why: /proc/keys lists the keys (descriptions, owners, timeouts) the kernel holds for the user; masked in the jail; /proc/key-users is reported for information
import errno
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


try:
    data = open("/proc/keys").read()
    print(("LEAK /proc/keys: %r" % data[:300]) if data.strip() else "DENIED /proc/keys masked (empty)")
except OSError as e:
    print("DENIED /proc/keys", ename(e.errno))
try:
    print("INFO /proc/key-users:", open("/proc/key-users").read().strip().replace("\n", " | "))
except OSError as e:
    print("INFO /proc/key-users", ename(e.errno))
