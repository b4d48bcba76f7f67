"""User exceptions across the wire: a backend captures one as a RemoteError (type name, message,
pickled args, traceback); a client rebuilds built-in and model exception types as themselves. The
type name is the sender's word: it is resolved by the policy, by name, before anything is imported,
and a type the policy refuses leaves the RemoteError as it is."""
from __future__ import annotations

import traceback

from dataclay.exceptions import DataClayException, RemoteError, SerializationError
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps, persistent_pid


def capture(error: BaseException, namer=None) -> RemoteError:
    """The RemoteError describing `error`, raised by user code here (args pickled when possible)."""
    cls = type(error)
    try:
        args = dumps(tuple(error.args), namer or persistent_pid, "exception arguments")[0]
    except DataClayException:
        args = b""
    text = "".join(traceback.format_exception(cls, error, error.__traceback__))
    return RemoteError(f"{cls.__module__}.{cls.__qualname__}", str(error), args, text)


def rebuild(error: RemoteError, policy) -> BaseException:
    """The exception to raise for `error`: its own type when allowed by `policy` (an Exception that is not a
    DataClayException), else `error` itself; arguments the policy refuses leave just the message."""
    module, _, name = error.remote_type.rpartition(".")
    try:
        cls = policy.find_class(module, name)
    except (SerializationError, ValueError):
        return error
    if not (isinstance(cls, type) and issubclass(cls, Exception)) or issubclass(cls, DataClayException):
        return error
    args = (error.remote_message,)
    if error.remote_args:
        try:
            decoded = loads(error.remote_args, policy, "exception arguments")
            if type(decoded) is tuple:
                args = decoded
        except DataClayException:
            pass
    try:
        rebuilt = cls(*args)
    except Exception:  # a constructor with another signature: keep the type and the original args
        rebuilt = cls.__new__(cls)
        rebuilt.args = args
    if error.remote_traceback:
        rebuilt.add_note("raised in a dataClay backend:\n" + error.remote_traceback.rstrip())
    return rebuilt
