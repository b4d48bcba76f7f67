"""The asyncio variants of the calls that go to the cluster, with dataClay 4's `a_` names. Each checks
its arguments like its synchronous twin, then awaits the call on the running event loop's own
grpc.aio channels: many of them from one loop are in flight at once, without a thread each. They
need a session in the process (a started dataclay.Client, or dataclay.api.init())."""
from __future__ import annotations

import typing
import uuid

from dataclay.event_loop import dc_to_thread_io
from dataclay._internal.model.checks import (
    alias_text, backend_text, check_recursive, dataset_argument, move_target, optional_alias)
from dataclay._internal.model.metadata import remember_alias
from dataclay._internal.runtime.current import get_runtime


_T = typing.TypeVar("_T", bound="AsyncMethods")  # the class (or object) a call is made on


def _aio():
    return get_runtime().aio()


class AsyncMethods:
    """Mixed into DataClayObject."""

    async def a_make_persistent(self, alias: str | None = None, backend_id: str | uuid.UUID | None = None,
                                recursive: bool = True) -> None:
        """Awaitable make_persistent()."""
        alias = optional_alias(alias, "a_make_persistent")
        check_recursive(recursive)
        backend = backend_text(backend_id)
        await _aio().make_persistent(self, alias, backend, recursive)
        remember_alias(self, alias)

    @classmethod
    async def a_get_by_alias(cls: type[_T], alias: str, dataset_name: str | None = None,
                             dataset: str | None = None) -> _T:
        """Awaitable get_by_alias()."""
        alias = alias_text(alias, "a_get_by_alias")
        return remember_alias(await _aio().get_by_alias(cls, alias, dataset_argument(dataset_name, dataset)), alias)

    @classmethod
    async def a_get_by_id(cls: type[_T], object_id: str | uuid.UUID) -> _T:
        """Awaitable get_by_id()."""
        from dataclay._internal.model.object import DataClayObject
        return await _aio().get_by_id(object_id, None if cls is DataClayObject else cls)

    @classmethod
    async def a_delete_alias(cls, alias: str, dataset_name: str | None = None, dataset: str | None = None) -> None:
        """Awaitable delete_alias()."""
        alias = alias_text(alias, "a_delete_alias")
        await _aio().delete_alias(alias, dataset_argument(dataset_name, dataset))

    async def a_add_alias(self, alias: str) -> None:
        """Awaitable add_alias()."""
        alias = alias_text(alias, "a_add_alias")
        self._persistent_id("a_add_alias")
        await _aio().add_alias(self, alias)
        remember_alias(self, alias)

    async def a_get_aliases(self) -> set[str]:
        """Awaitable get_aliases()."""
        self._persistent_id("a_get_aliases")
        return await _aio().get_aliases(self)

    async def a_get_location_name(self) -> str:
        """Awaitable get_location_name() (it runs in an I/O thread: it needs a call only when nothing is cached)."""
        self._persistent_id("a_get_location_name")
        return await dc_to_thread_io(self.get_location_name)

    async def a_sync(self) -> None:
        """Awaitable sync()."""
        self._persistent_id("a_sync")
        await _aio().refresh(self)

    async def a_get_properties(self) -> dict[str, typing.Any]:
        """Awaitable get_properties()."""
        if not self.is_persistent:
            return self.get_properties()
        return await _aio().get_properties(self)

    async def a_move(self, backend_id: str | uuid.UUID, recursive: bool = False, remotes: bool = True) -> None:
        """Awaitable move()."""
        backend = move_target(backend_id, recursive, remotes, "a_move")
        if not self.is_persistent:
            await self.a_make_persistent(backend_id=backend)
            return
        self._persistent_id("a_move")
        await _aio().move(self, backend, recursive, remotes)

    async def a_new_version(self: _T, backend_id: str | uuid.UUID | None = None) -> _T:
        """Awaitable new_version(); returns the version."""
        self._persistent_id("a_new_version")
        backend = backend_text(backend_id)
        return (await _aio().new_version(self, backend)).obj

    async def a_consolidate_version(self) -> None:
        """Awaitable consolidate_version()."""
        self._persistent_id("a_consolidate_version")
        await _aio().consolidate_version(self)

    async def a_new_replica(self, backend_id: str | uuid.UUID | None = None, recursive: bool = True) -> str:
        """Awaitable new_replica(); returns the ID of the backend the copy went to."""
        self._persistent_id("a_new_replica")
        check_recursive(recursive)
        backend = backend_text(backend_id)
        return (await _aio().new_replica(self, backend, recursive)).backend_id
