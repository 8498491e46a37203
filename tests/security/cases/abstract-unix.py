# class: network
# expect: status=ok; stdout~DENIED abstract connect host listener; stdout~DENIED /proc/net/unix shows no host socket; stdout!~ALLOWED
# why: abstract unix sockets (X11, D-Bus, containerd shims, the harness's "\0csrun-test-PID" listener) belong to the network namespace: the jail must not see or reach the host's
import errno
import socket
import sys

ARGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def connect(label, addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect(addr)
    except OSError as e:
        print("DENIED abstract connect %s %s" % (label, ename(e.errno)))
    else:
        print("ALLOWED abstract connect %s" % label)
    finally:
        s.close()


name = ARGS["abstract"]
connect("host listener @%s" % name, "\0" + name)
for common in ("/tmp/.X11-unix/X0", "/org/freedesktop/systemd1/notify", "/containerd-shim/default.sock"):
    connect("@" + common, "\0" + common)
listed = open("/proc/net/unix").read()
if name in listed:
    print("ALLOWED /proc/net/unix shows the host listener @%s" % name)
else:
    print("DENIED /proc/net/unix shows no host socket (%d entries)" % (len(listed.splitlines()) - 1))
