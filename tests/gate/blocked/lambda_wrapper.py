# expect: dangerous-call 4
import subprocess

sh = lambda cmd: subprocess.run(cmd, shell=True)  # VIOLATION: dangerous-call
sh("ls")
