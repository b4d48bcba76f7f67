"""dataClay 4's StubDataClayObject: use objects of a model class this program does not have, by its
name. `PersonStub = StubDataClayObject["shop.model.Person"]` is a class whose instances stand for
persistent `shop.model.Person` objects: `PersonStub(*args)` makes a new one in a backend (its
`__init__` runs there), `PersonStub.get_by_alias(alias)` finds one, and their fields and active
methods are those the Logic Module lists for that class (a model this account may use), each
read, assigned or called in the backend."""
from __future__ import annotations

import threading

from dataclay.exceptions import ClassNotRegisteredError, InvalidArgumentError
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.runtime.current import get_runtime

__all__ = ["StubDataClayObject"]

_lock = threading.Lock()
_classes: dict = {}


class _StubType(type):
    def __getitem__(cls, class_name: str) -> type:
        if cls is not StubDataClayObject:
            raise TypeError(f"{cls.__name__} names its class already")
        return _stub_class(class_name)


class StubDataClayObject(DataClayObject, metaclass=_StubType):
    """Objects of a model class named `StubDataClayObject["module.Class"]` (see the module's doc)."""

    _dc_stub = True
    _dc_stub_fields: frozenset = frozenset()
    _dc_stub_methods: frozenset = frozenset()

    def __init__(self, *args, **kwargs):
        if type(self) is StubDataClayObject:
            raise TypeError('name the class first: StubDataClayObject["module.Class"]')
        self.make_persistent()
        get_runtime().call_method(self, "__init__", args, kwargs)

    def __getattr__(self, name):
        cls = type(self)
        if name.startswith("_"):
            raise AttributeError(name)
        if name in cls._dc_stub_fields:
            return get_runtime().get_field(self, name)
        if name in cls._dc_stub_methods:
            def method(*args, **kwargs):
                return get_runtime().call_method(self, name, args, kwargs)
            method.__name__ = name
            return method
        raise AttributeError(f"{cls._dc_class_name} has no field or active method {name!r} (its model lists "
                             f"fields {sorted(cls._dc_stub_fields)} and methods {sorted(cls._dc_stub_methods)})")

    def __setattr__(self, name, value):
        cls = type(self)
        if name.startswith("_dc_"):
            object.__setattr__(self, name, value)
        elif name in cls._dc_stub_fields:
            get_runtime().set_field(self, name, value)
        else:
            raise AttributeError(f"{cls._dc_class_name} has no field {name!r} (its model lists "
                                 f"{sorted(cls._dc_stub_fields)})")


def declared(class_name: str) -> type | None:
    """The stub class of `class_name` if this program made one (references to its objects then decode to it)."""
    with _lock:
        return _classes.get(class_name)


def _stub_class(class_name) -> type:
    if not isinstance(class_name, str) or "." not in class_name:
        raise InvalidArgumentError(f'StubDataClayObject["module.Class"] takes a class name, not {class_name!r}')
    with _lock:
        made = _classes.get(class_name)
    if made is not None:
        return made
    fields, methods = _described(class_name)
    made = type(f"StubDataClayObject[{class_name}]", (StubDataClayObject,), {"__module__": __name__})
    made._dc_class_name = class_name
    made._dc_stub_fields = frozenset(fields)
    made._dc_stub_methods = frozenset(methods) | {"__init__"}
    with _lock:
        return _classes.setdefault(class_name, made)


def _described(class_name: str) -> tuple:
    """(field names, active method names) of a Python class in a model this account may use."""
    for model in get_runtime().router.lm().list_models("python"):
        for described in model.classes:
            if described.name == class_name:
                return [f.name for f in described.fields], [m.name for m in described.methods]
    raise ClassNotRegisteredError(f"no model this account may use defines class {class_name}: register its model "
                                  f"(dataclaycmd NewModel), or ask its owner to publish it (dataclaycmd PublishModel)")
