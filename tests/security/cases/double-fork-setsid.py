# class: supervisor
# expect: status=ok; stdout~RESULT daemon started; duration_ms<=15000
# why: the classic daemon (double fork, setsid, SIGTERM/SIGHUP ignored, still holding stdout) must not outlive the snippet: when pid 2 exits the jail ends, no process is left (checked from outside) and csrun does not wait for the timeout (the suite's 20 s; the bound leaves a loaded machine room)
import os
import signal
import time

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        os.write(w, str(os.getpid()).encode())
        os.close(w)
        time.sleep(300)  # keeps stdout and stderr open
        os._exit(0)
    os._exit(0)
os.close(w)
os.waitpid(pid, 0)
grandchild = os.read(r, 32).decode()
print("RESULT daemon started: pid %s in session %d" % (grandchild, os.getsid(int(grandchild))))
