import contextlib
import time


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.elapsed = time.perf_counter() - self.start
        return False


@contextlib.contextmanager
def tag(name):
    print(f"<{name}>")
    try:
        yield name
    finally:
        print(f"</{name}>")


with Timer() as t, tag("body") as label:
    print("inside", label)
print("took less than a second:", t.elapsed < 1)
with contextlib.suppress(FileNotFoundError):
    open("/nonexistent/file")
