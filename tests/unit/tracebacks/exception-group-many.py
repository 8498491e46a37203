errors = [ValueError(f"item {i}") for i in range(20)]
raise ExceptionGroup("validation", errors)
