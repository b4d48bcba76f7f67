"""Pickling with persistent IDs: a dataClay object inside a value becomes ("dc", id, class_name,
backend_hint) when a namer gives it a name, or travels by value (its fields) when it does not."""
from __future__ import annotations

import io
import os
import pickle
import threading

from dataclay.exceptions import DataClayException, SerializationError
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.model.states import HINT_KEY, ID_KEY, STATE_KEY

PROTOCOL = 5
PID_TAG = "dc"
PLAIN_TYPES = frozenset({int, float, str, bytes, bool, type(None), complex})
NO_ARGS = pickle.dumps(((), {}), PROTOCOL)
NO_ARGS_PLAIN_FLAGS = pickle.dumps(((), {}, True), PROTOCOL)
"""The encoding of a call without arguments."""


class _FoundObject(Exception):
    pass


class _ProbePickler(pickle.Pickler):
    """Plain pickling that stops at the first dataClay object (built-in types never reach the hook)."""

    def reducer_override(self, obj):
        if isinstance(obj, DataClayObject):
            raise _FoundObject
        return NotImplemented


class _ReferencePickler(pickle.Pickler):
    def __init__(self, file, namer):
        super().__init__(file, PROTOCOL)
        self._namer = namer
        self.references: dict = {}

    def persistent_id(self, obj):
        if isinstance(obj, DataClayObject):
            pid = self._namer(obj)
            if pid is not None:
                self.references[pid[1]] = None
            return pid
        return None


def persistent_pid(obj):
    """The persistent ID of a persistent object, None for a volatile one (which then goes by value)."""
    d = obj.__dict__
    if d.get(STATE_KEY) is None:
        return None
    return PID_TAG, d[ID_KEY], type(obj)._dc_class_name, d.get(HINT_KEY, "")


class _Picklers(threading.local):
    """One reusable pickler pair per thread (creating a Pickler costs more than pickling a small value)."""

    def __init__(self):
        self.buffer = io.BytesIO()
        self.probe = _ProbePickler(self.buffer, PROTOCOL)
        self.busy = False


_picklers = _Picklers()


def _probe(value) -> bytes:
    """Plain pickle of `value`; raises _FoundObject at the first dataClay object."""
    cached = _picklers
    if cached.busy:  # pickling re-entered from user code: use a private pickler
        buffer = io.BytesIO()
        _ProbePickler(buffer, PROTOCOL).dump(value)
        return buffer.getvalue()
    cached.busy = True
    buffer = cached.buffer
    try:
        buffer.seek(0)
        buffer.truncate()
        cached.probe.clear_memo()
        cached.probe.dump(value)
        return buffer.getvalue()
    finally:
        cached.probe.clear_memo()
        cached.busy = False


def dumps(value, namer=persistent_pid, what="value") -> tuple[bytes, tuple]:
    """(pickle, referenced object IDs) of `value`; `namer(obj)` names dataClay objects (None: by value).

    `what` names the value in errors: text, or (class name, field name) formatted only on failure.
    Values without dataClay objects are pickled at C speed; only values holding one pay for the
    persistent-ID hook, which runs for every object pickled."""
    try:
        kind = type(value)
        if kind in PLAIN_TYPES:
            return pickle.dumps(value, PROTOCOL), ()
        if isinstance(value, DataClayObject):
            pid = namer(value)
            if pid is not None:
                return pid_pickle(pid), (pid[1],)
        else:
            try:
                return _probe(value), ()
            except _FoundObject:
                pass
        buffer = io.BytesIO()
        pickler = _ReferencePickler(buffer, namer)
        pickler.dump(value)
        return buffer.getvalue(), tuple(pickler.references)
    except DataClayException:
        raise
    except Exception as e:  # unpicklable values (locks, lambdas, local classes...) are the caller's error
        raise SerializationError(f"cannot encode {_describe(what)}: {type(e).__name__}: {e}") from None


def pid_pickle(pid: tuple) -> bytes:
    """The protocol-5 pickle of a value that is just one persistent ID (what pickle itself would emit,
    without the per-object hook calls): PROTO 5, MARK, four strings, TUPLE, BINPERSID, STOP."""
    tail = _pid_tails.get((pid[2], pid[3]))
    if tail is None:
        tail = _short_string(pid[2]) + _short_string(pid[3]) + b"tQ."
        if len(_pid_tails) < 4096:
            _pid_tails[(pid[2], pid[3])] = tail
    return _PID_HEAD + _short_string(pid[1]) + tail


_PID_HEAD = b"\x80\x05(\x8c\x02dc"
_pid_tails: dict = {}


def _short_string(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) < 256:
        return b"\x8c" + bytes((len(raw),)) + raw
    return b"X" + len(raw).to_bytes(4, "little") + raw


def dumps_args(args: tuple, kwargs: dict, namer=persistent_pid, plain_flags: bool = False) -> bytes:
    """The encoding of method arguments: pickle of (args_tuple, kwargs_dict), or (args_tuple, kwargs_dict, True)
    from a dataClay 4 program, whose model code then sees `obj.is_persistent` as True or False."""
    if not args and not kwargs:
        return NO_ARGS_PLAIN_FLAGS if plain_flags else NO_ARGS
    value = (tuple(args), dict(kwargs), True) if plain_flags else (tuple(args), dict(kwargs))
    return dumps(value, namer, "method arguments")[0]


def new_object_id() -> str:
    """A fresh random (version 4) object ID in canonical text form."""
    raw = bytearray(os.urandom(16))
    raw[6] = raw[6] & 0x0F | 0x40
    raw[8] = raw[8] & 0x3F | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _describe(what) -> str:
    if isinstance(what, tuple):
        return f"field {what[0]}.{what[1]}"
    return str(what)
