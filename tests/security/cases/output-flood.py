# class: supervisor
# options: --timeout 60
# expect: status=ok; stdout_bytes=2147483648; stdout_dropped_bytes>=2146000000; len(stdout)<=1100000; duration_ms<=40000
# why: 2 GiB on stdout: csrun counts every byte, keeps only head and tail (--max-output, 1 MiB) and its own memory stays bounded (checked from outside)
import sys

chunk = b"x" * (1 << 20)
w = sys.stdout.buffer.write
for _ in range(2048):
    w(chunk)
