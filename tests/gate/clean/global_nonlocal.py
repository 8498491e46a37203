counter = 0


def bump(by=1):
    global counter
    counter += by
    return counter


def make_accumulator():
    total = 0

    def add(x):
        nonlocal total
        total += x
        return total

    return add


acc = make_accumulator()
for i in range(4):
    bump()
    acc(i)
print(counter, acc(0))
