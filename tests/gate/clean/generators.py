import itertools


def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b


def chunks(seq, size):
    it = iter(seq)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def flatten(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from flatten(item)
        else:
            yield item


print(list(itertools.islice(fib(), 12)))
print(list(chunks(range(10), 4)))
print(list(flatten([1, [2, [3, (4, 5)]], 6])))
gen = (x * 2 for x in range(5))
print(next(gen), sum(gen))
