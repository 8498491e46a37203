# class: resources
# options: --timeout 3
# expect: status=timeout; timed_out=true; signal=SIGKILL; exit=124; stdout~RESULT burning
# why: 8 processes that spin, detach (setsid) and ignore SIGTERM are all killed at --timeout; the result says timeout and nothing is left on the host
import os
import signal

kids = []
for i in range(8):
    pid = os.fork()
    if pid == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        x = 0
        while True:
            x += 1
    kids.append(pid)
print("RESULT burning in %d processes" % len(kids))
signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    pass
