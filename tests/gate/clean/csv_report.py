import csv
import io
from decimal import Decimal

DATA = """region,product,units,price
north,widget,10,2.50
south,widget,4,2.50
north,gadget,3,10.00
east,gadget,7,9.75
"""

totals = {}
reader = csv.DictReader(io.StringIO(DATA))
for row in reader:
    revenue = int(row["units"]) * Decimal(row["price"])
    totals[row["region"]] = totals.get(row["region"], Decimal("0")) + revenue

out = io.StringIO()
writer = csv.writer(out)
writer.writerow(["region", "revenue"])
for region in sorted(totals):
    writer.writerow([region, f"{totals[region]:.2f}"])
print(out.getvalue(), end="")
