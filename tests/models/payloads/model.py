"""A model holding a bytes payload, for replica, version and move tests and benchmarks."""
from dataclay import DataClayObject, activemethod


class Blob(DataClayObject):
    """An opaque payload and a revision number bumped by every change."""

    data: bytes
    revision: int

    def __init__(self, data: bytes = b""):
        self.data = data
        self.revision = 0

    @activemethod
    def replace(self, data: bytes) -> int:
        self.data = data
        self.revision += 1
        return self.revision

    @activemethod
    def size(self) -> int:
        return len(self.data)
