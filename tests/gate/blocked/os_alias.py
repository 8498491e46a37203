# expect: dangerous-call 7
# expect: dangerous-call 8
import os as o
import os.path as p

print(p.join("a", "b"))
o.system("echo hi")  # VIOLATION: dangerous-call
out = o.popen("date").read()  # VIOLATION: dangerous-call
