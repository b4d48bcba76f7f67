"""The built-in globals every dataClay unpickler accepts: containers, numbers, text and bytes,
dates and times, decimals, fractions, UUIDs, the collections types and the built-in exceptions.
None of them runs code beyond building a value from its arguments."""
from __future__ import annotations

import builtins

_BUILTIN_VALUES = (
    "dict", "list", "tuple", "set", "frozenset", "int", "float", "complex", "bool", "str", "bytes",
    "bytearray", "range", "slice", "Ellipsis", "NotImplemented",
)

_BUILTIN_EXCEPTIONS = tuple(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException))

SAFE_GLOBALS: frozenset = frozenset(
    [("builtins", name) for name in _BUILTIN_VALUES + _BUILTIN_EXCEPTIONS]
    + [("datetime", name) for name in ("datetime", "date", "time", "timedelta", "timezone")]
    + [("decimal", "Decimal"), ("fractions", "Fraction"), ("uuid", "UUID")]
    + [("collections", name) for name in ("OrderedDict", "defaultdict", "deque", "Counter")]
)
"""(module, name) pairs of safe built-in globals."""

LIBRARY_CLASSES: frozenset = frozenset({("dataclay.alien", "AlienDataClayObject")})
"""(module, name) of the dataClay classes of this library itself, usable by everyone without a model: they
hold only what the unpickler accepts anyway."""

REBUILD_VOLATILE = ("dataclay._internal.model.object", "rebuild_volatile")
"""The global that rebuilds a dataClay object passed by value (checked to be a dataClay class)."""
