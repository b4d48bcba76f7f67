"""Runtime: the operations persistent objects delegate to, shared by the client runtime and the
execution environment's (which first tries to run things in memory)."""
from __future__ import annotations

import uuid
from typing import NamedTuple

from dataclay.exceptions import (
    AliasDoesNotExistError, BackendDoesNotExistError, BackendUnavailableError, ClassNotRegisteredError,
    InvalidArgumentError, ObjectDoesNotExistError, RemoteError)
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.states import HINT_KEY, ID_KEY, PROXY, STATE_KEY
from dataclay._internal.rpc.convert import object_info_record
from dataclay._internal.runtime.router import BackendRouter
from dataclay._internal.serialization import exceptions as remote_exceptions
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps, dumps_args
from dataclay._internal.serialization.graph import GraphWriter

PLACED_KEY = "_dc_placed"
"""__dict__ key of the backend this runtime itself stored or moved the object to. Unlike the hint
(which references carry from wherever they were written, and which failover points at a replica)
it names the master, and goes stale only if another client moves the object."""


class Copies(NamedTuple):
    """What a replica or a move did: the objects copied, the backend they went to, the bytes sent."""

    object_ids: tuple
    backend_id: str
    bytes_sent: int


class Version(NamedTuple):
    """A new version (a proxy of the same class, with its own ID) and the bytes sent to make it."""

    obj: object
    bytes_sent: int


class Runtime:
    """Reaches persistent objects through `router`; decodes what backends send under `policy`."""

    def __init__(self, router: BackendRouter, policy):
        self.router = router
        self.policy = policy

    # ---- what proxies call ----------------------------------------------------------------------

    def get_field(self, obj, name: str):
        """The value of a persistent field, read in the object's backend."""
        oid = obj.__dict__[ID_KEY]
        data = self.router.on_object(obj, lambda ds: ds.get_field(oid, name), idempotent=True)
        return loads(data, self.policy, f"field {type(obj).__name__}.{name}")

    def set_field(self, obj, name: str, value) -> None:
        """Assigns a persistent field in the object's backend (volatile dataClay objects go by value)."""
        oid = obj.__dict__[ID_KEY]
        data = dumps(value, what=(type(obj).__name__, name))[0]
        self.router.on_object(obj, lambda ds: ds.set_field(oid, name, data), idempotent=True)

    def call_method(self, obj, name: str, args: tuple, kwargs: dict):
        """Runs an active method in the object's backend and returns its result."""
        oid = obj.__dict__[ID_KEY]
        payload = dumps_args(args, kwargs)
        try:
            data = self.router.on_object(obj, lambda ds: ds.call_method(oid, name, payload), idempotent=False)
        except RemoteError as e:
            raise remote_exceptions.rebuild(e, self.policy) from None
        return loads(data, self.policy, f"result of {type(obj).__name__}.{name}")

    # ---- persistence ----------------------------------------------------------------------------

    def make_persistent(self, obj, alias: str | None, backend_id: str | None, recursive: bool) -> None:
        """Stores `obj` and the volatile objects it reaches in one backend call; they become proxies."""
        d = obj.__dict__
        if d.get(STATE_KEY) is not None:
            if alias:
                self.router.lm().new_alias(alias, d[ID_KEY])
            return
        backend = backend_id or self.router.choose_backend()
        self.router.data_service(backend)
        writer = GraphWriter(backend, recursive)
        writer.add_root(obj)
        records = writer.drain()
        self.router.on_backend(backend, lambda ds: ds.make_persistent(records, alias), idempotent=False)
        for made, oid in writer.assigned.values():
            become_proxy(made, oid, backend)

    def get_by_alias(self, cls: type, alias: str, dataset: str | None):
        """The object with an alias, checked to be an instance of `cls`."""
        try:
            found = self.router.lm().get_object_by_alias(alias, dataset or "")
        except AliasDoesNotExistError as e:
            raise _naming(e, alias, f"alias {alias!r} does not exist") from None
        info = self._python_object(object_info_record(found))
        target = self._class_of(info)
        if not issubclass(target, cls):
            raise InvalidArgumentError(f"alias {alias!r} names a {info.class_name}, which is not a "
                                       f"{cls.__module__}.{cls.__qualname__}")
        return IDENTITY.proxy(target, info.id, info.master_backend_id)

    def delete_alias(self, alias: str, dataset: str | None) -> None:
        """Removes an alias (the object stays)."""
        self.router.lm().delete_alias(alias, dataset or "")

    def get_by_id(self, object_id) -> object:
        """The object with an ID; its class must be importable here."""
        oid = canonical_id(object_id)
        existing = IDENTITY.get(oid)
        if existing is not None:
            return existing
        try:
            info = self._python_object(self.router.object_info(oid))
        except ObjectDoesNotExistError as e:
            raise _naming(e, oid, f"object {oid} does not exist") from None
        return IDENTITY.proxy(self._class_of(info), oid, info.master_backend_id)

    def delete_persistent(self, obj) -> None:
        """Removes every alias of the object (the object stays until garbage collection finds it unreachable)."""
        oid = obj.__dict__[ID_KEY]
        info = self.router.object_info(oid, refresh=True)
        lm = self.router.lm()
        for alias in info.aliases:
            try:
                lm.delete_alias(alias, info.dataset)
            except AliasDoesNotExistError:
                pass  # removed meanwhile by someone else: the outcome wanted

    # ---- copies: replicas, versions, moves --------------------------------------------------------

    def new_replica(self, obj, backend_id: str | None, recursive: bool) -> Copies:
        """Copies the object (and, if `recursive`, what it references) to `backend_id` (None: the master's
        backend picks one that has no copy yet); the master keeps every copy up to date."""
        oid = obj.__dict__[ID_KEY]
        if backend_id is not None:
            self._registered_backend(backend_id)
        # Repeating a replica to a named backend is a no-op on the server, so only then is it safe to resend.
        response = self.router.on_object(obj, lambda ds: ds.new_replica(oid, backend_id or "", recursive),
                                         idempotent=backend_id is not None, replicas=False)
        self.router.forget((oid, *response.object_ids))
        return Copies(tuple(response.object_ids), response.backend_id, response.bytes_sent)

    def new_version(self, obj, backend_id: str | None) -> Version:
        """A version of the object: a copy with its own ID on `backend_id` (None: the master's backend)."""
        oid = obj.__dict__[ID_KEY]
        if backend_id is not None:
            self._registered_backend(backend_id)
        response = self.router.on_object(obj, lambda ds: ds.new_version(oid, backend_id or ""), idempotent=False,
                                         replicas=False)
        info = self._python_object(object_info_record(response.version))
        return Version(IDENTITY.proxy(type(obj), info.id, info.master_backend_id), response.bytes_sent)

    def consolidate_version(self, version) -> None:
        """Gives the versioned (original) object the version's state and retires the version."""
        vid = version.__dict__[ID_KEY]
        self.router.on_object(version, lambda ds: ds.consolidate_version(vid), idempotent=False, replicas=False)
        self.router.forget((vid,))

    def move(self, obj, backend_id: str, recursive: bool) -> Copies:
        """Relocates the object's master copy (and, if `recursive`, those of what it references) to `backend_id`."""
        oid = obj.__dict__[ID_KEY]
        self._registered_backend(backend_id)
        response = self.router.on_object(obj, lambda ds: ds.move(oid, backend_id, recursive), idempotent=False,
                                         replicas=False)
        self.router.forget((oid, *response.object_ids))
        for moved_id in response.object_ids:
            moved = IDENTITY.get(moved_id)
            if moved is not None:
                moved.__dict__[HINT_KEY] = moved.__dict__[PLACED_KEY] = response.backend_id
        return Copies(tuple(response.object_ids), response.backend_id, response.bytes_sent)

    # ---- locations and backends -----------------------------------------------------------------

    def get_location(self, obj) -> str:
        """The backend ID of the object's master copy (from the cached metadata, else where this runtime
        stored or moved it, else the Logic Module); while this runtime cannot reach that backend, the
        first copy it has not failed to reach (the Logic Module is asked again only then)."""
        d = obj.__dict__
        info = self.router.cached_info(d[ID_KEY])
        if info is not None and info.master_backend_id:
            master = info.master_backend_id
        else:
            master = d.get(PLACED_KEY) or self.router.object_info(d[ID_KEY]).master_backend_id
        if not self.router.unreachable(master):
            return master
        try:
            info = self.router.object_info(d[ID_KEY], refresh=True)
        except BackendUnavailableError:
            return master  # the Logic Module is down too: the master is all we know
        reachable = [b for b in (info.master_backend_id, *info.replica_backend_ids) if not self.router.unreachable(b)]
        return reachable[0] if reachable else info.master_backend_id

    def get_all_locations(self, obj) -> list:
        """Every backend ID holding a copy, master first (asked to the Logic Module)."""
        info = self.router.object_info(obj.__dict__[ID_KEY], refresh=True)
        return [info.master_backend_id] + [b for b in info.replica_backend_ids if b != info.master_backend_id]

    def get_backends(self) -> dict:
        """Backend ID -> BackendRecord (name, host, port, languages, alive), fresh from the Logic Module."""
        return dict(self.router.backends(refresh=True))

    def _registered_backend(self, backend_id: str) -> None:
        """Raises BackendDoesNotExistError unless `backend_id` is registered (cached list, then asked again)."""
        if backend_id not in self.router.backends() and backend_id not in self.router.backends(refresh=True):
            raise BackendDoesNotExistError(f"no backend {backend_id} is registered (see api.get_backends())")

    def _python_object(self, info):
        self.router.remember(info)
        if info.language != "python":
            raise InvalidArgumentError(f"object {info.id} is a {info.language} object, not a Python one")
        return info

    def _class_of(self, info) -> type:
        try:
            return self.policy.dataclay_class(info.class_name)
        except ClassNotRegisteredError as e:
            raise ClassNotRegisteredError(
                f"object {info.id} is a {info.class_name}, which cannot be loaded here ({e}); put its model "
                f"on the PYTHONPATH (dataclaycmd GetStubs)") from None


def _naming(error, name: str, prefix: str):
    """`error` itself if its message names `name`, else the same error class with a message that does."""
    return error if name in str(error) else type(error)(f"{prefix}: {error}")


def become_proxy(obj, oid: str, backend_id: str) -> None:
    """Turns a just-stored volatile object into the PROXY of `oid` (its field values now live remotely)."""
    d = obj.__dict__
    for name in type(obj)._dc_fields:
        d.pop(name, None)
    d[ID_KEY] = oid
    d[HINT_KEY] = d[PLACED_KEY] = backend_id
    d[STATE_KEY] = PROXY
    IDENTITY.adopt(obj, oid)


def canonical_id(object_id) -> str:
    """The canonical text of an object ID given as UUID or text; InvalidArgumentError otherwise."""
    try:
        return str(object_id if isinstance(object_id, uuid.UUID) else uuid.UUID(str(object_id)))
    except ValueError:
        raise InvalidArgumentError(f"object_id must be a UUID, not {object_id!r}") from None
