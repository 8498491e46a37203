# class: supervisor
# expect: status=failed; signal=SIGKILL; diagnosis=Signal; stdout!~survived; stdout~INFO in a pid namespace
# why: kill(-1, SIGKILL) from inside reaches only the jail's own processes (init excepted): here it kills the snippet itself, the supervisor reports the signal, and every host process (the harness's sentinel) survives
import os
import signal
import sys
import time

# Guard: never send kill(-1) from outside a PID namespace (it would hit every process of the user).
pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
if os.getpid() > 16 or len(pids) > 16:
    print("UNSAFE: not in a small PID namespace (pid %d, %d processes): not sending kill(-1)" % (os.getpid(), len(pids)))
    sys.exit(2)
print("INFO in a pid namespace: pid %d, processes %s" % (os.getpid(), sorted(pids)))
sys.stdout.flush()
sleepers = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    sleepers.append(pid)
if os.fork() == 0:
    os.kill(-1, signal.SIGKILL)  # every process it may signal but init and itself
    time.sleep(60)
    os._exit(0)
time.sleep(5)
print("survived kill(-1)")
