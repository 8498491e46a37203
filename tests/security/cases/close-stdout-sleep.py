# class: supervisor
# options: --timeout 2
# expect: status=timeout; timed_out=true; exit=124; duration_ms>=2000; duration_ms<=25000
# why: closing stdout and stderr is not the end of the snippet: the supervisor must not take EOF for an exit, and must still kill it at the timeout (never before it, and long before the 30 s sleep ends: how soon after it is the scheduler's business on a loaded machine)
import os
import time

os.close(1)
os.close(2)
time.sleep(30)
