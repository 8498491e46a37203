# class: network
# expect: status=ok; stdout~DENIED udp 1.1.1.1:53; stdout~DENIED udp 8.8.8.8:53; stdout!~ALLOWED
# why: UDP needs no handshake: a datagram to the internet or to the host's UDP listener (checked from outside: it receives nothing) must not leave the jail
import errno
import socket
import sys

ARGS = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n) if n else "none"


def send(label, host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"csrun-suite-udp", (host, port))
    except OSError as e:
        print("DENIED udp %s %s" % (label, ename(e.errno)))
    else:
        print("ALLOWED udp %s sent" % label)
    finally:
        s.close()


send("1.1.1.1:53", "1.1.1.1", 53)
send("8.8.8.8:53", "8.8.8.8", 53)
for ip in [a for a in ARGS.get("hostips", "").split(",") if a]:
    send("host address %s:%s" % (ip, ARGS["udpport"]), ip, int(ARGS["udpport"]))
# To 127.0.0.1 the datagram is sent, but into the jail's own loopback: the host's listener must see nothing.
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"csrun-suite-udp", ("127.0.0.1", int(ARGS["udpport"])))
print("INFO sent to 127.0.0.1:%s (the jail's own loopback)" % ARGS["udpport"])
s.close()
