# class: network
# expect: status=ok; stdout~DENIED AF_ALG; stdout~DENIED AF_VSOCK; stdout~DENIED AF_KEY; stdout~DENIED AF_XDP; stdout~DENIED AF_TIPC
# expect: stdout~DENIED AF_RDS; stdout~DENIED AF_CAN; stdout~DENIED AF_BLUETOOTH; stdout!~ALLOWED; stdout~INFO AF_NETLINK
# why: rarely used socket families (crypto API, vsock to the hypervisor, IPsec keys, XDP, TIPC, RDS, CAN, Bluetooth) are a big share of kernel CVEs; only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK are allowed
import errno
import socket


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


FAMILIES = (("AF_ALG", 38, socket.SOCK_SEQPACKET, 0), ("AF_VSOCK", 40, socket.SOCK_STREAM, 0),
            ("AF_KEY", 15, socket.SOCK_RAW, 2), ("AF_XDP", 44, socket.SOCK_RAW, 0),
            ("AF_TIPC", 30, socket.SOCK_RDM, 0), ("AF_RDS", 21, socket.SOCK_SEQPACKET, 0),
            ("AF_CAN", 29, socket.SOCK_RAW, 1), ("AF_BLUETOOTH", 31, socket.SOCK_RAW, 0),
            ("AF_APPLETALK", 5, socket.SOCK_DGRAM, 0), ("AF_X25", 9, socket.SOCK_SEQPACKET, 0),
            ("AF_AX25", 3, socket.SOCK_SEQPACKET, 0), ("AF_LLC", 26, socket.SOCK_DGRAM, 0),
            ("AF_PPPOX", 24, socket.SOCK_STREAM, 0), ("AF_NFC", 39, socket.SOCK_DGRAM, 0),
            ("AF_SMC", 43, socket.SOCK_STREAM, 0), ("AF_MCTP", 45, socket.SOCK_DGRAM, 0))
for label, fam, typ, proto in FAMILIES:
    try:
        s = socket.socket(fam, typ, proto)
    except OSError as e:
        print("DENIED", label, ename(e.errno))
    else:
        print("ALLOWED", label, "socket created")
        s.close()
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
print("INFO AF_NETLINK allowed (route netlink of the jail's own namespace)")
s.close()
