café = "coffee"
größe = 3
naïve_total = sum(range(größe))
print(f"{café} × {größe} = {naïve_total}")
données = {"clé": "valeur"}
print(données["clé"])
