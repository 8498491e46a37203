def make_counter(start=0):
    count = start

    def step(n=1):
        nonlocal count
        count += n
        return count

    def reset():
        nonlocal count
        count = start

    return step, reset


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


def outer():
    def middle():
        def inner():
            return "inner"

        return inner() + " via middle"

    return middle()


step, reset = make_counter(10)
print(step(), step(5))
reset()
print(step(), fact(10), outer())
