# expect: dangerous-call 4
from subprocess import Popen as P, PIPE

proc = P(["ls"], stdout=PIPE)  # VIOLATION: dangerous-call
print(proc.communicate()[0])
