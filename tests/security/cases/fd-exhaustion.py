# class: resources
# expect: status=ok; stdout~DENIED open fds EMFILE at 1024 open; stdout~DENIED raise RLIMIT_NOFILE hard limit; stdout!~ALLOWED
# why: RLIMIT_NOFILE is 1024 in the jail and the snippet can't raise its hard limit (no CAP_SYS_RESOURCE)
import errno
import os
import resource


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
print("INFO RLIMIT_NOFILE", soft, hard)
fds = []
err = None
while len(fds) < 100000:
    try:
        fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        err = e.errno
        break
top = max(fds) + 1 if fds else 0
print(("DENIED open fds %s at %d open (highest fd %d)" % (ename(err), len(fds) + 3, top - 1)) if err else ("ALLOWED open fds: %d" % len(fds)))
for fd in fds:
    os.close(fd)
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 16, hard * 16))
    print("ALLOWED raise RLIMIT_NOFILE hard limit to", hard * 16)
except (ValueError, OSError) as e:
    print("DENIED raise RLIMIT_NOFILE hard limit:", type(e).__name__)
