# expect: dangerous-call 6
# expect: dangerous-call 7
import importlib

sp = importlib.import_module("subprocess")
sp.run(["ls"])  # VIOLATION: dangerous-call
importlib.import_module("os").popen("id")  # VIOLATION: dangerous-call
