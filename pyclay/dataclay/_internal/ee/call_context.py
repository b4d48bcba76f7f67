"""The call each execution-environment thread is serving: who called, and the resident objects the
call touched (fields read or written, active methods run) with the generation each had then."""
from __future__ import annotations

import threading

_local = threading.local()
_in_flight: set = set()  # the CallContexts being served, by any thread
_in_flight_lock = threading.Lock()


class CallContext:
    """One ExecuteRequest in progress: its ID (the capability the Data Service answers `load` and
    `relay` for, while the call is in flight), the caller, and which resident objects it touched
    (id -> object) at which eviction generation (id -> int)."""

    __slots__ = ("call_id", "username", "dataset", "datasets", "touched", "generations", "created", "plain_flags",
                 "what", "stored_field", "steps")

    def __init__(self, call_id: int, username: str, dataset: str, datasets: frozenset, what: str = ""):
        self.call_id = call_id
        self.what = what  # "module.Class.method on <object ID>": what model code's output is labelled with
        self.username = username
        self.dataset = dataset
        self.datasets = datasets
        self.touched: dict = {}
        self.generations: dict = {}
        self.created: list = []  # dataClay objects model code made during the call (persistent from the start)
        self.plain_flags = False  # a dataClay 4 program's call: obj.is_persistent is True or False
        self.stored_field = ""  # the field whose stored value answers this request as it is (stored_reads)
        self.steps = (None, 0)  # a traced call's StepSpans and the number of its whole step (step_spans.py)


def current_call() -> CallContext | None:
    """The call this thread is serving, or None."""
    return getattr(_local, "call", None)


def enter_call(context: CallContext) -> None:
    """Makes `context` this thread's call."""
    _local.call = context
    with _in_flight_lock:
        _in_flight.add(context)


def leave_call() -> None:
    """This thread serves no call any more."""
    context = getattr(_local, "call", None)
    _local.call = None
    with _in_flight_lock:
        _in_flight.discard(context)


class acting_for:
    """Makes this thread act for `context` (a call in flight on another thread, which waits for it) for the
    duration of a `with`: its loads and relays are that call's."""

    def __init__(self, context: CallContext | None):
        self._context = context

    def __enter__(self):
        self._before = getattr(_local, "call", None)
        _local.call = self._context

    def __exit__(self, *exc):
        _local.call = self._before


def touched_by_calls() -> set:
    """The IDs of the objects the calls in flight have touched so far."""
    with _in_flight_lock:
        calls = list(_in_flight)
    return {oid for call in calls for oid in list(call.touched)}
