"""GraphWriter: serialises objects field by field and gives every volatile dataClay object it
meets a fresh ID once, so cycles and shared sub-objects are written exactly once."""
from __future__ import annotations

import functools
import pickle

from dataclay.exceptions import ClassNotRegisteredError, InvalidArgumentError
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.model import state
from dataclay._internal.model.states import PENDING_KEY, STATE_KEY
from dataclay._internal.records import FieldRecord, ObjectRecord
from dataclay._internal.serialization.encoder import (
    PID_TAG, PLAIN_TYPES, PROTOCOL, dumps, new_object_id, persistent_pid, pid_pickle)


_field = functools.partial(tuple.__new__, FieldRecord)
"""FieldRecord from a (name, value, references) tuple, without NamedTuple's Python-level __new__."""


class GraphWriter:
    """Names the volatile objects reachable from its roots; `hint` is the backend they will live on."""

    def __init__(self, hint: str, recursive: bool = True, dataset: str = ""):
        self.hint = hint
        self.recursive = recursive
        self.dataset = dataset
        self.assigned: dict[int, tuple] = {}
        self._queue: list[tuple] = []
        self._written = 0

    def add_root(self, obj) -> str:
        """Names `obj` (volatile) as a new object to write; returns its new ID."""
        return self._assign(obj)[1]

    def name(self, obj):
        """The persistent ID of `obj`, naming it (and queueing it to be written) if it is volatile."""
        if obj.__dict__.get(STATE_KEY) is not None:
            return persistent_pid(obj)
        entry = self.assigned.get(id(obj))
        if entry is None:
            if not self.recursive:
                raise InvalidArgumentError(
                    f"a volatile {type(obj).__name__} is reachable from the object being made persistent and "
                    f"recursive=False: make it persistent first or use recursive=True")
            entry = self._assign(obj)
        return PID_TAG, entry[1], type(obj)._dc_class_name, self.hint

    def pid_if_named(self, obj):
        """The persistent ID of `obj` if it is persistent or named here; None for other volatile objects."""
        if obj.__dict__.get(STATE_KEY) is not None:
            return persistent_pid(obj)
        entry = self.assigned.get(id(obj))
        return None if entry is None else (PID_TAG, entry[1], type(obj)._dc_class_name, self.hint)

    def field_records(self, obj, names=None) -> tuple:
        """The FieldRecords of `obj`'s fields (all of its set fields, or only `names`)."""
        cls = type(obj)
        values = state.stored_state(obj)
        namer = self.name
        out = []
        for name in (values if names is None else names):
            if name in values:
                value = values[name]
                if type(value) in PLAIN_TYPES:
                    out.append(_field((name, pickle.dumps(value, PROTOCOL), ())))
                elif isinstance(value, DataClayObject):
                    pid = namer(value)
                    out.append(_field((name, pid_pickle(pid), (pid[1],))))
                else:
                    out.append(_field((name, *dumps(value, namer, (cls.__name__, name)))))
        return tuple(out)

    def drain(self) -> list:
        """ObjectRecords of every object named so far and not yet written (naming more as it goes)."""
        records = []
        while self._written < len(self._queue):
            obj, oid = self._queue[self._written]
            self._written += 1
            records.append(ObjectRecord(oid, type(obj)._dc_class_name, self.field_records(obj), self.dataset))
        return records

    def _assign(self, obj) -> tuple:
        entry = self.assigned.get(id(obj))
        if entry is None:
            if type(obj).__module__ == "__main__":
                raise ClassNotRegisteredError(script_class_message(type(obj).__qualname__))
            entry = (obj, obj.__dict__.get(PENDING_KEY) or new_object_id())
            self.assigned[id(obj)] = entry
            self._queue.append(entry)
        return entry


def script_class_message(name: str) -> str:
    """Why an object of class `name`, defined in the script being run (__main__), cannot be stored, and
    what to do (the Data Service says the same to clients that send one)."""
    return (f"class {name} is defined in the script being run (module __main__), and classes defined there can "
            f"never be stored: backends cannot import a script. Move {name} into a module of its own (e.g. "
            f"model.py beside the script, then `from model import {name}`) and register that module's directory: "
            f"dataclaycmd NewModel <user> - <namespace> <directory> python")
