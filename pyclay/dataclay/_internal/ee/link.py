"""LinkSession: serves the one stream attached to the Data Service. Requests run concurrently in
a thread pool; results go back in any order through a single outbox (gRPC's request iterator),
so stream writes never interleave. Deploy and evict messages are handled in order as they come."""
from __future__ import annotations

import logging
import os
import queue
import threading
from concurrent.futures import ThreadPoolExecutor

from dataclay.exceptions import BackendUnavailableError, DataClayError, InternalError, InvalidArgumentError
from dataclay._internal.ee.executor import CALL_METHOD, GET_FIELD, SET_FIELD, Execution, Executor, Outcome
from dataclay._internal.ee.models import ModelWatcher
from dataclay._internal.proto import executionenv_pb2 as ee_pb2
from dataclay._internal.rpc import EnvironmentLinkClient
from dataclay._internal.rpc.convert import add_object_data, add_object_delta
from dataclay._internal.rpc.errors import error_info_for

_log = logging.getLogger(__name__)

RUNTIME_VERSION = "pyclay 0.1.0"
EXIT_DONE, EXIT_LINK_FAILED, EXIT_RESTART = 0, 1, 3
RESTART_GRACE_SECONDS = 10.0
_KINDS = {ee_pb2.CALL_METHOD: CALL_METHOD, ee_pb2.GET_FIELD: GET_FIELD, ee_pb2.SET_FIELD: SET_FIELD}
_CLOSE = object()


class LinkSession:
    """One attachment to the Data Service; run() returns the process exit code."""

    def __init__(self, link: EnvironmentLinkClient, executor: Executor, watcher: ModelWatcher, evict, threads: int):
        self._link = link
        self._executor = executor
        self._watcher = watcher
        self._evict = evict
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="dataclay-call")
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()
        self._in_flight = 0
        self._idle = threading.Condition()
        self._restarting = False
        self._incoming = None

    def run(self) -> int:
        """Attaches, serves until the stream ends, and says how the process should exit."""
        self._incoming = self._link.attach(self._outgoing())
        try:
            for message in self._incoming:
                kind = message.WhichOneof("kind")
                if kind == "execute":
                    self._on_execute(message.execute)
                elif kind == "deploy":
                    self._on_deploy(message.deploy)
                elif kind == "evict":
                    self._evict(list(message.evict.ids))
            _log.info("the Data Service closed the link")
            return EXIT_RESTART if self._restarting else EXIT_DONE
        except DataClayError as e:
            if self._restarting:
                return EXIT_RESTART
            _log.error("the link to the Data Service failed: %s", e)
            return EXIT_LINK_FAILED
        finally:
            self._outbox.put(_CLOSE)
            self._pool.shutdown(wait=False, cancel_futures=True)

    def _outgoing(self):
        yield ee_pb2.EnvironmentMessage(hello=ee_pb2.EnvironmentHello(pid=os.getpid(),
                                                                      runtime_version=RUNTIME_VERSION))
        while True:
            message = self._outbox.get()
            if message is _CLOSE:
                return
            yield message

    def _on_execute(self, request) -> None:
        if self._restarting:
            self._answer(Outcome(request.call_id, error=BackendUnavailableError(
                "the execution environment is restarting to load changed model code; retry the call")))
            return
        with self._idle:
            self._in_flight += 1
        self._pool.submit(self._serve, request)

    def _serve(self, request) -> None:
        try:
            outcome = self._executor.execute(execution_of(request))
        except DataClayError as e:
            outcome = Outcome(request.call_id, error=e)
        except Exception as e:  # never leave the Data Service waiting for an answer
            _log.exception("request %s could not be served", request.call_id)
            outcome = Outcome(request.call_id, error=InternalError(f"execution environment: {e}"))
        try:
            self._watcher.note_imports()
            self._answer(outcome)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _answer(self, outcome: Outcome) -> None:
        self._outbox.put(ee_pb2.EnvironmentMessage(result=result_message(outcome)))

    def _on_deploy(self, models) -> None:
        changed = self._watcher.changed_by([(f.path, f.content) for m in models.models for f in m.files])
        if changed and not self._restarting:
            _log.info("model modules %s changed: finishing calls in flight, then restarting", ", ".join(changed))
            self._restarting = True
            threading.Thread(target=self._drain_and_close, name="dataclay-restart", daemon=True).start()

    def _drain_and_close(self) -> None:
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=RESTART_GRACE_SECONDS)
        self._outbox.put(_CLOSE)
        # Our half-close lets the Data Service end the stream; if it does not, stop waiting.
        timer = threading.Timer(RESTART_GRACE_SECONDS, self._incoming.cancel)
        timer.daemon = True
        timer.start()


def execution_of(request) -> Execution:
    """The plain Execution of an ExecuteRequest."""
    kind = _KINDS.get(request.kind)
    if kind is None:
        raise InvalidArgumentError(f"ExecuteRequest.kind {request.kind} is not a known execution kind")
    session = request.session
    return Execution(request.call_id, request.object_id, request.class_name, kind, request.name, request.payload,
                     session.token, session.username, session.dataset, frozenset(session.datasets))


def result_message(outcome: Outcome) -> ee_pb2.ExecuteResult:
    """The ExecuteResult of an Outcome."""
    if outcome.error is not None:
        return ee_pb2.ExecuteResult(call_id=outcome.call_id, error=error_info_for(outcome.error))
    message = ee_pb2.ExecuteResult(call_id=outcome.call_id, result=outcome.result)
    add_object_data(message.new_objects, outcome.new_objects)
    add_object_delta(message.deltas, outcome.deltas)
    return message
