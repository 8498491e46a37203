# class: escape
# expect: status=ok; stdout~RESULT shell ran; stdout~DENIED shell write /etc; stdout~DENIED shell read /proc/1/environ; stdout~DENIED shell exec from /dev/shm
# expect: stdout!~ALLOWED
# why: the gate is a policy layer, not the boundary: it refuses os.system and os.exec*, but ctypes reaches execve all the same; the shell that runs is still inside the jail (read-only root, init's /proc closed, /dev/shm noexec)
import ctypes
import os
import shutil

libc = ctypes.CDLL(None, use_errno=True)
for d in ("/tmp", "/dev/shm"):
    shutil.copy("/bin/sh", d + "/sh")
    os.chmod(d + "/sh", 0o755)
script = r"""
echo "RESULT shell ran as pid $$ in $(pwd)"
if echo x > /etc/csrun-gate-bypass 2>/dev/null; then echo "ALLOWED shell write /etc"; else echo "DENIED shell write /etc"; fi
if read -r line < /proc/1/environ 2>/dev/null; then echo "ALLOWED shell read /proc/1/environ"; else echo "DENIED shell read /proc/1/environ"; fi
if /dev/shm/sh -c true 2>/dev/null; then echo "ALLOWED shell exec from /dev/shm"; else echo "DENIED shell exec from /dev/shm (noexec)"; fi
if /tmp/sh -c true 2>/dev/null; then echo "INFO a copied shell runs from /tmp (inside the same jail)"; else echo "INFO no exec from /tmp"; fi
"""
argv = (ctypes.c_char_p * 4)(b"/bin/sh", b"-c", script.encode(), None)
envp = (ctypes.c_char_p * 2)(b"PATH=/usr/bin:/bin", None)
libc.execve(b"/bin/sh", argv, envp)
print("INFO execve failed", ctypes.get_errno())
