# class: network
# expect: status=ok; stdout~DENIED interfaces: only lo; stdout~DENIED set lo down; stdout~DENIED create dummy link; stdout!~ALLOWED
# why: --net none means an empty network namespace with only lo up, which the snippet can't reconfigure (no CAP_NET_ADMIN): no way to add an interface or route out
import errno
import fcntl
import socket
import struct


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


names = [n for _, n in socket.if_nameindex()]
print(("DENIED interfaces: only lo" if names == ["lo"] else "ALLOWED interfaces: %s" % names))
SIOCGIFFLAGS, SIOCSIFFLAGS = 0x8913, 0x8914
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack_from("H", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0)), 16)[0]
try:
    fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags & ~1))
    print("ALLOWED set lo down")
    fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags))
except OSError as e:
    print("DENIED set lo down", ename(e.errno))
s.close()

# RTM_NEWLINK for a "dummy" link over route netlink.
nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
nl.bind((0, 0))
kind = b"dummy\0"
linkinfo_kind = struct.pack("HH", 4 + len(kind), 1) + kind + b"\0" * (-len(kind) % 4)  # IFLA_INFO_KIND
linkinfo = struct.pack("HH", 4 + len(linkinfo_kind), 18) + linkinfo_kind  # IFLA_LINKINFO
ifname = b"csrun0\0"
ifname_attr = struct.pack("HH", 4 + len(ifname), 3) + ifname + b"\0" * (-len(ifname) % 4)  # IFLA_IFNAME
body = struct.pack("BBHiII", 0, 0, 0, 0, 0, 0) + ifname_attr + linkinfo  # struct ifinfomsg + attrs
NLM_F_REQUEST, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL = 1, 4, 0x400, 0x200
msg = struct.pack("IHHII", 16 + len(body), 16, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 1, 0) + body
nl.send(msg)
reply = nl.recv(4096)
code = -struct.unpack_from("i", reply, 16)[0]
print(("ALLOWED create dummy link" if code == 0 else "DENIED create dummy link %s" % ename(code)))
nl.close()
