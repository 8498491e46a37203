# class: info-leak
# options: --patch-cmd 'exit 1 # token=@SECRET@'
# expect: status=ok; no-secret; stdout!~LEAK
# why: the jail's pid 1 is a fork of csrun: /proc/1/cmdline (world-readable) holds csrun's whole command line, with host paths and any secret on it (here a --patch-cmd with an API key)
import errno
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


try:
    argv = open("/proc/1/cmdline", "rb").read().split(b"\0")
except OSError as e:
    print("DENIED /proc/1/cmdline", ename(e.errno))
else:
    argv = [a.decode(errors="replace") for a in argv if a]
    if len(argv) > 1 or any("/" in a for a in argv):
        print("LEAK /proc/1/cmdline shows csrun's command line:", argv)
    else:
        print("DENIED /proc/1/cmdline shows only", argv)
for f in ("comm", "status"):
    try:
        first = open("/proc/1/" + f).read().splitlines()[0]
        print("INFO /proc/1/%s: %s" % (f, first))
    except OSError as e:
        print("INFO /proc/1/%s %s" % (f, ename(e.errno)))
