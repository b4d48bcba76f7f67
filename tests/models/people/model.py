"""Classes the integration tests register as a model."""
import asyncio
import time

from dataclay import DataClayObject, activemethod


class InsufficientFunds(Exception):
    """A model-defined exception: it must reach clients as itself."""


class Person(DataClayObject):
    name: str
    age: int
    friends: list

    def __init__(self, name: str, age: int):
        self.name = name
        self.age = age
        self.friends = []

    @activemethod
    def birthday(self) -> int:
        self.age += 1
        return self.age

    @activemethod
    def add_friend(self, other: "Person") -> None:
        self.friends.append(other)

    @activemethod
    def friend_names(self) -> list:
        return [f.name for f in self.friends]

    @activemethod
    def forget_friends(self) -> None:
        """Deletes the friends field: reading it afterwards fails with AttributeError."""
        del self.friends

    @activemethod
    def fail(self, message: str) -> None:
        raise ValueError(message)

    def greeting(self) -> str:
        """Not an active method: runs where it is called, reading fields (remotely on a proxy)."""
        return f"hello, {self.name}"


class Account(DataClayObject):
    owner: str
    balance: int
    history: list

    def __init__(self, owner: str, balance: int = 0):
        self.owner = owner
        self.balance = balance
        self.history = []

    @activemethod
    def deposit(self, amount: int) -> int:
        self.balance += amount
        self.history.append(amount)
        return self.balance

    @activemethod
    def withdraw(self, amount: int) -> int:
        if amount > self.balance:
            raise InsufficientFunds(f"balance {self.balance} < {amount}")
        self.balance -= amount
        self.history.append(-amount)
        return self.balance

    @activemethod
    def audit(self) -> bool:
        """True when the balance equals the sum of the history: a torn object would fail it."""
        return self.balance == sum(self.history)


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


class Counter(DataClayObject):
    value: int

    def __init__(self, value: int = 0):
        self.value = value

    @activemethod
    def increment(self, n: int = 1) -> int:
        self.value += n
        return self.value

    @activemethod
    def get(self) -> int:
        return self.value

    @activemethod
    def get_computed(self) -> int:
        """The value, computed where the object lives: never answered from the store (unlike get())."""
        return self.value + 0

    @activemethod
    def get_after(self, seconds: float) -> int:
        """The value, after sleeping `seconds` in the backend: a slow synchronous call."""
        time.sleep(seconds)
        return self.value

    @activemethod
    async def increment_later(self, n: int = 1, delay: float = 0.0) -> int:
        """An `async def` active method: waits `delay` seconds in the backend, then increments."""
        await asyncio.sleep(delay)
        self.value += n
        return self.value


class Probe(DataClayObject):
    """Model code as an attacker would register it: it reports what its process can see."""
    label: str

    def __init__(self, label: str = "probe"):
        self.label = label

    @activemethod
    def environment(self) -> dict:
        import os
        return dict(os.environ)
