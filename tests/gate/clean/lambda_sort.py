from operator import itemgetter

people = [("ann", 31, "oslo"), ("bob", 25, "rome"), ("cid", 31, "lima"), ("dee", 19, "oslo")]
by_age_then_name = sorted(people, key=lambda p: (-p[1], p[0]))
print(by_age_then_name)
print(sorted(people, key=itemgetter(2)))
adults = list(filter(lambda p: p[1] >= 21, people))
names = list(map(lambda p: p[0].title(), adults))
print(names)
scale = lambda factor: (lambda x: x * factor)
print(scale(3)(7), (lambda *a, **k: (a, k))(1, 2, z=3))
