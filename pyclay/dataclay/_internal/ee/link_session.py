"""LinkSession: serves the link to the Data Service with leader/follower threads and no hand-off on
a call's path. One thread at a time leads: it reads frames and handles each itself (deploy and evict
at once, in order with the frames after them). The leader runs an execute it reads itself, writes its
result frame and reads on, keeping the lead: a short call wakes no other thread. If that call lasts
LEAD_HOLD_SECONDS, the relief thread gives the lead to an idle thread, which reads the next frames while
the call goes on. A thread that runs a call and needs the Data Service (`load`, `relay`) sends its
request and waits for the answer, leading in its turn when nobody else does: answers for other threads
are handed to them, executes it reads are queued for an idle thread."""
from __future__ import annotations

import collections
import itertools
import logging
import os
import threading
import time

from dataclay.exceptions import BackendUnavailableError, DataClayException, InternalError, InvalidArgumentError
from dataclay._internal.ee.executor import CALL_METHOD, GET_FIELD, SET_FIELD, Execution, Executor, Outcome
from dataclay._internal.ee.models import ModelWatcher
from dataclay._internal.rpc import DataServiceLink, LinkClosedError, LinkProtocolError
from dataclay._internal.rpc.link_frames import execution_kind, loaded_objects
from dataclay._internal.version import DISTRIBUTION, VERSION

_log = logging.getLogger(__name__)

RUNTIME_VERSION = f"{DISTRIBUTION} {VERSION}"
EXIT_DONE, EXIT_LINK_FAILED, EXIT_RESTART = 0, 1, 3
RESTART_GRACE_SECONDS = 10.0
# A leader that has run one call this long gives the lead to another thread, so that a long call holds
# no other call up for longer. Handing the lead on at every call instead woke a thread per call: it cost
# the process 25-40 us of CPU per call, about half its share (benchmarks/README.md, "Environment threads").
LEAD_HOLD_SECONDS = 0.001
# The relief thread checks the running leader every LEAD_HOLD_SECONDS (so a lasting call keeps the lead
# for 1-2 of them), and sleeps until the next call once none has started for this long.
RELIEF_NAP_SECONDS = 0.05
_KINDS = {"CALL_METHOD": CALL_METHOD, "GET_FIELD": GET_FIELD, "SET_FIELD": SET_FIELD}
_ANSWERS = ("loaded", "relayed")


class LinkSession:
    """One attachment to the Data Service over `link`; run() returns the process exit code."""

    def __init__(self, link: DataServiceLink, executor: Executor | None, watcher: ModelWatcher, evict,
                 threads: int):
        self._link = link
        self._executor = executor
        self._watcher = watcher
        self._evict = evict
        self._threads = threads
        # One lock guards every field below. Each kind of waiter has a condition of its own, so that an
        # event wakes the one thread it concerns: waking every thread on every frame cost the process
        # about as much CPU per call as the call itself, with several clients.
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # workers with nothing to run
        self._ended = threading.Condition(self._lock)  # run(): the end of the link, or a restart
        self._awaiting: dict[int, threading.Condition] = {}  # request ID -> the condition its thread waits on
        self._relief = threading.Condition(self._lock)  # the relief thread
        self._leader: threading.Thread | None = None
        self._leader_runs_since: float | None = None  # when the leader began the call it runs (None: it reads)
        self._last_call_start = 0.0
        self._relief_naps = False
        self.leads_relieved = 0  # how often a lasting call's thread had the lead taken from it
        self._queued: collections.deque = collections.deque()
        self._answers: dict[int, object] = {}
        self._request_ids = itertools.count(1)
        self._in_flight = 0
        self._restarting = False
        self._exit_code: int | None = None

    def attach(self, executor: Executor, evict) -> None:
        """Gives the session the executor of its calls and what evicts objects (built after the session,
        which they use to reach the Data Service)."""
        self._executor = executor
        self._evict = evict

    def run(self, confinement: str) -> int:
        """Says hello, serves until the link ends (or a changed model asks for a restart) and returns the exit code.

        Restart: once the calls in flight have finished (at most RESTART_GRACE_SECONDS), the write side
        is closed after the last result frame, and the code is EXIT_RESTART."""
        try:
            self._link.send_hello(os.getpid(), RUNTIME_VERSION, confinement)
        except LinkClosedError as e:
            _log.error("cannot say hello to the Data Service: %s", e)
            return EXIT_LINK_FAILED
        for number in range(self._threads):
            threading.Thread(target=self._work, name=f"dataclay-call-{number}", daemon=True).start()
        threading.Thread(target=self._relieve, name="dataclay-lead-relief", daemon=True).start()
        with self._lock:
            self._ended.wait_for(lambda: self._exit_code is not None or self._restarting)
            if self._exit_code is None:
                if not self._ended.wait_for(lambda: self._exit_code is not None or self._in_flight == 0,
                                            timeout=RESTART_GRACE_SECONDS):
                    _log.warning("%d calls still running after %.0f s: restarting without their results",
                                 self._in_flight, RESTART_GRACE_SECONDS)
                self._exit_code = EXIT_RESTART
            code = self._exit_code
        if code == EXIT_RESTART:
            self._link.finish_sending()
        return code

    # ---- asking the Data Service, from a thread running a call -------------------------------------

    def load(self, call_id: int, ids: list) -> list:
        """The stored state (ObjectRecords) of those of `ids` this backend holds, read by the Data Service for
        call `call_id`; the error the Data Service answered instead, raised."""
        request_id = next(self._request_ids)
        self._link.send_load(request_id, call_id, ids)
        return loaded_objects(self._await(request_id))

    def relay(self, call_id: int, target: str, method: str, request: bytes):
        """A unary call made by the Data Service for call `call_id` in its caller's session (its RelayReply,
        which ee/relay.py hands back as a gRPC call's outcome)."""
        request_id = next(self._request_ids)
        self._link.send_relay(request_id, call_id, target, method, request)
        return self._await(request_id)

    def _await(self, request_id: int):
        me = threading.current_thread()
        with self._lock:
            mine = self._awaiting[request_id] = threading.Condition(self._lock)
        try:
            while True:
                with self._lock:
                    while True:
                        answer = self._answers.pop(request_id, None)
                        if answer is not None:
                            return answer
                        if self._exit_code is not None:
                            raise BackendUnavailableError("the link to the Data Service ended while waiting for it")
                        if self._leader is None or self._leader is me:  # me: the call it runs as the leader
                            self._leader = me
                            self._leader_runs_since = None
                            break
                        mine.wait()
                answer = self._lead(request_id)
                if answer is not None:
                    return answer
        finally:
            with self._lock:
                del self._awaiting[request_id]
                if self._leader is None:  # a wake-up to lead may have been this thread's: pass it on
                    self._give_up_lead(request_id)

    # ---- the threads -------------------------------------------------------------------------------

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            with self._lock:
                while True:
                    if self._exit_code is not None:
                        return
                    if self._leader is me:  # it kept the lead through the call it ran
                        self._leader_runs_since = None
                        request = None
                        if self._queued:
                            request = self._queued.popleft()
                            self._goes_on_to_run(None)
                        break
                    if self._queued:
                        request = self._queued.popleft()
                        if self._leader is None:  # woken to lead, this thread runs queued work: pass it on
                            self._give_up_lead(None)
                        break
                    if self._leader is None:
                        self._leader = me
                        request = None
                        break
                    self._idle.wait()
            if request is None:
                request = self._lead(None)
                if request is None:
                    continue
            self._serve(request)

    def _lead(self, wanted: int | None):
        """Reads frames as the leader until: an execute (returned, for an idle thread), the answer to
        `wanted` (returned, for a waiting thread), or the end of the link (None). Leadership is given
        up before returning."""
        try:
            while True:
                message = self._next()
                if message is None:
                    return None
                kind = message.WhichOneof("kind")
                if kind == "execute":
                    with self._lock:
                        self._in_flight += 1
                        if wanted is None:
                            self._goes_on_to_run(wanted)
                            return message.execute
                        self._queued.append(message.execute)
                        self._idle.notify()
                elif kind in _ANSWERS:
                    answer = getattr(message, kind)
                    with self._lock:
                        if answer.request_id == wanted:
                            self._goes_on_to_run(wanted)
                            return answer
                        self._answers[answer.request_id] = answer
                        waiter = self._awaiting.get(answer.request_id)
                        if waiter is not None:
                            waiter.notify()
                else:
                    self._handle(kind, message)
        except BaseException:
            with self._lock:
                if self._leader is threading.current_thread():
                    self._give_up_lead(wanted)
            raise

    def _goes_on_to_run(self, mine: int | None) -> None:
        """Called holding the lock by the leader, which waited for answer `mine` (None: for work) and goes on
        to run a call: it keeps the lead meanwhile, unless another thread waits for an answer (that one
        reads on for it)."""
        if any(request_id != mine for request_id in self._awaiting):
            self._give_up_lead(mine)
            return
        self._leader_runs_since = self._last_call_start = time.monotonic()
        if self._relief_naps:
            self._relief_naps = False
            self._relief.notify()

    def _relieve(self) -> None:
        """The relief thread: takes the lead from a leader whose call has run LEAD_HOLD_SECONDS, for an idle
        thread (or one waiting for an answer) to read the link meanwhile."""
        with self._lock:
            while self._exit_code is None:
                since = self._leader_runs_since
                now = time.monotonic()
                timeout = LEAD_HOLD_SECONDS
                if since is not None and now - since >= LEAD_HOLD_SECONDS:
                    self.leads_relieved += 1
                    self._give_up_lead(None)
                elif since is None and now - self._last_call_start >= RELIEF_NAP_SECONDS:
                    self._relief_naps = True
                    timeout = None
                self._relief.wait(timeout)

    def _give_up_lead(self, mine: int | None) -> None:
        """Called holding the lock by the leader, which waited for answer `mine` (None: for work). One
        thread takes the lead next: one waiting for an answer (it reads until it has it), else an idle worker."""
        self._leader = None
        self._leader_runs_since = None
        for request_id, waiter in self._awaiting.items():
            if request_id != mine:
                waiter.notify()
                return
        self._idle.notify()

    def _next(self):
        """The next frame, or None once the link ended (leadership given up then)."""
        try:
            message = self._link.receive()
        except LinkProtocolError as e:
            _log.error("protocol violation on the link from the Data Service: %s; closing it", e)
            self._link.close()
            return self._end(EXIT_LINK_FAILED)
        except LinkClosedError as e:
            _log.error("the link to the Data Service failed: %s", e)
            return self._end(EXIT_LINK_FAILED)
        if message is None:
            _log.info("the Data Service closed the link")
            return self._end(EXIT_DONE)
        return message

    def _handle(self, kind: str, message) -> None:
        try:
            if kind == "deploy":
                self._on_deploy(message.deploy)
            elif kind == "evict":
                self._evict(list(message.evict.ids), idle=message.evict.idle)
            else:
                _log.warning("ignoring a DataServiceMessage of unknown kind (%d bytes)", message.ByteSize())
        except Exception:  # a failed deploy or evict must not take a thread (or the link) down
            _log.exception("handling a %s message failed", kind)

    def _end(self, code: int) -> None:
        with self._lock:
            if self._exit_code is None:
                self._exit_code = EXIT_RESTART if self._restarting else code
            self._leader = None
            self._idle.notify_all()
            self._ended.notify_all()
            self._relief.notify_all()
            for waiter in self._awaiting.values():
                waiter.notify()
        return None

    def _serve(self, request) -> None:
        try:
            if self._restarting:
                self._deliver(Outcome(request.call_id, error=BackendUnavailableError(
                    "the execution environment is restarting to load changed model code; retry the call")))
            else:
                self._execute(request)
        except LinkClosedError as e:
            _log.warning("the result of call %d was not sent: %s", request.call_id, e)
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._restarting and self._in_flight == 0:
                    self._ended.notify_all()

    def _execute(self, request) -> None:
        try:
            execution = execution_of(request)
        except DataClayException as e:
            self._deliver(Outcome(request.call_id, error=e))
            return
        try:
            self._executor.execute(execution, self._deliver)
        except LinkClosedError:
            raise
        except Exception as e:  # the result could not be turned into a frame: never leave the caller waiting
            _log.exception("the result of call %d could not be sent", request.call_id)
            self._deliver(Outcome(request.call_id, error=InternalError(f"execution environment: {e}")))

    def _deliver(self, outcome: Outcome) -> None:
        """Writes the result frame of `outcome` (called by the Executor inside its commit section)."""
        self._link.send_result(outcome.call_id, outcome.result, outcome.error, outcome.new_objects, outcome.deltas,
                               outcome.stored_field, outcome.spans)

    def _on_deploy(self, models) -> None:
        changed = self._watcher.install([(f.path, f.content) for m in models.models for f in m.files])
        if changed and not self._restarting:
            _log.info("model modules %s changed: finishing calls in flight, then restarting", ", ".join(changed))
            with self._lock:
                self._restarting = True
                self._ended.notify_all()


def execution_of(request) -> Execution:
    """The plain Execution of an ExecuteRequest."""
    kind = _KINDS.get(execution_kind(request.kind))
    if kind is None:
        raise InvalidArgumentError(f"ExecuteRequest.kind {request.kind} is not a known execution kind")
    caller = request.caller
    return Execution(request.call_id, request.object_id, request.class_name, kind, request.name, request.payload,
                     caller.username, caller.dataset, frozenset(caller.datasets), bool(request.traceparent))
