import tempfile

primes = []
for n in range(2, 30):
    for d in range(2, int(n ** 0.5) + 1):
        if n % d == 0:
            break
    else:
        primes.append(n)
print(primes)

i = 0
while i < 3:
    i += 1
    if i == 2:
        continue
else:
    print("while finished", i)

with tempfile.NamedTemporaryFile("w+", suffix=".txt") as f:
    try:
        f.write("hello\n")
        f.flush()
        f.seek(0)
        print(f.read().strip())
    finally:
        print("done")
