rows = [("a", 1), ("b", 2)]
counts = Counter()
for key, n in rows:
    counts[key] += n
print(counts)
