# expect: broad-except 7
import time

def wait():
    try:
        time.sleep(0.01)
    except BaseException:  # VIOLATION: broad-except
        pass

wait()
