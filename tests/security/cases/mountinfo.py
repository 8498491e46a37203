# class: info-leak
# known: the rootfs is bind-mounted from csrun's cache, so mountinfo's root field of / names that host path (and tmpfs options show host uids)
# expect: status=ok; stdout!~LEAK
# why: /proc/self/mountinfo is readable by anyone in the jail: it shows where the rootfs comes from on the host (a path with the user's name in it when rootless) and the uids the jail maps to
import os

lines = open("/proc/self/mountinfo").read().splitlines()
leaks = []
for line in lines:
    f = line.split()
    root, mnt = f[3], f[4]
    sep = f.index("-")
    fstype, source, opts = f[sep + 1], f[sep + 2], f[sep + 3]
    # A bind mount's root field is the path inside its source file system: / is the rootfs, from the cache.
    if mnt == "/" and root != "/":
        leaks.append("LEAK / comes from host path %s (%s on %s)" % (root, fstype, source))
    for opt in opts.split(","):
        if opt.startswith(("uid=", "gid=")) and opt.split("=")[1] not in ("0",):
            leaks.append("LEAK %s: tmpfs option %s (a host id)" % (mnt, opt))
            break
    if fstype == "devtmpfs":
        size = [o for o in opts.split(",") if o.startswith("size=")]
        if size:
            print("INFO %s is the host's devtmpfs (%s: the host's RAM)" % (mnt, size[0]))
for leak in sorted(set(leaks)):
    print(leak)
if not leaks:
    print("DENIED mountinfo shows no host path")
