# expect: dangerous-call 10
# expect: dangerous-call 11
# expect: dangerous-call 12
# expect: dangerous-call 13
# expect: dangerous-call 14
import os

pid = os.fork()
if pid == 0:
    os.execv("/bin/ls", ["ls"])  # VIOLATION: dangerous-call
    os.execlp("ls", "ls")  # VIOLATION: dangerous-call
os.spawnl(os.P_WAIT, "/bin/true", "true")  # VIOLATION: dangerous-call
os.posix_spawn("/bin/true", ["true"], {})  # VIOLATION: dangerous-call
os.posix_spawnp("true", ["true"], {})  # VIOLATION: dangerous-call
