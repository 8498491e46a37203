def validate(rows):
    problems = [f"row {i}: empty" for i, r in enumerate(rows) if not r]
    if problems:
        raise ValueError("validation failed:\n" + "\n".join(problems))


validate(["a", "", "b", ""])
