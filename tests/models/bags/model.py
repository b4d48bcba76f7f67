"""Classes the garbage-collection tests register: bags handing items to each other."""
from dataclay import DataClayObject, activemethod


class Item(DataClayObject):
    value: int

    def __init__(self, value: int):
        self.value = value

    @activemethod
    def get(self) -> int:
        return self.value


class Bag(DataClayObject):
    items: list

    def __init__(self):
        self.items = []

    @activemethod
    def put(self, item: Item) -> None:
        self.items.append(item)

    @activemethod
    def give(self, other: "Bag", n: int) -> int:
        """Moves up to n items to `other`: each is in `other` before this bag lets go of it."""
        moved = 0
        while self.items and moved < n:
            other.put(self.items[-1])
            self.items.pop()
            moved += 1
        return moved

    @activemethod
    def take_all(self) -> list:
        """Empties the bag and returns what it held."""
        items, self.items = self.items, []
        return items

    @activemethod
    def ids(self) -> list:
        return [item.getID() for item in self.items]
