# expect: dangerous-call 5
# expect: dangerous-call 7
import os

os.system.__call__("ls")  # VIOLATION: dangerous-call
callbacks = []
callbacks.append(os.execv)  # VIOLATION: dangerous-call
