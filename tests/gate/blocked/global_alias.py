# expect: dangerous-call 13
import os

sh = print


def setup():
    global sh
    sh = os.system


setup()
sh("ls")  # VIOLATION: dangerous-call
