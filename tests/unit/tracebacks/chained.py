def parse(text):
    try:
        return int(text)
    except ValueError:
        raise RuntimeError("could not parse " + repr(text))


parse("abc")
