# expect: dangerous-call 11
# expect: dangerous-call 12
import os
import subprocess


def run_cmd(fn, cmd):
    return fn(cmd)


run_cmd(os.system, "ls")  # VIOLATION: dangerous-call
handlers = {"shell": subprocess.call}  # VIOLATION: dangerous-call
print(handlers)
