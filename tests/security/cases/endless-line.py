# class: supervisor
# options: --timeout 3
# expect: status=timeout; stdout_bytes>=50000000; stderr_bytes>=50000000; len(stdout)<=1100000; len(stderr)<=1100000
# why: one line that never ends (no newline, on both streams, until the timeout): the supervisor's line handling must not buffer it whole
import os

chunk = b"y" * (1 << 20)
while True:
    os.write(1, chunk)
    os.write(2, chunk)
