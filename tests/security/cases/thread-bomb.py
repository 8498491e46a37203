# class: resources
# options: --pids 64 --timeout 10
# expect: status=ok; stdout~RESULT thread-limited; stdout!~UNLIMITED
# why: threads are tasks too: a thread bomb must hit the pids limit like a fork bomb
import threading
import time

CAP = 2000
threading.stack_size(256 * 1024)  # so that the limit hit is the task limit, not address space
stop = threading.Event()
n = 0
start = time.monotonic()
try:
    while n < CAP:
        t = threading.Thread(target=stop.wait, daemon=True)
        t.start()
        n += 1
except RuntimeError as e:
    print("RESULT thread-limited: %r after %d threads in %.2fs" % (str(e), n, time.monotonic() - start))
else:
    print("RESULT UNLIMITED: %d threads started" % n)
stop.set()
