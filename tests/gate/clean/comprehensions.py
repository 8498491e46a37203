matrix = [[r * 3 + c for c in range(3)] for r in range(3)]
transposed = [[row[i] for row in matrix] for i in range(3)]
flat = [x for row in matrix for x in row if x % 2 == 0]
squares = {n: n * n for n in range(6)}
letters = {ch for ch in "mississippi"}
total = sum(x * x for x in range(10) if x % 3)
pairs = [(a, b) for a in range(3) for b in range(a) if (a + b) % 2]
nested = {k: [v for v in range(k)] for k in range(4)}
print(matrix, transposed, flat, sep="\n")
print(squares, sorted(letters), total, pairs, nested)
