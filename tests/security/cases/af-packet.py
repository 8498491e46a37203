# class: network
# expect: status=ok; stdout~DENIED AF_PACKET SOCK_RAW; stdout~DENIED AF_PACKET SOCK_DGRAM; stdout~DENIED AF_INET SOCK_PACKET; stdout!~ALLOWED
# why: packet sockets see and inject link-layer frames: no CAP_NET_RAW, and seccomp allows only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK
import errno
import socket

ETH_P_ALL = 0x0003
SOCK_PACKET = 10


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for label, fam, typ, proto in (("AF_PACKET SOCK_RAW", socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL)),
                               ("AF_PACKET SOCK_DGRAM", socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL)),
                               ("AF_INET SOCK_PACKET", socket.AF_INET, SOCK_PACKET, socket.htons(ETH_P_ALL))):
    try:
        s = socket.socket(fam, typ, proto)
    except OSError as e:
        print("DENIED", label, ename(e.errno))
    else:
        print("ALLOWED", label)
        s.close()
