# expect: dangerous-call 7
# expect: dangerous-call 8
from os import system, listdir
from os import popen as po

print(listdir("."))
system("whoami")  # VIOLATION: dangerous-call
po("id")  # VIOLATION: dangerous-call
