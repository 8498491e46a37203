# class: info-leak
# expect: status=ok; stdout~CHECKED; stdout!~LEAK
# why: /proc/self/mountinfo is readable by anyone in the jail: it must not show where the rootfs comes from on the host (a path with the user's name in it when rootless), host mounts, or ids that /proc/self/uid_map does not already show
import re
import sys

args = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
host_paths = [p for p in (args.get("hostdir"), args.get("cachedir")) if p]

text = open("/proc/self/mountinfo").read()
leaks = []
for path in host_paths:
    if path in text:
        leaks.append("LEAK the host path %s is in mountinfo" % path)

# The ids the user namespace maps to are no secret: uid_map/gid_map show them.
mapped = set()
for name in ("uid_map", "gid_map"):
    for line in open("/proc/self/" + name):
        inside, outside, count = (int(x) for x in line.split())
        mapped.update(range(outside, outside + min(count, 65536)))

jail_mounts = {"/", "/proc", "/dev", "/dev/shm", "/dev/pts", "/tmp", "/work"}
for line in text.splitlines():
    f = line.split()
    root, mnt = f[3], f[4]
    sep = f.index("-")
    fstype, source, opts = f[sep + 1], f[sep + 2], f[sep + 3]
    if not (mnt in jail_mounts or mnt.startswith(("/proc/", "/dev/"))):
        leaks.append("LEAK a mount the jail did not make: %s (%s)" % (mnt, fstype))
    # A bind mount's root field is the path inside its source file system.
    if mnt == "/" and root != "/":
        leaks.append("LEAK / comes from host path %s (%s on %s)" % (root, fstype, source))
    if fstype == "overlay":
        for opt in opts.split(","):
            if opt.startswith(("lowerdir=", "upperdir=", "workdir=")):
                for layer in opt.split("=", 1)[1].replace("::", ":").split(":"):
                    if not re.fullmatch(r"/([0-9a-f]{64}|\.empty)", layer):
                        leaks.append("LEAK overlay layer %s of %s" % (layer, mnt))
    for opt in opts.split(","):
        if opt.startswith(("uid=", "gid=")) and int(opt.split("=")[1]) not in mapped:
            leaks.append("LEAK %s: %s is a host id that uid_map/gid_map do not show" % (mnt, opt))
for leak in sorted(set(leaks)):
    print(leak)
print("CHECKED %d mounts" % len(text.splitlines()))
