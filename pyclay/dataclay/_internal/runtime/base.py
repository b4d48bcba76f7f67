"""Runtime: the operations persistent objects delegate to, shared by the client runtime and the
execution environment's (which first tries to run things in memory)."""
from __future__ import annotations

import asyncio
import random
import threading
import uuid
from typing import NamedTuple

from dataclay.exceptions import (
    AliasDoesNotExistError, BackendDoesNotExistError, BackendUnavailableError, ClassNotRegisteredError,
    InvalidArgumentError, FieldNotSetError, ObjectDoesNotExistError, RemoteError)
from dataclay._internal.runtime import local_copies
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.states import HINT_KEY, ID_KEY, PENDING_KEY, PROXY, STATE_KEY, VERSIONS_KEY
from dataclay._internal.records import Copies, ObjectInfoRecord, VersionRecord
from dataclay._internal.runtime.router import BackendRouter, UnregisteredBackendError
from dataclay._internal.serialization import exceptions as remote_exceptions
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps, dumps_args, persistent_pid
from dataclay._internal.serialization.graph import GraphWriter

PLACED_KEY = "_dc_placed"
"""__dict__ key of the backend this runtime itself stored or moved the object to. Unlike the hint
(which references carry from wherever they were written, and which failover points at a replica)
it names the master, and goes stale only if another client moves the object."""


class Version(NamedTuple):
    """A new version (a proxy of the same class, with its own ID) and the bytes sent to make it."""

    obj: object
    bytes_sent: int


class Runtime:
    """Reaches persistent objects through `router`; decodes what backends send under `policy`."""

    def __init__(self, router: BackendRouter, policy):
        self.router = router
        self.policy = policy
        self._aio: dict = {}
        self._aio_lock = threading.Lock()

    # ---- asyncio -----------------------------------------------------------------------------------

    def aio(self):
        """This runtime's asyncio twin for the running event loop (made on first use in each loop): its calls
        are awaited on that loop's own channels, many at once, without a thread each."""
        loop = asyncio.get_running_loop()
        twin = self._aio.get(loop)
        if twin is None:
            from dataclay._internal.runtime.aio_runtime import AsyncRuntime
            with self._aio_lock:
                for ended in [known for known in self._aio if known.is_closed()]:
                    self._aio.pop(ended).close()
                twin = self._aio.get(loop)
                if twin is None:
                    twin = self._aio[loop] = AsyncRuntime(self)
        return twin

    def close_aio(self) -> None:
        """Closes the channels of every asyncio twin (on their event loops, those still alive)."""
        with self._aio_lock:
            twins, self._aio = list(self._aio.values()), {}
        for twin in twins:
            twin.close()

    def runs_here(self, obj) -> bool:
        """Whether a call on `obj` runs in this process (an execution environment's own objects)."""
        return False

    def check_client_side(self, operation: str) -> None:
        """Raises when `operation` cannot be made from here (execution environments refuse some)."""

    # ---- what proxies call ----------------------------------------------------------------------

    def get_field(self, obj, name: str):
        """The value of a persistent field, read in the object's backend."""
        oid = obj.__dict__[ID_KEY]
        try:
            data = self.router.on_object(obj, lambda ds: ds.get_field(oid, name), idempotent=True)
        except RemoteError as e:
            if e.remote_type != "builtins.AttributeError":
                raise
            raise FieldNotSetError(e.remote_type, e.remote_message, e.remote_args, e.remote_traceback) from None
        return loads(data, self.policy, f"field {type(obj).__name__}.{name}")

    def set_field(self, obj, name: str, value) -> None:
        """Assigns a persistent field in the object's backend (volatile dataClay objects go by value)."""
        oid = obj.__dict__[ID_KEY]
        data = dumps(value, what=(type(obj).__name__, name))[0]
        self.router.on_object(obj, lambda ds: ds.set_field(oid, name, data), idempotent=True)

    # Whether volatile dataClay objects passed to an active method are made persistent first (clients, as in
    # dataClay 4); an execution environment passes them by value, and stores those the call keeps.
    persists_arguments = True
    # Whether this process's model calls show obj.is_persistent as True or False (a dataClay 4 Client's
    # process, and model code called by one), or as the callable flag of dataClay 2
    plain_flags = False

    def call_method(self, obj, name: str, args: tuple, kwargs: dict):
        """Runs an active method in the object's backend and returns its result. Volatile dataClay objects
        among the arguments are first made persistent where the object is, so that the caller's objects are
        the ones the method stores (as in dataClay 4)."""
        oid = obj.__dict__[ID_KEY]
        payload, volatile = arguments(args, kwargs, self.persists_arguments, self.plain_flags)
        if volatile:
            for found in volatile:
                if found.__dict__.get(STATE_KEY) is None:
                    self.make_persistent(found, None, obj.__dict__.get(HINT_KEY) or None, True)
            payload = dumps_args(args, kwargs, plain_flags=self.plain_flags)
        try:
            data = self.router.on_object(obj, lambda ds: ds.call_method(oid, name, payload), idempotent=False)
        except RemoteError as e:
            raise remote_exceptions.rebuild(e, self.policy) from None
        return loads(data, self.policy, f"result of {type(obj).__name__}.{name}")

    # ---- persistence ----------------------------------------------------------------------------

    def make_persistent(self, obj, alias: str | None, backend_id: str | None, recursive: bool) -> None:
        """Stores `obj` and the volatile objects it reaches in one backend call; they become proxies. An
        object already persistent gets the alias and, as in dataClay 4, moves to `backend_id` if given."""
        d = obj.__dict__
        if d.get(STATE_KEY) is not None:
            if alias:
                self.router.lm().new_alias(alias, d[ID_KEY])
            if backend_id is not None:
                self.move(obj, backend_id, False)
            return
        backend = backend_id or self.router.choose_backend()
        self.router.data_service(backend)
        writer, records = graph_of(obj, backend, recursive)
        self.router.on_backend(backend, lambda ds: ds.make_persistent(records, alias), idempotent=False)
        become_proxies(writer, backend)

    def get_by_alias(self, cls: type, alias: str, dataset: str | None):
        """The object with an alias, checked to be an instance of `cls`."""
        try:
            found = self.router.lm().get_object_by_alias(alias, dataset or "")
        except AliasDoesNotExistError as e:
            raise named_error(e, alias, f"alias {alias!r} does not exist") from None
        return self.proxy_of(found, cls, f"alias {alias!r}")

    def delete_alias(self, alias: str, dataset: str | None) -> None:
        """Removes an alias (the object stays); one that does not exist is no error (as in dataClay 4)."""
        try:
            self.router.lm().delete_alias(alias, dataset or "")
        except AliasDoesNotExistError:
            pass

    def get_by_id(self, object_id, cls: type | None = None) -> object:
        """The object with an ID (checked to be an instance of `cls` when given); its class must be importable here."""
        oid = canonical_id(object_id)
        existing = IDENTITY.get(oid)
        if existing is not None:
            return check_class(existing, cls, f"object {oid}")
        try:
            info = self.router.object_info(oid)
        except ObjectDoesNotExistError as e:
            raise named_error(e, oid, f"object {oid} does not exist") from None
        return self.proxy_of(info, cls, f"object {oid}")

    def add_alias(self, obj, alias: str) -> None:
        """Gives a persistent object one more alias, in its dataset."""
        self.router.lm().new_alias(alias, obj.__dict__[ID_KEY])

    def get_aliases(self, obj) -> set:
        """Every alias the object has now (asked to the Logic Module)."""
        return set(self.router.object_info(obj.__dict__[ID_KEY], refresh=True).aliases)

    def refresh(self, obj) -> None:
        """Reloads the object's metadata (locations, aliases) from the Logic Module; its next call goes to a
        backend that holds it."""
        self.router.object_info(obj.__dict__[ID_KEY], refresh=True)
        self.refresh_hint(obj)

    def refresh_hint(self, obj) -> None:
        """Points the object's calls at its master when the backend they went to holds no copy any more
        (according to the metadata just reloaded)."""
        d = obj.__dict__
        info = self.router.cached_info(d[ID_KEY])
        if info is not None and d.get(HINT_KEY) not in (info.master_backend_id, *info.replica_backend_ids):
            d[HINT_KEY] = info.master_backend_id

    # ---- whole state: properties, copies, updates -------------------------------------------------

    def get_properties(self, obj) -> dict:
        """The object's persistent fields and their values, read from its backend in one call."""
        return local_copies.decode_fields(self._stored_form(obj), self.policy)

    def clone(self, obj, recursive: bool):
        """A volatile copy of a persistent object (and, if `recursive`, of every persistent object it reaches)."""
        return local_copies.clone(obj, recursive, self._stored_form, self.policy)

    def replace_fields(self, obj, values: dict) -> None:
        """Assigns several fields of a persistent object in one atomic update: they are set on a new version,
        which is then consolidated (every copy gets all of them, or none). A failure before the consolidation
        leaves the original untouched and the version to garbage collection."""
        version = self.new_version(obj, None).obj
        for name, value in values.items():
            self.set_field(version, name, value)
        self.consolidate_version(version)

    def _stored_form(self, obj):
        oid = obj.__dict__[ID_KEY]
        found = self.router.on_object(obj, lambda ds: ds.get_objects([oid]), idempotent=True)
        return local_copies.only_object(found, oid)

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
        return self.replicated(oid, response)

    def replicated(self, oid: str, done: Copies) -> Copies:
        """Records what a replica of `oid` did: the copied objects' metadata is stale, and where they were
        placed is no longer their only copy (get_location() must choose among all of them)."""
        self.router.forget((oid, *done.object_ids))
        for copied_id in (oid, *done.object_ids):
            copied = IDENTITY.get(copied_id)
            if copied is not None:
                copied.__dict__.pop(PLACED_KEY, None)
        return done

    def new_version(self, obj, backend_id: str | None) -> Version:
        """A version of the object: a copy with its own ID on `backend_id` (None: the master's backend)."""
        oid = obj.__dict__[ID_KEY]
        if backend_id is not None:
            self._registered_backend(backend_id)
        response = self.router.on_object(obj, lambda ds: ds.new_version(oid, backend_id or ""), idempotent=False,
                                         replicas=False)
        return self.version_made(obj, response)

    def version_made(self, obj, made_version: VersionRecord) -> Version:
        """The Version that `made_version` of `obj` stands for (its metadata is cached); it remembers the
        versions it was made through (when `obj` is itself a version), which follow it when it is consolidated."""
        info = self._python_object(made_version.version)
        made = IDENTITY.proxy(type(obj), info.id, info.master_backend_id)
        source = obj.__dict__
        through = source.get(VERSIONS_KEY, ()) + ((source[ID_KEY],) if source[ID_KEY] != info.version_of else ())
        made.__dict__[VERSIONS_KEY] = through
        return Version(made, made_version.bytes_sent)

    def consolidate_version(self, version) -> None:
        """Gives the versioned (original) object the version's state and retires the version."""
        vid = version.__dict__[ID_KEY]
        original = self.version_of(version)
        self.router.on_object(version, lambda ds: ds.consolidate_version(vid), idempotent=False, replicas=False)
        self.router.forget((vid,))
        self.versions_consolidated(version, original)

    def version_of(self, version) -> str:
        """The ID of the object `version` is a version of ("" if the Logic Module says it is none)."""
        return self.router.object_info(version.__dict__[ID_KEY]).version_of

    def versions_consolidated(self, version, original: str) -> None:
        """As in dataClay 4, the consolidated version, and the versions it was made through (when this program
        made it), take the original's identity here: they stay usable and stand for the original from now on.
        Those versions also get the original's new state where they are stored, so that stored references to
        them read it too (until they are collected)."""
        if not original:
            return
        through = version.__dict__.get(VERSIONS_KEY, ())
        # the consolidated version's ID is retired everywhere: a lookup of it fails, as from any other program
        IDENTITY.forget(version.__dict__[ID_KEY], version)
        if through:
            state = self.get_properties(IDENTITY.proxy(type(version), original, ""))
            for intermediate in through:
                stale = IDENTITY.proxy(type(version), intermediate, "")
                if stale.__dict__.get(ID_KEY) == intermediate:
                    for name, value in state.items():
                        self.set_field(stale, name, value)
        for held in (version, *filter(None, map(IDENTITY.get, through))):
            d = held.__dict__
            d[ID_KEY] = original
            d[HINT_KEY] = ""
            d.pop(VERSIONS_KEY, None)

    def move(self, obj, backend_id: str, recursive: bool, remotes: bool = True) -> Copies:
        """Relocates the object's master copy (and, if `recursive`, those of what it references: without
        `remotes`, only those its backend masters) to `backend_id`."""
        oid = obj.__dict__[ID_KEY]
        self._registered_backend(backend_id)
        response = self.router.on_object(obj, lambda ds: ds.move(oid, backend_id, recursive, not remotes),
                                         idempotent=False, replicas=False)
        return self.moved(oid, response)

    def moved(self, oid: str, done: Copies) -> Copies:
        """Records what a move of `oid` did: the moved objects' metadata is stale, their master is the target."""
        self.router.forget((oid, *done.object_ids))
        for moved_id in done.object_ids:
            moved = IDENTITY.get(moved_id)
            if moved is not None:
                moved.__dict__[HINT_KEY] = moved.__dict__[PLACED_KEY] = done.backend_id
        return done

    # ---- locations and backends -----------------------------------------------------------------

    def get_location(self, obj) -> str:
        """One of the backends holding a copy of the object, at random among those alive and reachable (the
        white paper's definition), from the cached metadata; when no copy is, the metadata is asked again,
        and the master is the answer if still none is."""
        d = obj.__dict__
        oid = d[ID_KEY]
        info = self.router.cached_info(oid)
        if info is None and d.get(PLACED_KEY):
            # stored or moved here by this runtime and not looked up since: no Logic Module call for that
            if live_location(_single_copy(oid, d[PLACED_KEY]), self.router.backends(), self.router.unreachable):
                return d[PLACED_KEY]
        info = info or self.router.object_info(oid)
        chosen = live_location(info, self.router.backends(), self.router.unreachable)
        if chosen is not None:
            return chosen
        try:
            info = self.router.object_info(oid, refresh=True)
            chosen = live_location(info, self.router.backends(refresh=True), self.router.unreachable)
        except BackendUnavailableError:
            pass  # the Logic Module is down too: the master is all we know
        return chosen or info.master_backend_id

    def object_metadata(self, obj):
        """The object's ObjectInfoRecord, fresh from the Logic Module."""
        return self.router.object_info(obj.__dict__[ID_KEY], refresh=True)

    def get_all_locations(self, obj) -> list:
        """Every backend ID holding a copy, master first (asked to the Logic Module)."""
        info = self.router.object_info(obj.__dict__[ID_KEY], refresh=True)
        return [info.master_backend_id] + [b for b in info.replica_backend_ids if b != info.master_backend_id]

    def backend_name(self, backend_id: str) -> str:
        """A backend's name (as `dataclay status` shows it), from the cached backend list: the Logic Module is
        asked only for a backend that list does not hold yet."""
        record = self.router.backends().get(backend_id) or self.router.backends(refresh=True).get(backend_id)
        if record is None:
            raise UnregisteredBackendError(f"no backend {backend_id} is registered (see api.get_backends())")
        return record.name

    def get_backends(self) -> dict:
        """Backend ID -> BackendRecord (name, host, port, languages, alive), fresh from the Logic Module."""
        return dict(self.router.backends(refresh=True))

    def _registered_backend(self, backend_id: str) -> None:
        """Raises UnregisteredBackendError (a BackendDoesNotExistError and a KeyError) unless `backend_id`
        is registered (cached list, then asked again)."""
        if backend_id not in self.router.backends() and backend_id not in self.router.backends(refresh=True):
            raise UnregisteredBackendError(f"no backend {backend_id} is registered (see api.get_backends())")

    def proxy_of(self, info: ObjectInfoRecord, cls: type | None, what: str):
        """The proxy of the object `info` describes, checked to be a Python object of a class loadable here
        and an instance of `cls` (when given); its metadata is cached."""
        info = self._python_object(info)
        if getattr(cls, "_dc_stub", False):  # StubDataClayObject["module.Class"]: stands for that class by name
            if info.class_name != cls._dc_class_name:
                raise InvalidArgumentError(f"{what} names a {info.class_name}, which is not a {cls._dc_class_name}")
            return IDENTITY.proxy(cls, info.id, info.master_backend_id)
        target = self._class_of(info)
        if cls is not None and not issubclass(target, cls):
            raise InvalidArgumentError(f"{what} names a {info.class_name}, which is not a "
                                       f"{cls.__module__}.{cls.__qualname__}")
        return IDENTITY.proxy(target, info.id, info.master_backend_id)

    def _python_object(self, info):
        self.router.remember(info)
        if info.language != "python":
            raise InvalidArgumentError(f"object {info.id} is a {info.language} object, not a Python one")
        return info

    def _class_of(self, info) -> type:
        try:
            return self.policy.dataclay_class(info.class_name)
        except ClassNotRegisteredError as e:
            # the class name is what whoever stored the object wrote: the policy decides on it by name,
            # before importing anything
            raise ClassNotRegisteredError(f"object {info.id} is a {info.class_name}: {e}") from None


def live_location(info, backends: dict, unreachable) -> str | None:
    """A random copy of the object `info` describes whose backend is registered alive and not `unreachable`
    to this runtime; None when there is none."""
    copies = dict.fromkeys(b for b in (info.master_backend_id, *info.replica_backend_ids) if b)
    live = [b for b in copies if backends.get(b) is not None and backends[b].alive and not unreachable(b)]
    return random.choice(live) if live else None


def _single_copy(oid: str, backend_id: str) -> ObjectInfoRecord:
    return ObjectInfoRecord(oid, "", "python", "", backend_id, (), ())


def check_class(obj, cls: type | None, what: str):
    """`obj` if it is an instance of `cls` (or `cls` is None, or `obj` is a StubDataClayObject standing for
    `cls` by name); InvalidArgumentError naming `what` otherwise."""
    if cls is not None and not isinstance(obj, cls) and not (
            getattr(obj, "_dc_stub", False) and obj._dc_class_name == cls._dc_class_name):
        raise InvalidArgumentError(f"{what} is a {type(obj)._dc_class_name}, which is not a "
                                   f"{cls.__module__}.{cls.__qualname__}")
    return obj


def graph_of(obj, backend: str, recursive: bool) -> tuple:
    """(the GraphWriter that named them, the records) of `obj` and the volatile objects it reaches, bound for `backend`."""
    writer = GraphWriter(backend, recursive)
    writer.add_root(obj)
    return writer, writer.drain()


def become_proxies(writer: GraphWriter, backend_id: str) -> None:
    """Turns every object `writer` named, now stored on `backend_id`, into its proxy."""
    for made, oid in writer.assigned.values():
        become_proxy(made, oid, backend_id)


def named_error(error, name: str, prefix: str):
    """`error` itself if its message names `name`, else the same error class with a message that does."""
    return error if name in str(error) else type(error)(f"{prefix}: {error}")


def become_proxy(obj, oid: str, backend_id: str) -> None:
    """Turns a just-stored volatile object into the PROXY of `oid` (its field values now live remotely)."""
    d = obj.__dict__
    for name in type(obj)._dc_fields:
        d.pop(name, None)
    d.pop(PENDING_KEY, None)
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


def arguments(args: tuple, kwargs: dict, find_volatile: bool, plain_flags: bool = False) -> tuple:
    """(the encoded arguments, the volatile dataClay objects among them if `find_volatile` and any, which went
    by value); found while pickling, so arguments without dataClay objects cost nothing more."""
    if not find_volatile:
        return dumps_args(args, kwargs, plain_flags=plain_flags), ()
    volatile = []

    def namer(obj):
        pid = persistent_pid(obj)
        if pid is None:
            volatile.append(obj)
        return pid

    return dumps_args(args, kwargs, namer, plain_flags), volatile
