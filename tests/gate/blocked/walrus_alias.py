# expect: dangerous-call 5
import os

if (f := os.popen):
    f("ls")  # VIOLATION: dangerous-call
