"""AsyncRuntime: the operations the `a_` methods await, for one event loop. Each is its Runtime
twin's (same checks, same results, same errors) with the network calls awaited on grpc.aio channels,
so a thousand of them can be in flight from one loop without a thread each. What does no network
I/O (serialising a graph, decoding a value) runs inline."""
from __future__ import annotations

import random

from dataclay.exceptions import (
    AliasDoesNotExistError, BackendDoesNotExistError, BackendUnavailableError, ObjectDoesNotExistError, RemoteError)
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.states import HINT_KEY, ID_KEY, STATE_KEY
from dataclay._internal.runtime import local_copies
from dataclay._internal.runtime.aio_router import AsyncRouter
from dataclay._internal.runtime.base import (
    Copies, Version, arguments, become_proxies, canonical_id, check_class, graph_of, named_error)
from dataclay._internal.runtime.router import python_backends
from dataclay._internal.serialization import exceptions as remote_exceptions
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps_args


class AsyncRuntime:
    """The asyncio twin of `runtime` for the event loop it was made in."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.router = AsyncRouter(runtime.router)

    async def call_method(self, obj, name: str, args: tuple, kwargs: dict):
        """Runs an active method (an `async def` one) where the object is, and returns its result."""
        runtime = self.runtime
        if runtime.runs_here(obj):
            return await getattr(obj, name)(*args, **kwargs)
        oid = obj.__dict__[ID_KEY]
        payload, volatile = arguments(args, kwargs, runtime.persists_arguments, runtime.plain_flags)
        if volatile:
            for found in volatile:
                if found.__dict__.get(STATE_KEY) is None:
                    await self.make_persistent(found, None, obj.__dict__.get(HINT_KEY) or None, True)
            payload = dumps_args(args, kwargs, plain_flags=runtime.plain_flags)
        try:
            data = await self.router.on_object(obj, lambda ds: ds.call_method(oid, name, payload), idempotent=False)
        except RemoteError as e:
            raise remote_exceptions.rebuild(e, runtime.policy) from None
        return loads(data, runtime.policy, f"result of {type(obj).__name__}.{name}")

    async def make_persistent(self, obj, alias: str | None, backend_id: str | None, recursive: bool) -> None:
        """Stores `obj` and the volatile objects it reaches in one backend call; they become proxies."""
        d = obj.__dict__
        if d.get(STATE_KEY) is not None:
            if alias:
                await self.router.lm().new_alias(alias, d[ID_KEY])
            if backend_id is not None:
                await self.move(obj, backend_id, False)
            return
        backend = backend_id or await self._choose_backend()
        await self.router.data_service(backend)
        writer, records = graph_of(obj, backend, recursive)
        await self.router.on_backend(backend, lambda ds: ds.make_persistent(records, alias), idempotent=False)
        become_proxies(writer, backend)

    async def get_by_alias(self, cls: type, alias: str, dataset: str | None):
        """The object with an alias, checked to be an instance of `cls`."""
        try:
            found = await self.router.lm().get_object_by_alias(alias, dataset or "")
        except AliasDoesNotExistError as e:
            raise named_error(e, alias, f"alias {alias!r} does not exist") from None
        return self.runtime.proxy_of(found, cls, f"alias {alias!r}")

    async def get_by_id(self, object_id, cls: type | None = None):
        """The object with an ID (checked to be an instance of `cls` when given)."""
        oid = canonical_id(object_id)
        existing = IDENTITY.get(oid)
        if existing is not None:
            return check_class(existing, cls, f"object {oid}")
        try:
            info = await self.router.object_info(oid)
        except ObjectDoesNotExistError as e:
            raise named_error(e, oid, f"object {oid} does not exist") from None
        return self.runtime.proxy_of(info, cls, f"object {oid}")

    async def add_alias(self, obj, alias: str) -> None:
        """Gives a persistent object one more alias, in its dataset."""
        await self.router.lm().new_alias(alias, obj.__dict__[ID_KEY])

    async def get_aliases(self, obj) -> set:
        """Every alias the object has now (asked to the Logic Module)."""
        return set((await self.router.object_info(obj.__dict__[ID_KEY], refresh=True)).aliases)

    async def delete_alias(self, alias: str, dataset: str | None) -> None:
        """Removes an alias (the object stays); one that does not exist is no error (as in dataClay 4)."""
        try:
            await self.router.lm().delete_alias(alias, dataset or "")
        except AliasDoesNotExistError:
            pass

    async def refresh(self, obj) -> None:
        """Reloads the object's metadata from the Logic Module (see Runtime.refresh)."""
        await self.router.object_info(obj.__dict__[ID_KEY], refresh=True)
        self.runtime.refresh_hint(obj)

    async def get_properties(self, obj) -> dict:
        """The object's persistent fields and their values, read from where it is in one call."""
        if self.runtime.runs_here(obj):
            return self.runtime.get_properties(obj)
        oid = obj.__dict__[ID_KEY]
        found = await self.router.on_object(obj, lambda ds: ds.get_objects([oid]), idempotent=True)
        return local_copies.decode_fields(local_copies.only_object(found, oid), self.runtime.policy)

    async def new_replica(self, obj, backend_id: str | None, recursive: bool) -> Copies:
        """Copies the object (and, if `recursive`, what it references) to `backend_id` (see Runtime.new_replica)."""
        self.runtime.check_client_side("new_replica")
        oid = obj.__dict__[ID_KEY]
        if backend_id is not None:
            await self._registered_backend(backend_id)
        response = await self.router.on_object(obj, lambda ds: ds.new_replica(oid, backend_id or "", recursive),
                                               idempotent=backend_id is not None, replicas=False)
        return self.runtime.replicated(oid, response)

    async def new_version(self, obj, backend_id: str | None) -> Version:
        """A version of the object: a copy with its own ID on `backend_id` (None: the master's backend)."""
        self.runtime.check_client_side("new_version")
        oid = obj.__dict__[ID_KEY]
        if backend_id is not None:
            await self._registered_backend(backend_id)
        response = await self.router.on_object(obj, lambda ds: ds.new_version(oid, backend_id or ""),
                                               idempotent=False, replicas=False)
        return self.runtime.version_made(obj, response)

    async def consolidate_version(self, version) -> None:
        """Gives the versioned (original) object the version's state and retires the version."""
        self.runtime.check_client_side("consolidate_version")
        vid = version.__dict__[ID_KEY]
        original = (await self.router.object_info(vid)).version_of
        await self.router.on_object(version, lambda ds: ds.consolidate_version(vid), idempotent=False,
                                    replicas=False)
        self.router.cache.forget((vid,))
        self.runtime.versions_consolidated(version, original)

    async def move(self, obj, backend_id: str, recursive: bool, remotes: bool = True) -> Copies:
        """Relocates the object's master copy (and, if `recursive`, those of what it references: without
        `remotes`, only those its backend masters) to `backend_id`."""
        self.runtime.check_client_side("move")
        oid = obj.__dict__[ID_KEY]
        await self._registered_backend(backend_id)
        response = await self.router.on_object(obj, lambda ds: ds.move(oid, backend_id, recursive, not remotes),
                                               idempotent=False, replicas=False)
        return self.runtime.moved(oid, response)

    async def get_backends(self) -> dict:
        """Backend ID -> BackendRecord (name, host, port, languages, alive), fresh from the Logic Module."""
        return dict(await self.router.backends(refresh=True))

    def close(self) -> None:
        """Closes this twin's channels (on its event loop while that loop lives)."""
        self.router.close()

    async def _choose_backend(self) -> str:
        live = python_backends(await self.router.backends()) or python_backends(
            await self.router.backends(refresh=True))
        if not live:
            raise BackendUnavailableError("no live backend with a Python execution environment is registered")
        return random.choice(live)

    async def _registered_backend(self, backend_id: str) -> None:
        if backend_id not in await self.router.backends() and backend_id not in await self.router.backends(
                refresh=True):
            raise BackendDoesNotExistError(f"no backend {backend_id} is registered (see Client.get_backends())")
