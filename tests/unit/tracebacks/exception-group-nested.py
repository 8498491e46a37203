def task(n):
    if n == 1:
        raise ValueError("task 1 failed")
    raise TypeError(f"task {n} failed")


def run_all():
    errs = []
    for n in (1, 2):
        try:
            task(n)
        except Exception as e:
            errs.append(e)
    raise ExceptionGroup("tasks failed", errs)


run_all()
