"""PersistenceFlag: what `obj.is_persistent` gives. It is truthy as the property DESIGN.md and
dataClay 4 define, and callable, `obj.is_persistent()`, as dataClay 2 programs call it."""
from __future__ import annotations


class PersistenceFlag:
    """True or False, usable as a value (`if obj.is_persistent`, `== True`) and as a call (`obj.is_persistent()`).
    Not a bool itself: `json.dumps` and `is True` need `bool(obj.is_persistent)`."""

    __slots__ = ("_value",)

    def __init__(self, value: bool):
        self._value = value

    def __call__(self) -> bool:
        """Whether the object lives in a backend (dataClay 2's `is_persistent()`)."""
        return self._value

    def __bool__(self) -> bool:
        return self._value

    def __eq__(self, other) -> bool:
        if isinstance(other, PersistenceFlag):
            return self._value == other._value
        if isinstance(other, (bool, int)):
            return self._value == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return repr(self._value)


PERSISTENT = PersistenceFlag(True)
VOLATILE = PersistenceFlag(False)
