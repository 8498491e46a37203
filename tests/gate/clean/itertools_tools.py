from itertools import accumulate, chain, combinations, groupby, product, zip_longest

sales = [("mon", 3), ("mon", 5), ("tue", 1), ("wed", 4), ("wed", 4)]
for day, group in groupby(sales, key=lambda s: s[0]):
    print(day, sum(n for _, n in group))
print(list(accumulate([1, 2, 3, 4])), list(chain("ab", [1, 2])))
print(list(product("xy", repeat=2)), list(combinations(range(4), 2)))
print(list(zip_longest([1, 2, 3], "ab", fillvalue="-")))
