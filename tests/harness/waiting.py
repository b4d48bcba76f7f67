"""The one way tests wait for something to happen: poll a predicate until it holds, and fail naming
what was awaited and what was last seen. Used by the integration tests (tests/) and, through
pyclay/tests/conftest.py, by the unit tests."""
from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")
_SHOWN = 500  # characters of the last value a failure shows


def wait_until(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.05,
               ignoring: tuple = (), details: Callable[[], str] | None = None) -> T:
    """The first truthy value `predicate()` returns, polled every `interval` seconds; an exception of a
    type in `ignoring` counts as "not yet", any other ends the wait (a predicate may assert that the
    process it waits for is still alive). After `timeout` seconds, AssertionError naming `what`, the
    last value (or exception) seen and, when given, what `details()` says (a log's tail, say)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            last = predicate()
        except ignoring as e:
            last = e
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            shown = repr(last)
            if len(shown) > _SHOWN:
                shown = shown[:_SHOWN] + "..."
            more = f"\n{details()}" if details is not None else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last seen: {shown}{more}")
        time.sleep(interval)
