def check(total):
    assert total > 0


check(-1)
