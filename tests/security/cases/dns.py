# class: network
# expect: status=ok; stdout~DENIED dns example.com; stdout~DENIED dns pypi.org; stdout~DENIED udp query 8.8.8.8:53; stdout!~ALLOWED
# why: no DNS in the jail: names don't resolve (no resolver configuration and no route), so DNS can't be used to exfiltrate data either
import errno
import os
import socket


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


for f in ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"):
    try:
        print("INFO %s:" % f, open(f).read().strip().replace("\n", " | ")[:200])
    except OSError as e:
        print("INFO %s %s" % (f, ename(e.errno)))
for name in ("example.com", "pypi.org", "csrun-exfil-test.example.org"):
    try:
        infos = socket.getaddrinfo(name, 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as e:
        print("DENIED dns %s gaierror %s" % (name, e.args[0]))
    except OSError as e:
        print("DENIED dns %s %s" % (name, ename(e.errno)))
    else:
        print("ALLOWED dns %s ->" % name, sorted({i[4][0] for i in infos}))
query = bytes.fromhex("abcd01000001000000000000076578616d706c6503636f6d0000010001")  # A example.com
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(query, ("8.8.8.8", 53))
    print("ALLOWED udp query 8.8.8.8:53 sent")
except OSError as e:
    print("DENIED udp query 8.8.8.8:53", ename(e.errno))
s.close()
