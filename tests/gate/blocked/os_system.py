# expect: dangerous-call 5
import os

files = os.listdir(".")
os.system("ls -l")  # VIOLATION: dangerous-call
print(files)
