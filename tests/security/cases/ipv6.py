# class: network
# expect: status=ok; stdout~DENIED tcp6 [2606:4700:4700::1111]:53; stdout~DENIED udp6 [2001:4860:4860::8888]:53; stdout~DENIED tcp6 [::1] host listener; stdout!~ALLOWED
# why: IPv6 is a second network stack: no global route, and the host's ::1 listener is out of reach as well
import errno
import socket
import sys

ARGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n) if n else "none"


def connect(label, host, port):
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError as e:
        print("DENIED tcp6 %s socket %s" % (label, ename(e.errno)))
        return
    s.settimeout(3)
    try:
        s.connect((host, port))
    except socket.timeout:
        print("DENIED tcp6 %s timed out" % label)
    except OSError as e:
        print("DENIED tcp6 %s %s" % (label, ename(e.errno)))
    else:
        print("ALLOWED tcp6 %s connected" % label)
    finally:
        s.close()


connect("[2606:4700:4700::1111]:53", "2606:4700:4700::1111", 53)
port6 = ARGS.get("port6", "")
if port6:
    connect("[::1] host listener :%s" % port6, "::1", int(port6))
else:
    print("DENIED tcp6 [::1] host listener: the host has no ::1 (nothing to reach)")
try:
    u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u.sendto(b"x", ("2001:4860:4860::8888", 53))
    print("ALLOWED udp6 [2001:4860:4860::8888]:53 sent")
except OSError as e:
    print("DENIED udp6 [2001:4860:4860::8888]:53", ename(e.errno))
try:
    print("INFO jail's IPv6 addresses:", open("/proc/net/if_inet6").read().split("\n"))
except OSError as e:
    print("INFO /proc/net/if_inet6", ename(e.errno))
