"""The call each execution-environment thread is serving: the caller's session and the resident
objects the call touched (fields read or written, active methods run)."""
from __future__ import annotations

import threading

_local = threading.local()


class CallContext:
    """One ExecuteRequest in progress: who called, and which resident objects it touched (id -> object)."""

    __slots__ = ("token", "username", "dataset", "datasets", "touched")

    def __init__(self, token: str, username: str, dataset: str, datasets: frozenset):
        self.token = token
        self.username = username
        self.dataset = dataset
        self.datasets = datasets
        self.touched: dict = {}


def current_call() -> CallContext | None:
    """The call this thread is serving, or None."""
    return getattr(_local, "call", None)


def enter_call(context: CallContext) -> None:
    """Makes `context` this thread's call."""
    _local.call = context


def leave_call() -> None:
    """This thread serves no call any more."""
    _local.call = None
