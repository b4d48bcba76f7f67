"""Restricted unpickling: globals go through a ClassPolicy, persistent IDs become the instances
of the identity map. Whatever the bytes hold, nothing outside the policy is imported or run.

A pickle first goes through the fast (C) unpickler, which accepts only globals whose construction and
BUILD state CPython or dataClay check themselves: the safe built-ins, dataClay classes, by-value objects.
At the first other global (numpy's, DATACLAY_PICKLE_ALLOW entries, plain classes of model modules) it stops
and the pickle is read again from the start by the checked unpickler, whose BUILD gives numpy objects
their state only through numpy_values.set_state (numpy's own __setstate__ trusts its input)."""
from __future__ import annotations

import io
import pickle
import struct
import sys
import uuid

from dataclay.exceptions import ClassNotRegisteredError, DataClayException, SerializationError
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.serialization import numpy_values
from dataclay._internal.serialization.encoder import NO_ARGS, NO_ARGS_PLAIN_FLAGS
from dataclay._internal.serialization.safe_names import LIBRARY_CLASSES, REBUILD_VOLATILE, SAFE_GLOBALS

PID_TAG = "dc"


class _NeedsChecks(Exception):
    """The fast unpickler met a global whose objects only the checked unpickler may build."""


def _fast_enough(module: str, name: str, found) -> bool:
    """True if the C unpickler may use `found`: a safe built-in, or a dataClay class (not a numpy subclass)."""
    if (module, name) in SAFE_GLOBALS or (module, name) in LIBRARY_CLASSES or (module, name) == REBUILD_VOLATILE:
        return True
    return isinstance(found, type) and issubclass(found, DataClayObject) and not numpy_values.guards_type(found)


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes, policy, resolve=None):
        super().__init__(io.BytesIO(data))
        self._policy = policy
        self._resolve = resolve

    def find_class(self, module, name):
        if (module, name) in numpy_values.GLOBALS:
            raise _NeedsChecks
        found = self._policy.find_class(module, name)
        if not _fast_enough(module, name, found):
            raise _NeedsChecks
        return found

    def persistent_load(self, pid):
        if self._resolve is not None:
            return self._resolve(pid)
        return reference_for(pid, self._policy)


class _CheckedUnpickler(pickle._Unpickler):
    """The pure-Python unpickler with numpy's globals replaced by checked stand-ins and BUILD checked."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, data: bytes, policy, resolve=None):
        self._source = io.BytesIO(data)
        super().__init__(self._source)
        self._policy = policy
        self._resolve = resolve
        self._fresh = numpy_values.Fresh()

    def find_class(self, module, name):
        kind = numpy_values.GLOBALS.get((module, name))
        if kind is not None:
            return numpy_values.stand_in(kind, module, name, self._fresh)
        return self._policy.find_class(module, name)

    def persistent_load(self, pid):
        if self._resolve is not None:
            return self._resolve(pid)
        return reference_for(pid, self._policy)

    def load_build(self):
        if not self.stack or len(self.stack) < 2:
            raise SerializationError("a pickle BUILD without an object")
        inst = self.stack[-2]
        if numpy_values.guards(inst):
            numpy_values.set_state(inst, self.stack.pop(), self._fresh)
            return
        pickle._Unpickler.load_build(self)

    dispatch[pickle.BUILD[0]] = load_build

    # Calling an array class directly (REDUCE, NEWOBJ, INST, OBJ) would make an array of uninitialised
    # memory, whose bytes are whatever this process held there: numpy's pickles never do it.
    def load_reduce(self):
        numpy_values.check_callable(self.stack[-2] if len(self.stack) > 1 else None)
        pickle._Unpickler.load_reduce(self)

    def load_newobj(self):
        numpy_values.check_callable(self.stack[-2] if len(self.stack) > 1 else None)
        pickle._Unpickler.load_newobj(self)

    def load_newobj_ex(self):
        numpy_values.check_callable(self.stack[-3] if len(self.stack) > 2 else None)
        pickle._Unpickler.load_newobj_ex(self)

    def _instantiate(self, klass, args):
        numpy_values.check_callable(klass)
        return pickle._Unpickler._instantiate(self, klass, args)

    def load_bytearray8(self):
        # pickle.py's own copies array data twice; outside a frame (where the pickler puts large data) it is
        # read straight into the bytearray, as the C unpickler does
        size, = struct.unpack("<Q", self.read(8))
        if size > sys.maxsize:
            raise SerializationError("a pickle BYTEARRAY8 larger than this platform allows")
        if self._unframer.current_frame is None:
            data = bytearray(size)
            if self._source.readinto(data) != size:
                raise SerializationError("pickle data was truncated")
        else:
            data = bytearray(self.read(size))
        self.append(data)

    dispatch[pickle.BYTEARRAY8[0]] = load_bytearray8
    dispatch[pickle.REDUCE[0]] = load_reduce
    dispatch[pickle.NEWOBJ[0]] = load_newobj
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex


def reference_for(pid, policy):
    """The instance a persistent ID ("dc", id, class_name, backend_hint) stands for."""
    if not (type(pid) is tuple and len(pid) == 4 and pid[0] == PID_TAG
            and all(type(part) is str for part in pid[1:])):
        raise SerializationError(f"refused a malformed object reference {pid!r}")
    try:
        object_id = str(uuid.UUID(pid[1]))
    except ValueError:
        raise SerializationError(f"refused an object reference with a bad ID {pid[1]!r}") from None
    obj = IDENTITY.get(object_id)
    if obj is not None:
        return obj
    try:
        cls = policy.dataclay_class(pid[2])
    except ClassNotRegisteredError as e:
        # a class this program uses by name only, through StubDataClayObject["module.Class"]: its stub
        from dataclay.stub import declared
        cls = declared(pid[2])
        if cls is None:
            raise SerializationError(f"refused an object reference: {e}") from None
    return IDENTITY.proxy(cls, object_id, pid[3])


def loads(data: bytes, policy, what: str = "value", resolve=None):
    """Decodes one pickle under `policy` (object references become `resolve(pid)` when given, else their
    instances here); anything refused or malformed raises SerializationError."""
    try:
        try:
            return _RestrictedUnpickler(data, policy, resolve).load()
        except _NeedsChecks:
            return _CheckedUnpickler(data, policy, resolve).load()
    except SerializationError as e:
        raise SerializationError(f"cannot decode {what}: {e}") from None
    except DataClayException:
        raise
    except Exception as e:  # any failure inside pickle means the bytes are not a value we accept
        raise SerializationError(f"cannot decode {what}: {type(e).__name__}: {e}") from None


def loads_args(data: bytes, policy) -> tuple[tuple, dict]:
    """Decodes method arguments: a pickle of (args_tuple, kwargs_dict)."""
    return loads_call(data, policy)[:2]


def loads_call(data: bytes, policy) -> tuple[tuple, dict, bool]:
    """Decodes method arguments and whether the caller is a dataClay 4 program (see dumps_args)."""
    # a call without arguments (a getter, `increment()`) sends one of two fixed pickles: no unpickler needed
    if data == NO_ARGS:
        return (), {}, False
    if data == NO_ARGS_PLAIN_FLAGS:
        return (), {}, True
    value = loads(data, policy, "method arguments")
    if not (type(value) is tuple and len(value) in (2, 3) and type(value[0]) is tuple and type(value[1]) is dict
            and all(type(k) is str for k in value[1]) and (len(value) == 2 or value[2] is True)):
        raise SerializationError("method arguments must be a pickle of (args_tuple, kwargs_dict[, True])")
    return value[0], value[1], len(value) == 3
