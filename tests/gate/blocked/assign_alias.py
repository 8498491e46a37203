# expect: dangerous-call 9
# expect: dangerous-call 10
# expect: dangerous-call 15
import os
import subprocess

f = os.system
g = f
f("ls")  # VIOLATION: dangerous-call
g("id")  # VIOLATION: dangerous-call


def helper(cmd):
    runner = subprocess.check_output
    return runner(cmd)  # VIOLATION: dangerous-call


print(helper(["true"]))
