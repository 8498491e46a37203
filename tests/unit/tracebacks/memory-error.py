def grow():
    raise MemoryError


grow()
