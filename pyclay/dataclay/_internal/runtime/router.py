"""BackendRouter: finds the backend of an object and calls it, keeping the Logic Module off the
hot path. Backends and object metadata are cached; a stale entry is noticed when a backend
answers OBJECT_NOT_HERE or cannot be reached, then refreshed from the Logic Module once and the
call goes to the master, then to each replica in turn (failover: a replica serves reads and
refuses writes, so trying one never applies a change twice)."""
from __future__ import annotations

import random
import threading
import time
from typing import Callable, TypeVar

from dataclay.exceptions import (
    BackendDoesNotExistError, BackendUnavailableError, DataClayException, ObjectNotHereError)
from dataclay._internal.model.states import HINT_KEY, ID_KEY
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient, channels
from dataclay._internal.rpc.convert import backend_record
from dataclay._internal.rpc.tls import ClusterCa

T = TypeVar("T")
LOOKUP_TIMEOUT = 30.0
"""Seconds a metadata lookup may take: a Logic Module that does not answer must not hang a caller forever."""


class BackendRouter:
    """Backends and object locations of one runtime; `token()` is the session calls are made in and
    `tls` the cluster CA the backends' channels trust (None: plaintext)."""

    def __init__(self, lm: LogicModuleClient, token: Callable[[], str | None], tls: ClusterCa | None = None):
        self._lm = lm
        self._token = token
        self._tls = tls
        self._backends: dict = {}
        self._clients: dict[str, DataServiceClient] = {}
        self._infos: dict = {}
        self._unreachable: set[str] = set()
        self._lock = threading.Lock()

    # ---- Logic Module ---------------------------------------------------------------------------

    def lm(self) -> LogicModuleClient:
        """The Logic Module client, acting in the current session."""
        token = self._token()
        return self._lm if self._lm.token == token else self._lm.with_token(token)

    def lm_target(self):
        """Where the Logic Module is (its ConnectionTarget)."""
        return self._lm.target

    def cached_backends(self) -> dict:
        """The backend list as last learnt (empty before the first lookup)."""
        return self._backends

    def backends(self, refresh: bool = False) -> dict:
        """Backend ID -> BackendRecord (from the Logic Module on first use or when `refresh`)."""
        if refresh or not self._backends:
            self.learn_backends(self.lm().get_backends(timeout=LOOKUP_TIMEOUT))
        return self._backends

    def learn_backends(self, infos) -> dict:
        """Replaces the cached backend list with `infos` (BackendInfo messages, fresh from the Logic Module),
        closing the channels of backends that left or moved; returns the new list."""
        fresh = {b.id: b for b in map(backend_record, infos)}
        with self._lock:
            for backend_id, client in list(self._clients.items()):
                known = fresh.get(backend_id)
                if known is None or known.address != client.address:
                    self._clients.pop(backend_id).close()
            self._backends = fresh
        return fresh

    def choose_backend(self) -> str:
        """A random live backend that runs Python objects."""
        live = python_backends(self.backends()) or python_backends(self.backends(refresh=True))
        if not live:
            raise BackendUnavailableError("no live backend with a Python execution environment is registered")
        return random.choice(live)

    def object_info(self, object_id: str, refresh: bool = False):
        """The ObjectInfoRecord of an object (cached; asked again when `refresh`)."""
        info = None if refresh else self._infos.get(object_id)
        if info is None:
            info = self.lm().get_object_info(object_id, timeout=LOOKUP_TIMEOUT)
            self._infos[object_id] = info
        return info

    def remember(self, info) -> None:
        """Caches an ObjectInfoRecord obtained elsewhere (e.g. by alias)."""
        self._infos[info.id] = info

    def cached_info(self, object_id: str):
        """The cached ObjectInfoRecord of an object, or None."""
        return self._infos.get(object_id)

    def forget(self, object_ids) -> None:
        """Drops the cached ObjectInfoRecords of objects whose copies changed (asked again on next use)."""
        for object_id in object_ids:
            self._infos.pop(object_id, None)

    def unreachable(self, backend_id: str) -> bool:
        """True while the last call this router made to the backend could not reach it."""
        return backend_id in self._unreachable

    def reached(self, backend_id: str) -> None:
        """Notes that a call to the backend got an answer."""
        self._unreachable.discard(backend_id)

    def silent(self, backend_id: str, started: float) -> bool:
        """Whether a call to the backend begun at `started` (time.monotonic()) failed because the backend
        stayed silent for the liveness bound; if so, it is noted unreachable."""
        if channels.went_silent(time.monotonic() - started):
            self._unreachable.add(backend_id)
            return True
        return False

    def note_failure(self, backend_id: str, error: BackendUnavailableError) -> None:
        """Remembers a backend that could not be reached (not one that answered with a refusal)."""
        if error.connect_failed:
            self._unreachable.add(backend_id)

    def tls(self):
        """The cluster CA the backends' channels trust (None: plaintext)."""
        return self._tls

    def token(self) -> str | None:
        """The session calls are made in now."""
        return self._token()

    # ---- Data Services --------------------------------------------------------------------------

    def data_service(self, backend_id: str) -> DataServiceClient:
        """The client of a backend's Data Service, acting in the current session."""
        client = self._clients.get(backend_id)
        if client is None:
            client = self._connect(backend_id)
        token = self._token()
        return client if client.token == token else client.with_token(token)

    def on_backend(self, backend_id: str, op: Callable[[DataServiceClient], T], idempotent: bool) -> T:
        """`op(client)` on a backend; an unreachable backend is looked up again and retried once when safe
        (not when it stayed silent for the liveness bound: then its copies elsewhere are tried at once).
        A BackendUnavailableError names the backend."""
        try:
            return self._on_backend(backend_id, op, idempotent)
        except BackendUnavailableError as e:
            raise naming_backend(e, backend_id, self._backends.get(backend_id)) from None

    def _on_backend(self, backend_id: str, op: Callable[[DataServiceClient], T], idempotent: bool) -> T:
        started = time.monotonic()
        try:
            result = op(self.data_service(backend_id))
        except BackendUnavailableError as e:
            if self.silent(backend_id, started):
                raise
            if not (idempotent or e.connect_failed):
                raise
            self._reconnect(backend_id)
            try:
                result = op(self.data_service(backend_id))
            except BackendUnavailableError as again:
                self.note_failure(backend_id, again)
                raise
        self._unreachable.discard(backend_id)
        return result

    def on_object(self, obj, op: Callable[[DataServiceClient], T], idempotent: bool, replicas: bool = True) -> T:
        """`op(client)` on the backend holding `obj` (its hint, else its master). When that backend does
        not hold it (OBJECT_NOT_HERE, unregistered) or cannot serve it (BACKEND_UNAVAILABLE), the
        location is asked again and the call goes to the master, then (if `replicas`) to each replica
        in turn; the backend that answers becomes the object's hint."""
        d = obj.__dict__
        object_id = d[ID_KEY]
        backend_id = d.get(HINT_KEY) or self.object_info(object_id).master_backend_id
        try:
            return self.on_backend(backend_id, op, idempotent)
        except ROUTING_FAILURES as e:
            first = e
        try:
            info = self.object_info(object_id, refresh=True)
        except BackendUnavailableError:
            # the Logic Module is unreachable too: the copies known before are all there is to try
            info = self.cached_info(object_id)
            if info is None:
                raise first from None
        failover = Failover(obj, first, info, backend_id, replicas)
        for candidate in failover.candidates:
            try:
                return failover.answered(candidate, self.on_backend(candidate, op, idempotent))
            except ROUTING_FAILURES as e:
                failover.failed(e)
        raise failover.most_telling() from None

    def close(self) -> None:
        """Closes every Data Service channel (not the Logic Module's)."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    def _connect(self, backend_id: str) -> DataServiceClient:
        backend = self.backends().get(backend_id) or self.backends(refresh=True).get(backend_id)
        if backend is None:
            raise UnregisteredBackendError(f"no backend {backend_id} is registered")
        with self._lock:
            client = self._clients.get(backend_id)
            if client is None or client.address != backend.address:
                if client is not None:
                    client.close()
                client = DataServiceClient(backend.address, self._token(), tls=self._tls, call_port=True)
                self._clients[backend_id] = client
            return client

    def _reconnect(self, backend_id: str) -> None:
        """Forgets the channel to a backend that failed, learning its (maybe new) address if the LM answers."""
        with self._lock:
            stale = self._clients.pop(backend_id, None)
        if stale is not None:
            stale.close()
        try:
            self.backends(refresh=True)
        except DataClayException:
            pass  # the Logic Module is down too: retry at the address we knew


def naming_backend(error: BackendUnavailableError, backend_id: str, record) -> BackendUnavailableError:
    """`error`, its message led by the backend it came from (name, ID and address when known)."""
    if backend_id in str(error):
        return error
    where = f"backend {record.name} ({backend_id}, {record.address})" if record is not None else f"backend {backend_id}"
    return BackendUnavailableError(f"{where} is unavailable: {error}", connect_failed=error.connect_failed)


def python_backends(backends: dict) -> list:
    """The IDs of the live backends that run Python objects."""
    return [b.id for b in backends.values() if b.alive and "python" in b.languages]


class UnregisteredBackendError(BackendDoesNotExistError, KeyError):
    """The backend an object was routed to, or a call named (`backend_id=`), is not registered (as
    opposed to a request naming an unknown target backend, which the server answers with
    BACKEND_DOES_NOT_EXIST itself). Also a KeyError: what dataClay 4 raises for an unknown backend
    ID, so its programs' `except KeyError` still catches it."""

    def __str__(self) -> str:
        return Exception.__str__(self)  # not KeyError's, which would quote the message


ROUTING_FAILURES = (ObjectNotHereError, UnregisteredBackendError, BackendUnavailableError)


class Failover:
    """Where a call on an object goes after the backend it went to (`failed`) did not serve it, and what is
    raised when nothing could: `candidates` are the master, then (if `replicas`) each replica. Never the
    backend that just failed: a non-idempotent call that may have run on a dead master must not run there a
    second time. A replica refuses state changes (writes go to the master), so a call that fails there
    changed nothing. The candidate that answers becomes the object's hint."""

    def __init__(self, obj, first: DataClayException, info, failed: str, replicas: bool):
        self._obj = obj
        self._failures = [first]
        candidates = [info.master_backend_id, *(info.replica_backend_ids if replicas else ())]
        self.candidates = list(dict.fromkeys(b for b in candidates if b and b != failed))

    def failed(self, error: DataClayException) -> None:
        """Notes that a candidate did not serve the call either."""
        self._failures.append(error)

    def answered(self, candidate: str, result: T) -> T:
        """`result`, after making `candidate`, which gave it, the object's hint."""
        self._obj.__dict__[HINT_KEY] = candidate
        return result

    def most_telling(self) -> DataClayException:
        """What to raise when no candidate served the call: a refusal or unavailability before "not here"
        (a replica's "writes go to the master" says more than the dead master's connection error)."""
        for error in reversed(self._failures):
            if isinstance(error, BackendUnavailableError):
                return error
        return self._failures[0]
