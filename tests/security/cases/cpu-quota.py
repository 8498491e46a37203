# class: resources
# options: --cpus 0.5 --timeout 2 --best-effort-limits
# expect: status=timeout; stdout~RESULT spinning; if limits.cpu_enforced=true then cpu_ms<=1400
# expect: if limits.cpu_enforced=false then limits.mechanism!~cgroup
# why: 4 spinning processes under --cpus 0.5 get about half a CPU in all (cpu_ms ~ 1000 in 2 s, not 2000-4000); where no cgroup can do it, the result must not claim it
import os

for i in range(3):
    if os.fork() == 0:
        break
else:
    print("RESULT spinning in 4 processes")
x = 0
while True:
    x += 1
