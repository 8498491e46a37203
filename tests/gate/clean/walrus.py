import re

lines = ["id=17 ok", "noise", "id=4 fail", "id=99 ok"]
matches = [(m.group(1), status) for line in lines if (m := re.match(r"id=(\d+) (\w+)", line)) for status in [m.group(2)]]
print(matches)

data = [5, 3, 8, 1]
while (n := len(data)) > 2:
    data.pop()
print(n, data)
if (total := sum(data)) > 5:
    print("total", total)
