# class: network
# expect: status=ok; stdout~DENIED tcp 127.0.0.1 host listener; stdout~DENIED tcp 127.0.0.53:53; stdout!~ALLOWED
# why: the harness listens on the host's 127.0.0.1 (HTTP, port in argv): the jail has a loopback of its own and must never reach the host's (the listener's log is checked from outside)
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
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        reply = s.recv(200)
    except socket.timeout:
        print("DENIED tcp %s timed out" % label)
    except OSError as e:
        print("DENIED tcp %s %s" % (label, ename(e.errno)))
    else:
        print("ALLOWED tcp %s connected, got %r" % (label, reply[:60]))
    finally:
        s.close()


port = int(ARGS["port"])
connect("127.0.0.1 host listener :%d" % port, "127.0.0.1", port)
connect("127.0.0.53:53", "127.0.0.53", 53)
# The jail's own loopback works (it is not a way out): a listener of its own is reachable.
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
c = socket.create_connection(srv.getsockname(), timeout=3)
print("INFO the jail's own loopback works:", srv.getsockname())
c.close()
srv.close()
