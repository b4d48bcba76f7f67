"""@activemethod: marks a method that runs where the object's state is (in its backend) when the
object is persistent, and locally while it is volatile. An `async def` method stays a coroutine
function: awaiting it on a persistent object awaits the remote call on the event loop's own
channel, so many such calls from one loop overlap on the wire."""
from __future__ import annotations

import functools
import inspect
import typing

from dataclay._internal.model.states import RESIDENT, STATE_KEY, TRACKER
from dataclay._internal.runtime.current import get_runtime

ACTIVE_MARK = "_dc_active"
_F = typing.TypeVar("_F", bound=typing.Callable[..., typing.Any])


def activemethod(func: _F) -> _F:
    """Decorates a plain method (or an `async def` one) so that calls on a persistent proxy run in the
    object's backend."""
    if isinstance(func, (staticmethod, classmethod, property)) or not callable(func):
        raise TypeError(f"@activemethod decorates plain methods, not {type(func).__name__}")
    active = _awaited(func) if inspect.iscoroutinefunction(func) else _called(func)
    setattr(active, ACTIVE_MARK, True)
    return typing.cast(_F, active)


def _called(func):
    name = func.__name__

    @functools.wraps(func)
    def active(self, *args, **kwargs):
        state = self.__dict__.get(STATE_KEY)
        if state is None:
            return func(self, *args, **kwargs)
        if state is RESIDENT:
            TRACKER.call(self)
            return func(self, *args, **kwargs)
        return get_runtime().call_method(self, name, args, kwargs)

    return active


def _awaited(func):
    name = func.__name__

    @functools.wraps(func)
    async def active(self, *args, **kwargs):
        state = self.__dict__.get(STATE_KEY)
        if state is None:
            return await func(self, *args, **kwargs)
        if state is RESIDENT:
            TRACKER.call(self)
            return await func(self, *args, **kwargs)
        return await get_runtime().aio().call_method(self, name, args, kwargs)

    return active


def is_active(value) -> bool:
    """True if `value` is a method decorated with @activemethod."""
    return getattr(value, ACTIVE_MARK, False) is True


def wrapped_function(method):
    """The plain function a synchronous @activemethod wrapper of this module runs, or None for anything
    else (an `async def` method, another decorator's wrapper, a plain function)."""
    code = getattr(method, "__code__", None)
    if not is_active(method) or code is not _CALLED_CODE:
        return None
    return method.__closure__[code.co_freevars.index("func")].cell_contents


_CALLED_CODE = _called(lambda self: None).__code__
