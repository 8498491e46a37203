print(10, 0o777, 0xff, 0)
