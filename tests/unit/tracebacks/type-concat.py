def report(count):
    label = "Result: "
    return label + count


print(report(42))
