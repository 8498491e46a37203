count = 5
print(f"n={coutn}")
