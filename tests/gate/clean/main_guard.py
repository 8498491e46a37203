import sys


def mean(values):
    return sum(values) / len(values) if values else 0.0


def main(argv):
    values = [float(a) for a in argv[1:]] or [1.0, 2.0, 3.0, 4.0]
    print(f"mean of {len(values)} values: {mean(values):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
