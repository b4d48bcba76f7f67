"""What of a dataClay object is stored, and how it is rebuilt: its persistent (annotated) fields, or,
for a class with its own `__getstate__` / `__setstate__` (as dataClay 4 and pickle honour them), the
dict its `__getstate__` returns, rebuilt with its `__setstate__`. Every path that stores or loads an
object's state goes through here: make_persistent, a call's changes, moves, replicas, versions and
clones (which copy the stored form) and volatile objects passed by value."""
from __future__ import annotations

from dataclay.exceptions import SerializationError

_RESERVED_PREFIX = "_dc_"


def custom_getstate(cls) -> bool:
    """Whether `cls` (or a base of it other than DataClayObject) defines its own __getstate__."""
    return "__getstate__" in _defined(cls)


def custom_setstate(cls) -> bool:
    """Whether `cls` (or a base of it other than DataClayObject) defines its own __setstate__."""
    return "__setstate__" in _defined(cls)


def _defined(cls) -> set:
    from dataclay._internal.model.object import DataClayObject
    names = set()
    for klass in cls.__mro__:
        if klass is DataClayObject or klass is object:
            break
        names.update(n for n in ("__getstate__", "__setstate__") if n in vars(klass))
    return names


def stored_state(obj) -> dict:
    """Name -> value of what is stored of `obj` (in memory: volatile or resident)."""
    cls = type(obj)
    if not cls._dc_custom_getstate:
        d = obj.__dict__
        return {name: d[name] for name in cls._dc_fields if name in d}
    state = obj.__getstate__()
    if not isinstance(state, dict) or not all(isinstance(k, str) and k.isidentifier() for k in state):
        raise SerializationError(f"{cls.__name__}.__getstate__() must return a dict whose keys are attribute names, "
                                 f"to be stored; it returned a {type(state).__name__}")
    reserved = sorted(k for k in state if k.startswith(_RESERVED_PREFIX))
    if reserved:
        raise SerializationError(f"{cls.__name__}.__getstate__() returned dataClay's own attributes {reserved}: "
                                 f"return the object's own state only")
    return state


def stored_names(cls, names) -> list:
    """Which of `names` (stored entries) a class takes: its fields, or anything for a class with __setstate__
    or __getstate__ of its own; raises SerializationError for others."""
    if cls._dc_custom_getstate or cls._dc_custom_setstate:
        reserved = sorted(n for n in names if n.startswith(_RESERVED_PREFIX))
        if reserved:
            raise SerializationError(f"{cls._dc_class_name} has no stored state {reserved}")
        return list(names)
    unknown = sorted(set(names) - cls._dc_field_set)
    if unknown:
        raise SerializationError(f"{cls._dc_class_name} has no persistent field {unknown[0]!r}")
    return list(names)


def loadable_names(cls, names) -> list:
    """Which of a stored object's entries `names` its class loads now: as stored_names, except that a field the
    class no longer declares (its model changed since the object was stored) is skipped, not refused. The
    skipped value stays in the store untouched: it is never decoded, so no change of a call removes it."""
    if cls._dc_custom_getstate or cls._dc_custom_setstate:
        return stored_names(cls, names)
    return [name for name in names if name in cls._dc_field_set]


def restore_state(obj, values: dict) -> None:
    """Gives `obj` (its state already set to what it becomes) the stored `values`: through its __setstate__
    if its class has one, else as its fields."""
    cls = type(obj)
    if cls._dc_custom_setstate:
        if values:  # nothing stored: an object made by a StubDataClayObject, whose __init__ runs next
            obj.__setstate__(dict(values))
        return
    d = obj.__dict__
    fields = cls._dc_field_set
    for name, value in values.items():
        if name in fields or cls._dc_custom_getstate:
            d[name] = value


def forget_state(obj) -> None:
    """Drops the stored state of `obj` from memory (it is about to stand for a remote or unloaded object)."""
    cls = type(obj)
    d = obj.__dict__
    if cls._dc_custom_getstate or cls._dc_custom_setstate:
        for name in [n for n in d if not n.startswith(_RESERVED_PREFIX)]:
            del d[name]
        return
    for name in cls._dc_fields:
        d.pop(name, None)
