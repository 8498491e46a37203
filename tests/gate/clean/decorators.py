import functools


def retry(times):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for attempt in range(1, times + 1):
                try:
                    return fn(*args, **kwargs)
                except ZeroDivisionError:
                    print(f"attempt {attempt} failed")
            return None

        return wrapper

    return deco


calls = []


@retry(3)
def flaky(x):
    calls.append(x)
    return 10 / (len(calls) - 1)


@functools.lru_cache(maxsize=None)
def slow_square(n):
    return n * n


print(flaky.__name__, flaky(1))
print([slow_square(i) for i in range(5)], slow_square.cache_info().hits)
