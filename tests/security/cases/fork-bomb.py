# class: resources
# options: --pids 64 --timeout 10
# expect: status=ok; stdout~RESULT fork-limited; stdout!~UNLIMITED
# why: a fork bomb must hit the pids limit (cgroup pids.max, or RLIMIT_NPROC as the fallback) quickly; the jail ends, nothing is left and the host keeps working
import errno
import os
import select
import time

# Safety net for a jail without a pids limit: a pipe holding CAP tokens; a process takes one
# (an atomic one-byte read) before each fork, so the whole tree stops at CAP forks.
CAP = 200
tokens_r, tokens_w = os.pipe()
os.write(tokens_w, b"t" * CAP)
os.set_blocking(tokens_r, False)
report_r, report_w = os.pipe()


def bomb(depth):
    """Fork as long as fork works; children do the same, three generations deep (deep fork
    chains make the kernel's teardown of the tree slow, which is not what is tested here)."""
    while True:
        try:
            os.read(tokens_r, 1)
        except BlockingIOError:
            os.write(report_w, b"U")
            time.sleep(60)
            os._exit(0)
        try:
            pid = os.fork()
        except OSError as e:
            os.write(report_w, b"L" if e.errno == errno.EAGAIN else b"E")
            time.sleep(60)  # hold the slot
            os._exit(0)
        if pid == 0:
            if depth >= 3:
                time.sleep(60)
                os._exit(0)
            depth += 1


start = time.monotonic()
if os.fork() == 0:
    bomb(1)
ready, _, _ = select.select([report_r], [], [], 8)
what = os.read(report_r, 1) if ready else b""
took = time.monotonic() - start
left = 0
try:
    left = len(os.read(tokens_r, CAP))
except BlockingIOError:
    pass
forks = CAP - left
if what == b"L":
    print("RESULT fork-limited: EAGAIN after about %d forks in %.2fs" % (forks, took))
elif what == b"U":
    print("RESULT UNLIMITED: %d forks and fork still works" % forks)
elif what == b"E":
    print("RESULT fork failed with another error after about %d forks" % forks)
else:
    print("RESULT no answer in 8s (%d forks)" % forks)
# Returning ends the jail: init exits, and the kernel kills the rest of the tree.
