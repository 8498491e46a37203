# expect: dangerous-call 7
# expect: dangerous-call 8
# expect: dangerous-call 10
import os
import os as o

getattr(os, "system")("ls")  # VIOLATION: dangerous-call
getattr(o, "sys" "tem")("id")  # VIOLATION: dangerous-call
run = getattr(o, "po" + "pen")
run("date")  # VIOLATION: dangerous-call
