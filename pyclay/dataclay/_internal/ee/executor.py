"""Executor: runs one request (active method, field read or field assignment) on a resident
object and produces its outcome: result or error, deltas and new objects. Plain types only."""
from __future__ import annotations

import asyncio
import inspect
import logging
import resource
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from dataclay.exceptions import (
    ConcurrentChangeError, DataClayException, InternalError, InvalidArgumentError, MethodDoesNotExistError)
from dataclay._internal.ee.call_context import CallContext, enter_call, leave_call
from dataclay._internal.ee.runtime import EnvironmentRuntime
from dataclay._internal.ee.step_spans import StepSpans
from dataclay._internal.ee.stored_reads import field_read, getter_field
from dataclay._internal.model.fields import MISSING, PersistentField, missing_field_message
from dataclay._internal.model.states import PENDING_KEY, STATE_KEY
from dataclay._internal.serialization import exceptions as remote_exceptions
from dataclay._internal.serialization.decoder import loads, loads_call
from dataclay._internal.serialization.encoder import dumps
from dataclay._internal.serialization.graph import GraphWriter

CALL_METHOD, GET_FIELD, SET_FIELD = "call_method", "get_field", "set_field"
_log = logging.getLogger(__name__)
_loops = threading.local()


@dataclass(slots=True)
class Execution:
    """One request from the Data Service, with who called (the Data Service checked the session)."""

    call_id: int
    object_id: str
    class_name: str
    kind: str
    name: str
    payload: bytes
    username: str = ""
    dataset: str = ""
    datasets: frozenset = frozenset()
    traced: bool = False      # the Data Service traces this call: time the steps (step_spans.py)


@dataclass(slots=True)
class Outcome:
    """What a request produced; on error, nothing changed (the touched objects were unloaded)."""

    call_id: int
    result: bytes = b""
    error: DataClayException | None = None
    new_objects: list = field(default_factory=list)
    deltas: list = field(default_factory=list)
    stored_field: str = ""  # see stored_reads: the Data Service may answer such requests from its store
    spans: list = field(default_factory=list)  # a traced call's steps (StepSpans.records)


def _keep(outcome: Outcome) -> None:
    """The default delivery: the outcome is only returned."""


class _UserCodeFailed(Exception):
    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class Executor:
    """Serves Executions against `runtime`; safe to call from many threads at once."""

    def __init__(self, runtime: EnvironmentRuntime):
        self._runtime = runtime

    def execute(self, execution: Execution, deliver: Callable[[Outcome], None] = _keep) -> Outcome:
        """Runs `execution`, hands its outcome to `deliver` and returns it; user exceptions become
        REMOTE_EXCEPTION errors, never escape. If `deliver` refuses an outcome with a DataClayException
        (having sent nothing), the call is undone and the error delivered instead; any other
        exception from `deliver` escapes.

        A successful outcome is computed and delivered under the commit lock, so outcomes carrying
        deltas are delivered in the order of their sequence numbers."""
        call = CallContext(execution.call_id, execution.username, execution.dataset, execution.datasets,
                           f"{execution.class_name}.{execution.name} on {execution.object_id}")
        steps = StepSpans() if execution.traced else None
        whole = steps.open(f"ee.execute {execution.class_name}.{execution.name}",
                           **{"dataclay.execution.kind": execution.kind}) if steps else 0
        call.steps = (steps, whole)
        enter_call(call)
        try:
            value, failed = self._guarded(self._perform, execution, call)
            if failed is None:
                with self._runtime.changes.commit_lock:
                    encoding = steps.open("ee.encode", whole) if steps else 0
                    outcome, failed = self._guarded(self._outcome, execution, call, value)
                    if failed is None:
                        if steps:
                            steps.close(encoding)
                            steps.close(whole)
                            outcome.spans = steps.records()
                        try:
                            deliver(outcome)
                            return outcome
                        except DataClayException as e:  # the outcome cannot be sent (nothing was): undo it
                            self._roll_back(call)
                            self._runtime.residents.evict([record.id for record in outcome.new_objects])
                            failed = Outcome(execution.call_id, error=e)
            if steps:
                steps.close(whole, failed.error)
                failed.spans = steps.records()
            # An error carries no deltas: its place in the sequence order does not matter.
            deliver(failed)
            return failed
        finally:
            for made in call.created:  # made by the call but never stored: an ordinary volatile object now
                if made.__dict__.get(STATE_KEY) is None:
                    made.__dict__.pop(PENDING_KEY, None)
            leave_call()

    def _guarded(self, step, execution: Execution, call: CallContext, *args):
        """(what `step` returned, None), or (None, error Outcome) after rolling back what the call touched."""
        try:
            return step(execution, call, *args), None
        except _UserCodeFailed as failed:
            error = remote_exceptions.capture(failed.error)
        except DataClayException as e:
            error = e
        except Exception as e:  # a bug here must fail this call only, and say what happened
            _log.exception("call %s on %s failed inside the execution environment", execution.name,
                           execution.object_id)
            error = InternalError(f"execution environment: {type(e).__name__}: {e}")
        self._roll_back(call)
        return None, Outcome(execution.call_id, error=error)

    def _perform(self, execution: Execution, call: CallContext):
        """Runs the request on the target object; returns the value to answer with (None for SET_FIELD)."""
        runtime = self._runtime
        obj = runtime.residents.target(execution.object_id, execution.class_name)
        cls = type(obj)
        if execution.kind == CALL_METHOD:
            # __init__ too: StubDataClayObject makes an object, then runs its __init__ where it is stored
            if execution.name not in cls._dc_active_methods and execution.name != "__init__":
                raise MethodDoesNotExistError(f"{cls._dc_class_name} has no active method {execution.name!r}")
            args, kwargs, call.plain_flags = loads_call(execution.payload, runtime.policy)
            if not args and not kwargs:
                call.stored_field = getter_field(cls, execution.name)
            steps, whole = call.steps
            if steps is None:
                return _user_code(getattr(obj, execution.name), args, kwargs)
            method = steps.open(f"ee.method {execution.class_name}.{execution.name}", whole)
            try:
                value = _user_code(getattr(obj, execution.name), args, kwargs)
            except _UserCodeFailed as failed:
                steps.close(method, failed.error)
                raise
            steps.close(method)
            return value
        if execution.kind == GET_FIELD:
            call.stored_field = field_read(cls, execution.name)
            return _field_value(obj, _field(cls, execution.name))
        if execution.kind == SET_FIELD:
            _field(cls, execution.name)
            new_value = loads(execution.payload, runtime.policy, f"value for {cls.__name__}.{execution.name}")
            setattr(obj, execution.name, new_value)
            return None
        raise InvalidArgumentError(f"unknown execution kind {execution.kind!r}")

    def _outcome(self, execution: Execution, call: CallContext, value) -> Outcome:
        """Deltas, new objects and the pickled result of a finished call; the caller holds the commit lock."""
        runtime = self._runtime
        stale = runtime.residents.changed_since(call.generations)
        if stale:
            raise ConcurrentChangeError(f"object {stale} was changed by another call (of another account, or a "
                                        f"replica or version update) while this call used it: nothing of this call "
                                        f"was stored; call it again")
        writer = GraphWriter(runtime.backend_id, dataset=call.dataset)
        deltas = runtime.changes.collect(call.touched, writer)
        new_objects = writer.drain()
        result = b"" if execution.kind == SET_FIELD else \
            dumps(value, writer.pid_if_named, f"result of {execution.class_name}.{execution.name}")[0]
        runtime.changes.adopt_new(writer, new_objects)
        stored_field = call.stored_field if not deltas and not new_objects else ""
        return Outcome(execution.call_id, result, None, new_objects, deltas, stored_field)

    def _roll_back(self, call: CallContext) -> None:
        """Forgets the in-memory state of everything the failed call touched: it is reloaded from the store."""
        with self._runtime.changes.commit_lock:
            for obj in call.touched.values():
                self._runtime.residents.unload(obj)


def _user_code(method, args: tuple, kwargs: dict):
    try:
        result = method(*args, **kwargs)
        if inspect.iscoroutine(result):  # an `async def` active method: run it to its end on this thread's loop
            result = _thread_loop().run_until_complete(result)
        return result
    except DataClayException:
        raise
    except MemoryError as e:
        raise _UserCodeFailed(e if e.args else MemoryError(_out_of_memory())) from e
    except BaseException as e:  # whatever user code raises goes back to the caller, never kills the EE
        raise _UserCodeFailed(e) from e


def _out_of_memory() -> str:
    """What an empty MemoryError from model code says instead: whose limit it met and what to do."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    bound = f"{limit >> 20} MiB" if limit != resource.RLIM_INFINITY else "its"
    return (f"the method ran out of memory in the backend's execution environment, which has {bound} of address "
            f"space (DATACLAY_EE_MEMORY_MB) for all of this account's calls running there at once: hold less at "
            f"once (work on the data in pieces, or run fewer such calls at a time), or ask the cluster's "
            f"administrator to raise DATACLAY_EE_MEMORY_MB")


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's event loop for `async def` active methods: kept between calls, so the grpc.aio channels
    their awaited calls open on it are reused."""
    loop = getattr(_loops, "loop", None)
    if loop is None:
        loop = _loops.loop = asyncio.new_event_loop()
    return loop


def _field(cls, name: str) -> str:
    if name not in cls._dc_field_set:
        raise MethodDoesNotExistError(f"{cls._dc_class_name} has no persistent field {name!r}")
    return name


def _field_value(obj, name: str):
    d = obj.__dict__
    if name in d:
        return d[name]
    default = getattr(type(obj), name, None)
    if isinstance(default, PersistentField) and default.default is not MISSING:
        return default.default
    raise _UserCodeFailed(AttributeError(missing_field_message(type(obj), name)))
