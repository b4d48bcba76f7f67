"""PersistentField: the data descriptor behind every annotated attribute of a dataClay class.

Volatile objects keep values in their __dict__; RESIDENT ones too, reporting each access to
the tracker; PROXY objects read and assign through the runtime (remotely)."""
from __future__ import annotations

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.model.states import RESIDENT, STATE_KEY, TRACKER
from dataclay._internal.runtime.current import get_runtime

MISSING = object()


class PersistentField:
    """One persistent field of a dataClay class (`default` is the class-level value, if any)."""

    __slots__ = ("name", "default")

    def __init__(self, name: str, default=MISSING):
        self.name = name
        self.default = default

    def __repr__(self) -> str:
        return f"<persistent field {self.name!r}>"

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        d = obj.__dict__
        state = d.get(STATE_KEY)
        if state is None or state is RESIDENT:
            if state is not None:
                TRACKER.call(obj)
            try:
                return d[self.name]
            except KeyError:
                return self._missing(obj)
        return get_runtime().get_field(obj, self.name)

    def __set__(self, obj, value) -> None:
        d = obj.__dict__
        state = d.get(STATE_KEY)
        if state is None:
            d[self.name] = value
        elif state is RESIDENT:
            TRACKER.call(obj)
            d[self.name] = value
        else:
            get_runtime().set_field(obj, self.name, value)

    def __delete__(self, obj) -> None:
        d = obj.__dict__
        state = d.get(STATE_KEY)
        if state is not None and state is not RESIDENT:
            raise InvalidArgumentError(f"cannot delete field {self.name!r} of a remote object; assign it instead")
        if state is RESIDENT:
            TRACKER.call(obj)
        if self.name not in d:
            raise AttributeError(f"{type(obj).__name__!r} object has no value for field {self.name!r}")
        del d[self.name]

    def _missing(self, obj):
        if self.default is not MISSING:
            return self.default
        raise AttributeError(missing_field_message(type(obj), self.name), name=self.name, obj=obj)


def missing_field_message(cls: type, name: str) -> str:
    """Why a field has no value, and how a model gives objects stored before the field existed one."""
    annotation = getattr(cls, "__annotations__", {}).get(name)
    typed = f": {getattr(annotation, '__name__', annotation)}" if annotation is not None else ""
    return (f"{cls.__name__!r} object has no value for field {name!r}: it was never assigned or was deleted "
            f"(objects stored before the model declared the field have none; a class-level default such as "
            f"`{name}{typed} = ...` gives them one)")
