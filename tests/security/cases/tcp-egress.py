# class: network
# expect: status=ok; stdout~DENIED tcp 1.1.1.1:53; stdout~DENIED tcp 8.8.8.8:443; stdout~DENIED tcp 169.254.169.254:80; stdout~DENIED tcp host address; stdout!~ALLOWED
# why: --net none: the jail's network namespace has only lo, so the internet, the cloud metadata address and the host's own addresses are unreachable
import errno
import socket
import sys

ARGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n) if n else "none"


def connect(label, host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    try:
        s.connect((host, port))
    except socket.timeout:
        print("DENIED tcp %s timed out" % label)
    except OSError as e:
        print("DENIED tcp %s %s" % (label, ename(e.errno)))
    else:
        print("ALLOWED tcp %s connected" % label)
    finally:
        s.close()


connect("1.1.1.1:53", "1.1.1.1", 53)
connect("8.8.8.8:443", "8.8.8.8", 443)
connect("169.254.169.254:80", "169.254.169.254", 80)
for ip in [a for a in ARGS.get("hostips", "").split(",") if a]:
    connect("host address %s:22" % ip, ip, 22)
    connect("host address %s:%s" % (ip, ARGS.get("port", "80")), ip, int(ARGS.get("port", "80")))
if not ARGS.get("hostips"):
    print("DENIED tcp host address: the harness found none to try")
print("INFO routes:", open("/proc/net/route").read().splitlines()[1:])
