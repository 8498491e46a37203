# expect: broad-except 5
def safe_div(a, b):
    try:
        return a / b
    except Exception as e:  # VIOLATION: broad-except
        print("error:", e)
        return None

print(safe_div(1, 0))
