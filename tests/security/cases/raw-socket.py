# class: network
# expect: status=ok; stdout~DENIED raw AF_INET ICMP; stdout~DENIED raw AF_INET IPPROTO_RAW; stdout~DENIED raw AF_INET6 ICMPV6; stdout~DENIED ping socket; stdout!~ALLOWED
# why: raw sockets forge packets and sniff traffic: they need CAP_NET_RAW, which the jail does not have (ping sockets are off in the jail's namespace too)
import errno
import socket


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for label, fam, typ, proto in (("raw AF_INET ICMP", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
                               ("raw AF_INET IPPROTO_RAW", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW),
                               ("raw AF_INET6 ICMPV6", socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6),
                               ("ping socket", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)):
    try:
        s = socket.socket(fam, typ, proto)
    except OSError as e:
        print("DENIED", label, ename(e.errno))
    else:
        print("ALLOWED", label)
        s.close()
