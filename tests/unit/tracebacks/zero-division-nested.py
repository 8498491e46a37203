def mean(xs):
    return sum(xs) / len(xs)


def summarize(groups):
    out = {}
    for name, xs in groups.items():
        out[name] = mean(xs)
    return out


print(summarize({"a": [1, 2], "b": []}))
