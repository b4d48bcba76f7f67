"""A small model: items, baskets and linked nodes."""
import asyncio
import threading
import time

from dataclay import DataClayObject, activemethod


class AlwaysEqual(str):
    """A str that claims to equal anything: model code that would make a change pass as no change."""

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class OutOfStock(Exception):
    """A model-defined exception."""


class Item(DataClayObject):
    name: str
    price: int
    tags: list
    cache = None

    def __init__(self, name: str, price: int):
        self.name = name
        self.price = price
        self.tags = []

    @activemethod
    def raise_price(self, by: int) -> int:
        self.price += by
        return self.price

    @activemethod
    def tag(self, tag: str) -> None:
        self.tags.append(tag)

    @activemethod
    def describe(self) -> str:
        return f"{self.name} costs {self.price}"

    @activemethod
    def spin(self, seconds: float) -> int:
        """Hostile model code: keeps a CPU (and, between the interpreter's switches, the GIL) for `seconds`."""
        turns, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            turns += 1
        return turns

    @activemethod
    def served_by(self) -> str:
        """The name of the environment thread that runs this call."""
        return threading.current_thread().name

    @activemethod
    def fail_after_change(self, message: str) -> None:
        self.price = -1
        raise ValueError(message)

    @activemethod
    def exhaust_memory(self, said: str = "") -> None:
        """Fails as an allocation past the process's memory limit does (with nothing to say, as CPython's)."""
        raise MemoryError(said) if said else MemoryError()

    @activemethod
    def drop_tags(self) -> None:
        del self.tags

    @activemethod
    async def appraise(self, delay: float = 0.0) -> str:
        """An `async def` active method: awaits `delay` seconds, then raises the price by one."""
        await asyncio.sleep(delay)
        self.price += 1
        return f"{self.name} now costs {self.price}"

    def label(self) -> str:
        """Not active: runs where it is called."""
        return f"{self.name}:{self.price}"


class Basket(DataClayObject):
    owner: str
    items: list
    note: str = "none"

    def __init__(self, owner: str, items=None):
        self.owner = owner
        self.items = list(items or [])

    @activemethod
    def add(self, item: Item) -> int:
        self.items.append(item)
        return len(self.items)

    @activemethod
    def total(self) -> int:
        return sum(item.price for item in self.items)

    @activemethod
    def take(self, name: str) -> Item:
        for item in self.items:
            if item.name == name:
                self.items.remove(item)
                return item
        raise OutOfStock(name)

    @activemethod
    def first(self) -> Item:
        return self.items[0]

    @activemethod
    def raise_all(self, by: int) -> list:
        return [item.raise_price(by) for item in self.items]

    @activemethod
    def new_basket_for(self, owner: str) -> "Basket":
        return Basket(owner, [Item("gift", 1)])


class Node(DataClayObject):
    value: int
    next: "Node"

    def __init__(self, value: int, next: "Node" = None):
        self.value = value
        self.next = next

    @activemethod
    def walk(self, steps: int) -> list:
        out, node = [], self
        for _ in range(steps):
            out.append(node.value)
            node = node.next
        return out
