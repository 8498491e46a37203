# class: resources
# options: --cpus 0.5 --pids 32
# expect: if limits.cpu_enforced=false then status=error; if limits.cpu_enforced=false then exit=125; if limits.cpu_enforced=false then error~--cpus
# expect: if limits.cpu_enforced=true then status=ok; if limits.cpu_enforced=true then stdout~RESULT ran
# why: a limit asked for explicitly is enforced or the run is refused (exit 125, nothing runs) unless --best-effort-limits: never a silent run without it
print("RESULT ran with the limits in force")
