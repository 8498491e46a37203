# expect: dangerous-call 5
import sys
import os

sys.modules["os"].system("ls")  # VIOLATION: dangerous-call
m = sys.modules["subprocess" if os else "x"]
