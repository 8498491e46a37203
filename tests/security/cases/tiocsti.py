# class: escape
# host-tty: yes
# expect: status=ok; stdout~INFO fd0 -> /dev/null; stdout~DENIED TIOCSTI fd 0; stdout~DENIED TIOCSTI fd 1; stdout~DENIED TIOCSTI fd 2; stdout~DENIED open /dev/tty
# expect: stdout~DENIED TIOCSTI own controlling pty; stdout~DENIED TIOCSTI|1<<32 own controlling pty; stdout~DENIED TIOCLINUX fd 0; stdout!~ALLOWED
# why: TIOCSTI pushes keystrokes into a terminal's input queue: with the host terminal that is a command typed in the user's shell; csrun runs here with a host pty as stdin and controlling terminal, and nothing may reach it; the filter denies TIOCSTI on any tty, also with high bits set in the request
import ctypes
import errno
import fcntl
import os
import termios

libc = ctypes.CDLL(None, use_errno=True)
TIOCLINUX = 0x541C


def ename(n):
    return errno.errorcode.get(n, "errno%d" % n)


def sti(label, fd, request=termios.TIOCSTI):
    c = ctypes.c_char(b"#")
    if libc.ioctl(fd, ctypes.c_ulong(request), ctypes.byref(c)) != 0:
        return "DENIED TIOCSTI%s %s %s" % ("|1<<32" if request >> 32 else "", label, ename(ctypes.get_errno()))
    return "ALLOWED TIOCSTI%s %s" % ("|1<<32" if request >> 32 else "", label)


for fd in (0, 1, 2):
    print("INFO fd%d -> %s" % (fd, os.readlink("/proc/self/fd/%d" % fd)))
    print(sti("fd %d" % fd, fd))
try:
    tty = os.open("/dev/tty", os.O_RDWR)
    print("ALLOWED open /dev/tty")
    print(sti("/dev/tty", tty))
except OSError as e:
    print("DENIED open /dev/tty", ename(e.errno))

# A pty of the jail's own devpts made the controlling terminal of a new session: the kernel
# itself would let TIOCSTI through here (legacy_tiocsti), so only the seccomp filter answers.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    out = []
    try:
        os.setsid()
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        out.append(sti("own controlling pty", slave))
        out.append(sti("own controlling pty", slave, termios.TIOCSTI | (1 << 32)))
    except OSError as e:
        out.append("INFO own pty set-up failed %s" % ename(e.errno))
    os.write(w, ("\n".join(out) + "\n").encode())
    os._exit(0)
os.close(w)
data = b""
while True:
    chunk = os.read(r, 4096)
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
print(data.decode().rstrip("\n"))

sel = ctypes.c_char(b"\x0b")  # TIOCL_GETKMSGREDIRECT: a harmless query
if libc.ioctl(0, ctypes.c_ulong(TIOCLINUX), ctypes.byref(sel)) != 0:
    print("DENIED TIOCLINUX fd 0", ename(ctypes.get_errno()))
else:
    print("ALLOWED TIOCLINUX fd 0")
