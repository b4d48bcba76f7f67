"""dataClay 4's AlienDataClayObject: makes an instance of a class that is not a dataClay class (a
list, a dict, a datetime, a pydantic model, a numpy array...) persistent without writing a model.

`a = AlienDataClayObject(obj)` wraps `obj`. While volatile, `a` behaves as `obj` locally; once
`a.make_persistent()`, every attribute read or assignment, method call and item access runs in the
backend, on the stored object, and changes are stored at the end of each call like those of any
active method.

What may be wrapped is what the backends may unpickle (their restricted unpickling is kept): the
built-in values (containers, numbers, text, dates...), numpy arrays, scalars and dtypes, classes
of a registered model (a pydantic model in a model's module, say) and classes listed in
DATACLAY_PICKLE_ALLOW (pandas', for example); anything else is refused with the name to allow. Attributes reach the wrapped object,
except `alien_object` (the wrapped object itself) and names starting with `_dc_`; of the dunder
methods, only the operators below are forwarded."""
from __future__ import annotations

import functools
import operator

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.model.active import activemethod
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.model.states import RESIDENT, STATE_KEY

__all__ = ["AlienDataClayObject"]

_OPERATORS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
    "len": len, "bool": bool, "hash": hash, "repr": repr, "str": str, "list": list,
}
_FORWARDED_DUNDERS = frozenset({"__getitem__", "__setitem__", "__delitem__", "__contains__", "__call__"})
_OWN = "alien_object"


def _checked(name) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise AttributeError(f"{name!r} is not an attribute name")
    if name.startswith("_dc_") or (name.startswith("__") and name not in _FORWARDED_DUNDERS):
        raise AttributeError(f"{name} is not forwarded to the wrapped object of an AlienDataClayObject")
    return name


class AlienDataClayObject(DataClayObject):
    """A persistent wrapper of an object of any class the backends may load (see the module's doc)."""

    alien_object: object

    def __init__(self, obj):
        if isinstance(obj, DataClayObject):
            raise InvalidArgumentError(f"AlienDataClayObject wraps objects of other classes; a "
                                       f"{type(obj).__name__} is a DataClayObject already: make it persistent itself")
        self.alien_object = obj

    def __class_getitem__(cls, item):
        return cls  # AlienDataClayObject[numpy.ndarray], as a type hint

    # ---- attribute access reaches the wrapped object ----------------------------------------------------

    def __getattr__(self, name):
        # only called when normal lookup fails: never for this class's own names or dataClay's
        if name == _OWN or name.startswith("_dc_") or (name.startswith("__") and name.endswith("__")):
            raise AttributeError(name)
        if self.__dict__.get(STATE_KEY) in (None, RESIDENT):
            return getattr(self.alien_object, name)
        kind, value = self._dc_alien_get(name)
        return functools.partial(self._dc_alien_call, name) if kind == "method" else value

    def __setattr__(self, name, value):
        if name == _OWN or name.startswith("_dc_"):
            object.__setattr__(self, name, value)
        else:
            self._dc_alien_set(name, value)

    def __delattr__(self, name):
        if name == _OWN or name.startswith("_dc_"):
            object.__delattr__(self, name)
        else:
            self._dc_alien_del(name)

    @activemethod
    def _dc_alien_get(self, name):
        value = getattr(self.alien_object, _checked(name))
        if callable(value) and not isinstance(value, type):
            return "method", None
        return "value", value

    @activemethod
    def _dc_alien_set(self, name, value):
        setattr(self.alien_object, _checked(name), value)

    @activemethod
    def _dc_alien_del(self, name):
        delattr(self.alien_object, _checked(name))

    @activemethod
    def _dc_alien_call(self, name, *args, **kwargs):
        return getattr(self.alien_object, _checked(name))(*args, **kwargs)

    @activemethod
    def _dc_alien_apply(self, op, *args):
        if op not in _OPERATORS:
            raise InvalidArgumentError(f"{op!r} is not an operator forwarded to an AlienDataClayObject")
        return _OPERATORS[op](self.alien_object, *args)

    # ---- operators ----------------------------------------------------------------------------------------

    def __len__(self):
        return self._dc_alien_apply("len")

    def __bool__(self):
        return self._dc_alien_apply("bool")

    def __getitem__(self, key):
        return self._dc_alien_call("__getitem__", key)

    def __setitem__(self, key, value):
        self._dc_alien_call("__setitem__", key, value)

    def __delitem__(self, key):
        self._dc_alien_call("__delitem__", key)

    def __contains__(self, item):
        return self._dc_alien_call("__contains__", item)

    def __iter__(self):
        return iter(self._dc_alien_apply("list"))

    def __call__(self, *args, **kwargs):
        return self._dc_alien_call("__call__", *args, **kwargs)

    def __eq__(self, other):
        return other is self or self._dc_alien_apply("==", _unwrapped(other))

    def __ne__(self, other):
        return other is not self and self._dc_alien_apply("!=", _unwrapped(other))

    def __lt__(self, other):
        return self._dc_alien_apply("<", _unwrapped(other))

    def __le__(self, other):
        return self._dc_alien_apply("<=", _unwrapped(other))

    def __gt__(self, other):
        return self._dc_alien_apply(">", _unwrapped(other))

    def __ge__(self, other):
        return self._dc_alien_apply(">=", _unwrapped(other))

    def __hash__(self):
        return self._dc_alien_apply("hash")

    def __repr__(self):
        return f"AlienDataClayObject({self._dc_alien_apply('repr')})"

    def __str__(self):
        return self._dc_alien_apply("str")


def _unwrapped(value):
    """What an operand stands for: a volatile AlienDataClayObject's wrapped object (persistent ones go by reference)."""
    if isinstance(value, AlienDataClayObject) and value.__dict__.get(STATE_KEY) is None:
        return value.alien_object
    return value
