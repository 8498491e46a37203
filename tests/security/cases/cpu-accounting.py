# class: supervisor
# options: --cpus 2 --best-effort-limits --timeout 120
# expect: status=ok; stdout~RESULT burnt; cpu_ms>=3600
# why: cpu_ms must count every process of the jail, also those that never exit and are killed when it ends: here 4 processes burn 1 s of CPU each, 3 of them then sleep until the jail is torn down (4 s of CPU may take much longer than 4 s of wall time on a loaded machine: a generous timeout, the CPU count is what is checked)
import os
import time

r, w = os.pipe()
me = 0
for i in range(3):
    if os.fork() == 0:
        me = i + 1
        break
while time.process_time() < 1.0:
    pass
if me:
    os.write(w, b"x")
    time.sleep(60)  # never exits by itself: killed when the jail ends
    os._exit(0)
got = b""
while len(got) < 3:
    got += os.read(r, 3 - len(got))
print("RESULT burnt about 4.0 s of CPU in 4 processes (pid 2: %.2f s)" % time.process_time())
