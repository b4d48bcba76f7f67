"""Which requests this execution environment vouches are answered by one stored field as it is: the
Data Service then serves them from its store without waking this process (`ExecuteResult.stored_field`,
docs/internals.md "Reads served from the store").

- A field read, when the class keeps its fields as they are stored (no `__getstate__` or `__setstate__`
  of its own): this process answers it from the object's `__dict__`, which a load fills with exactly the
  stored fields.
- A call without arguments of a synchronous active method whose whole body is `return self.<field>`, on
  such a class, where the name is one of its persistent fields: the same value, read through the
  field's descriptor.

Everything else answers "" (no promise). The promise holds until the models change: the Data Service
forgets it on every deployment."""
from __future__ import annotations

import dis
import functools
import inspect

from dataclay._internal.model.active import wrapped_function
from dataclay._internal.model.fields import PersistentField
from dataclay._internal.model.object import DataClayObject

_NOT_PLAIN = (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR | inspect.CO_COROUTINE
              | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE)
_IGNORED_OPS = frozenset({"RESUME", "NOP", "CACHE"})


def field_read(cls, name: str) -> str:
    """`name` when a read of that field of a `cls` object is its stored value as it is, else ""."""
    return name if _fields_as_stored(cls) and name in cls._dc_field_set else ""


@functools.lru_cache(maxsize=4096)
def getter_field(cls, name: str) -> str:
    """The field that the active method `name` of `cls`, called without arguments, returns as it is
    stored, or "" when it does anything else."""
    if not _fields_as_stored(cls) or cls.__getattribute__ is not DataClayObject.__getattribute__:
        return ""
    func = wrapped_function(inspect.getattr_static(cls, name, None))
    code = getattr(func, "__code__", None)
    if code is None or code.co_argcount != 1 or code.co_kwonlyargcount or code.co_flags & _NOT_PLAIN:
        return ""  # arguments, *args, **kwargs, a generator or a coroutine
    ops = [(i.opname, i.argval) for i in dis.get_instructions(code) if i.opname not in _IGNORED_OPS]
    if len(ops) != 3 or not ops[0][0].startswith("LOAD_FAST") or ops[0][1] != code.co_varnames[0] \
            or ops[1][0] != "LOAD_ATTR" or ops[2][0] != "RETURN_VALUE":
        return ""
    field = ops[1][1]
    if field not in cls._dc_field_set or not isinstance(inspect.getattr_static(cls, field, None), PersistentField):
        return ""
    return field


def _fields_as_stored(cls) -> bool:
    return not cls._dc_custom_getstate and not cls._dc_custom_setstate
