import threading
import warnings


def worker():
    raise OSError("disk on fire")


warnings.warn("old api", DeprecationWarning, stacklevel=1)
warnings.warn("careful", UserWarning)
t = threading.Thread(target=worker)
t.start()
t.join()
print("done")
result = {}["missing"]
