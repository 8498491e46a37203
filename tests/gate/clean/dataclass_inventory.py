from dataclasses import dataclass, field, asdict
from typing import List


@dataclass(order=True)
class Item:
    sort_key: float = field(init=False, repr=False)
    name: str
    price: float
    tags: List[str] = field(default_factory=list)

    def __post_init__(self):
        self.sort_key = self.price


@dataclass
class Inventory:
    items: List[Item] = field(default_factory=list)

    def add(self, *items: Item) -> None:
        self.items.extend(items)

    @property
    def total(self) -> float:
        return sum(i.price for i in self.items)


inv = Inventory()
inv.add(Item("lamp", 19.5, ["home"]), Item("pen", 1.25), Item("desk", 120.0, ["home", "office"]))
for item in sorted(inv.items):
    print(asdict(item))
print(f"total: {inv.total:.2f}")
