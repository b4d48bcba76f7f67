"""AsyncRouter: BackendRouter's rules (cached metadata, a stale location noticed when a backend does
not hold the object or cannot be reached, then the master and each replica in turn) for calls awaited
on one event loop. It shares the caches of the runtime's BackendRouter and has its own grpc.aio
channels, which serve that loop only."""
from __future__ import annotations

import time

from typing import Awaitable, Callable, TypeVar

from dataclay.exceptions import BackendUnavailableError, DataClayException
from dataclay._internal.model.states import HINT_KEY, ID_KEY
from dataclay._internal.rpc.aio import AsyncDataServiceClient, AsyncLogicModuleClient
from dataclay._internal.runtime.router import (
    LOOKUP_TIMEOUT, ROUTING_FAILURES, BackendRouter, Failover, UnregisteredBackendError, naming_backend)

T = TypeVar("T")


class AsyncRouter:
    """Routes the awaited calls of one event loop; create it inside that loop."""

    def __init__(self, router: BackendRouter):
        self._router = router
        target = router.lm_target()
        self._lm = AsyncLogicModuleClient(target.address, tls=target.tls, server_name=target.server_name)
        self._clients: dict[str, AsyncDataServiceClient] = {}

    @property
    def cache(self) -> BackendRouter:
        """The synchronous router whose caches (backends, object metadata, reachability) this one shares."""
        return self._router

    def lm(self) -> AsyncLogicModuleClient:
        """The Logic Module client of this loop, acting in the current session."""
        token = self._router.token()
        return self._lm if self._lm.token == token else self._lm.with_token(token)

    async def backends(self, refresh: bool = False) -> dict:
        """Backend ID -> BackendRecord (asked to the Logic Module on first use or when `refresh`)."""
        known = self._router.cached_backends()
        if refresh or not known:
            known = self._router.learn_backends(await self.lm().get_backends(timeout=LOOKUP_TIMEOUT))
            for backend_id, client in list(self._clients.items()):
                if backend_id not in known or known[backend_id].address != client.address:
                    self._clients.pop(backend_id).close()
        return known

    async def object_info(self, object_id: str, refresh: bool = False):
        """The ObjectInfoRecord of an object (cached; asked again when `refresh`)."""
        info = None if refresh else self._router.cached_info(object_id)
        if info is None:
            info = await self.lm().get_object_info(object_id, timeout=LOOKUP_TIMEOUT)
            self._router.remember(info)
        return info

    async def data_service(self, backend_id: str) -> AsyncDataServiceClient:
        """The client of a backend's Data Service on this loop, acting in the current session."""
        client = self._clients.get(backend_id)
        if client is None:
            backend = (await self.backends()).get(backend_id) or (await self.backends(refresh=True)).get(backend_id)
            if backend is None:
                raise UnregisteredBackendError(f"no backend {backend_id} is registered")
            client = self._clients.get(backend_id)
            if client is None:
                client = self._clients[backend_id] = AsyncDataServiceClient(
                    backend.address, self._router.token(), tls=self._router.tls(), call_port=True)
        token = self._router.token()
        return client if client.token == token else client.with_token(token)

    async def on_backend(self, backend_id: str, op: Callable[[AsyncDataServiceClient], Awaitable[T]],
                         idempotent: bool) -> T:
        """`await op(client)` on a backend; an unreachable backend is looked up again and retried once when safe
        (not when it stayed silent for the liveness bound). A BackendUnavailableError names the backend."""
        try:
            return await self._on_backend(backend_id, op, idempotent)
        except BackendUnavailableError as e:
            raise naming_backend(e, backend_id, self._router.cached_backends().get(backend_id)) from None

    async def _on_backend(self, backend_id: str, op: Callable[[AsyncDataServiceClient], Awaitable[T]],
                          idempotent: bool) -> T:
        started = time.monotonic()
        try:
            result = await op(await self.data_service(backend_id))
        except BackendUnavailableError as e:
            if self._router.silent(backend_id, started) or not (idempotent or e.connect_failed):
                raise
            await self._reconnect(backend_id)
            try:
                result = await op(await self.data_service(backend_id))
            except BackendUnavailableError as again:
                self._router.note_failure(backend_id, again)
                raise
        self._router.reached(backend_id)
        return result

    async def on_object(self, obj, op: Callable[[AsyncDataServiceClient], Awaitable[T]], idempotent: bool,
                        replicas: bool = True) -> T:
        """`await op(client)` on the backend holding `obj`, with BackendRouter.on_object's failover."""
        d = obj.__dict__
        object_id = d[ID_KEY]
        backend_id = d.get(HINT_KEY) or (await self.object_info(object_id)).master_backend_id
        try:
            return await self.on_backend(backend_id, op, idempotent)
        except ROUTING_FAILURES as e:
            first = e
        try:
            info = await self.object_info(object_id, refresh=True)
        except BackendUnavailableError:
            # the Logic Module is unreachable too: the copies known before are all there is to try
            info = self._router.cached_info(object_id)
            if info is None:
                raise first from None
        failover = Failover(obj, first, info, backend_id, replicas)
        for candidate in failover.candidates:
            try:
                return failover.answered(candidate, await self.on_backend(candidate, op, idempotent))
            except ROUTING_FAILURES as e:
                failover.failed(e)
        raise failover.most_telling() from None

    def close(self) -> None:
        """Closes this loop's channels (on the loop while it lives)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in (*clients, self._lm):
            client.close()

    async def _reconnect(self, backend_id: str) -> None:
        stale = self._clients.pop(backend_id, None)
        if stale is not None:
            stale.close()
        try:
            await self.backends(refresh=True)
        except DataClayException:
            pass  # the Logic Module is down too: retry at the address we knew
