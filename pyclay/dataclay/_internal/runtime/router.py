"""BackendRouter: finds the backend of an object and calls it, keeping the Logic Module off the
hot path. Backends and object metadata are cached; a stale entry is noticed when a backend
answers OBJECT_NOT_HERE or cannot be reached, then refreshed from the Logic Module once."""
from __future__ import annotations

import random
import threading
from typing import Callable, TypeVar

from dataclay.exceptions import (
    BackendDoesNotExistError, BackendUnavailableError, DataClayError, ObjectNotHereError)
from dataclay._internal.model.states import HINT_KEY, ID_KEY
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from dataclay._internal.rpc.convert import backend_record, object_info_record

T = TypeVar("T")
LOOKUP_TIMEOUT = 30.0
"""Seconds a metadata lookup may take: a Logic Module that does not answer must not hang a caller forever."""


class BackendRouter:
    """Backends and object locations of one runtime; `token()` is the session calls are made in."""

    def __init__(self, lm: LogicModuleClient, token: Callable[[], str | None]):
        self._lm = lm
        self._token = token
        self._backends: dict = {}
        self._clients: dict[str, DataServiceClient] = {}
        self._infos: dict = {}
        self._lock = threading.Lock()

    # ---- Logic Module ---------------------------------------------------------------------------

    def lm(self) -> LogicModuleClient:
        """The Logic Module client, acting in the current session."""
        token = self._token()
        return self._lm if self._lm.token == token else self._lm.with_token(token)

    def backends(self, refresh: bool = False) -> dict:
        """Backend ID -> BackendRecord (from the Logic Module on first use or when `refresh`)."""
        if refresh or not self._backends:
            fresh = {b.id: b for b in map(backend_record, self.lm().get_backends(timeout=LOOKUP_TIMEOUT))}
            with self._lock:
                for backend_id, client in list(self._clients.items()):
                    known = fresh.get(backend_id)
                    if known is None or known.address != client.address:
                        self._clients.pop(backend_id).close()
                self._backends = fresh
        return self._backends

    def choose_backend(self) -> str:
        """A random live backend that runs Python objects."""
        live = [b.id for b in self.backends().values() if b.alive and "python" in b.languages]
        if not live:
            live = [b.id for b in self.backends(refresh=True).values() if b.alive and "python" in b.languages]
        if not live:
            raise BackendUnavailableError("no live backend with a Python execution environment is registered")
        return random.choice(live)

    def object_info(self, object_id: str, refresh: bool = False):
        """The ObjectInfoRecord of an object (cached; asked again when `refresh`)."""
        info = None if refresh else self._infos.get(object_id)
        if info is None:
            info = object_info_record(self.lm().get_object_info(object_id, timeout=LOOKUP_TIMEOUT))
            self._infos[object_id] = info
        return info

    def remember(self, info) -> None:
        """Caches an ObjectInfoRecord obtained elsewhere (e.g. by alias)."""
        self._infos[info.id] = info

    def cached_info(self, object_id: str):
        """The cached ObjectInfoRecord of an object, or None."""
        return self._infos.get(object_id)

    # ---- Data Services --------------------------------------------------------------------------

    def data_service(self, backend_id: str) -> DataServiceClient:
        """The client of a backend's Data Service, acting in the current session."""
        client = self._clients.get(backend_id)
        if client is None:
            client = self._connect(backend_id)
        token = self._token()
        return client if client.token == token else client.with_token(token)

    def on_backend(self, backend_id: str, op: Callable[[DataServiceClient], T], idempotent: bool) -> T:
        """`op(client)` on a backend; an unreachable backend is looked up again and retried once when safe."""
        try:
            return op(self.data_service(backend_id))
        except BackendUnavailableError as e:
            if not (idempotent or e.connect_failed):
                raise
            self._reconnect(backend_id)
            return op(self.data_service(backend_id))

    def on_object(self, obj, op: Callable[[DataServiceClient], T], idempotent: bool) -> T:
        """`op(client)` on the backend holding `obj`; OBJECT_NOT_HERE refreshes its location and retries once."""
        d = obj.__dict__
        backend_id = d.get(HINT_KEY) or self.object_info(d[ID_KEY]).master_backend_id
        try:
            return self.on_backend(backend_id, op, idempotent)
        except (ObjectNotHereError, BackendDoesNotExistError):
            master = self.object_info(d[ID_KEY], refresh=True).master_backend_id
            if master == backend_id:
                raise
            d[HINT_KEY] = master
            return self.on_backend(master, op, idempotent)

    def close(self) -> None:
        """Closes every Data Service channel (not the Logic Module's)."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    def _connect(self, backend_id: str) -> DataServiceClient:
        backend = self.backends().get(backend_id) or self.backends(refresh=True).get(backend_id)
        if backend is None:
            raise BackendDoesNotExistError(f"no backend {backend_id} is registered")
        with self._lock:
            client = self._clients.get(backend_id)
            if client is None or client.address != backend.address:
                if client is not None:
                    client.close()
                client = DataServiceClient(backend.address, self._token())
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
        except DataClayError:
            pass  # the Logic Module is down too: retry at the address we knew
