# class: escape
# expect: status=ok; stdout~DENIED write /usr/bin/python3; stdout~DENIED create /etc/csrun-pwned; stdout~DENIED chmod /usr/bin/python3
# expect: stdout~DENIED utime /etc/passwd; stdout~DENIED create /dev/pwned; stdout~DENIED create /usr/lib/python3; stdout!~ALLOWED
# why: the rootfs is the shared, cached tree every later run starts from: a write there would poison every other jail (and, rootless, it is the user's own files)
import errno
import glob
import os


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def attempt(label, fn):
    try:
        fn()
    except OSError as e:
        print("DENIED", label, ename(e.errno))
        return
    print("ALLOWED", label)


attempt("write /usr/bin/python3", lambda: os.close(os.open("/usr/bin/python3", os.O_WRONLY | os.O_APPEND)))
attempt("create /etc/csrun-pwned", lambda: os.close(os.open("/etc/csrun-pwned", os.O_WRONLY | os.O_CREAT, 0o644)))
attempt("chmod /usr/bin/python3", lambda: os.chmod("/usr/bin/python3", 0o4755))
attempt("utime /etc/passwd", lambda: os.utime("/etc/passwd", (0, 0)))
attempt("rename /etc/passwd", lambda: os.rename("/etc/passwd", "/etc/passwd.x"))
attempt("create /dev/pwned", lambda: os.close(os.open("/dev/pwned", os.O_WRONLY | os.O_CREAT, 0o644)))
libdir = sorted(glob.glob("/usr/lib/python3*"))[0]
attempt("create /usr/lib/python3 sitecustomize", lambda: os.close(os.open(libdir + "/sitecustomize.py", os.O_WRONLY | os.O_CREAT, 0o644)))
attempt("symlink in /usr/bin", lambda: os.symlink("/tmp/x", "/usr/bin/pwned"))
