def parse_age(text):
    try:
        age = int(text)
    except ValueError as e:
        raise ValueError(f"not a number: {text!r}") from e
    else:
        if age < 0:
            raise ValueError("negative age")
        return age
    finally:
        print(f"parsed {text!r}")


records = {"alice": "31", "bob": "x", "carol": "-4"}
for who in ["alice", "bob", "carol", "dave"]:
    try:
        print(who, parse_age(records[who]))
    except KeyError:
        print(who, "missing")
    except (TypeError, ValueError) as err:
        print(who, "invalid:", err)
