# expect: dangerous-call 9
# expect: dangerous-call 11
# expect: dangerous-call 12
# expect: dangerous-call 13
# expect: dangerous-call 14
# expect: dangerous-call 14
import subprocess as sp

r = sp.run(["ls", "-l"], capture_output=True)  # VIOLATION: dangerous-call
print(r.stdout)
text = sp.check_output("uname -a", shell=True)  # VIOLATION: dangerous-call
code = sp.call(["true"])  # VIOLATION: dangerous-call
sp.check_call(["true"])  # VIOLATION: dangerous-call
print(sp.getoutput("id"), sp.getstatusoutput("id"))  # VIOLATION: dangerous-call dangerous-call
