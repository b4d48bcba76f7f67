"""The tour's model: test_types.py checks what a type checker infers from it (typed_usage/tour_types.py),
and tests/test_install.py registers it on a cluster started from the installed wheel."""
from dataclay import DataClayObject, activemethod


class Person(DataClayObject):
    name: str
    age: int

    def __init__(self, name: str, age: int) -> None:
        self.name = name
        self.age = age

    @activemethod
    def birthday(self) -> int:
        self.age += 1
        return self.age
