import math

name = "Ada"
value = math.pi * 1000
items = {"apples": 3, "pears": 11}
print(f"{name!r:>8}|{value:,.2f}|{value:e}|{int(value):#x}")
print(f"{'nested ' + name.upper()}: {len(items)} kinds")
for fruit, n in items.items():
    print(f"{fruit:<10}{n:>4}{'!' if n > 10 else ''}")
width = 12
print(f"{name:^{width}}|")
print(f"{value=:.1f}")
