# class: resources
# options: --memory 128M --timeout 20
# expect: limits.memory_enforced=true; limits.mechanism!=none; status=failed; stdout!~UNLIMITED
# expect: if limits.mechanism~cgroup then diagnosis=OutOfMemory; if limits.mechanism=rlimit then diagnosis=MemoryError
# why: with --memory 128M the jail is OOM-killed in its cgroup (diagnosis OutOfMemory) or, on the rlimit fallback, gets a MemoryError; either way it is reported, and the host is untouched
import sys

CAP_MIB = 1024  # safety net: stop at 1 GiB and say so
chunks = []
for i in range(CAP_MIB):
    chunks.append(b"\x01" * (1 << 20))  # written, so really resident
    if i % 64 == 0:
        sys.stdout.write("INFO %d MiB\n" % i)
print("RESULT UNLIMITED: %d MiB allocated under --memory 128M" % CAP_MIB)
