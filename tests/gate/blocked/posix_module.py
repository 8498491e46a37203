# expect: dangerous-call 4
import posix

posix.system("ls")  # VIOLATION: dangerous-call
