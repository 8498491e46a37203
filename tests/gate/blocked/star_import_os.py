# expect: dangerous-call 5
from os import *

print(getcwd())
system("ls")  # VIOLATION: dangerous-call
