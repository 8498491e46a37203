# expect: dangerous-call 4
import pty

pty.spawn("/bin/sh")  # VIOLATION: dangerous-call
