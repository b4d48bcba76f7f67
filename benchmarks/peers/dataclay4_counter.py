"""The counter model for dataClay 4.3.1: its backend imports it from its PYTHONPATH."""
from dataclay import DataClayObject, activemethod


class Counter(DataClayObject):
    value: int

    def __init__(self):
        self.value = 0

    @activemethod
    def increment(self) -> int:
        self.value += 1
        return self.value

    @activemethod
    def get(self) -> int:
        return self.value
