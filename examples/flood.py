# Write 50 MB to stdout.  csrun keeps only the first and the last
# --max-output/2 bytes of each stream (1M in all by default) and reports how
# many bytes it dropped, so a runaway print loop can't fill the caller's memory.
#
#   ./csrun run examples/flood.py | tail -c 300
#   ./csrun run --json --max-output 4K examples/flood.py
import sys

line = "x" * 99 + "\n"
out = sys.stdout
for i in range(500_000):
    out.write(line)
print("done: 500,000 lines of 100 bytes")
