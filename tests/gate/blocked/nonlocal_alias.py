# expect: dangerous-call 13
import subprocess


def outer():
    runner = print

    def set_runner():
        nonlocal runner
        runner = subprocess.check_call

    set_runner()
    runner(["ls"])  # VIOLATION: dangerous-call


outer()
