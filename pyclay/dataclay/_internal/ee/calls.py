"""The call each execution-environment thread is serving: who called, and the resident objects the
call touched (fields read or written, active methods run) with the generation each had then."""
from __future__ import annotations

import threading

_local = threading.local()


class CallContext:
    """One ExecuteRequest in progress: its ID (the capability the Data Service answers `load` and
    `relay` for, while the call is in flight), the caller, and which resident objects it touched
    (id -> object) at which eviction generation (id -> int)."""

    __slots__ = ("call_id", "username", "dataset", "datasets", "touched", "generations")

    def __init__(self, call_id: int, username: str, dataset: str, datasets: frozenset):
        self.call_id = call_id
        self.username = username
        self.dataset = dataset
        self.datasets = datasets
        self.touched: dict = {}
        self.generations: dict = {}


def current_call() -> CallContext | None:
    """The call this thread is serving, or None."""
    return getattr(_local, "call", None)


def enter_call(context: CallContext) -> None:
    """Makes `context` this thread's call."""
    _local.call = context


def leave_call() -> None:
    """This thread serves no call any more."""
    _local.call = None
