"""DataClayObject: the base of every class whose instances can be made persistent.

Persistent fields are the annotated attributes (collected over the MRO); other attributes are
ordinary process-local ones. See states.py for the volatile / PROXY / RESIDENT states."""
from __future__ import annotations

import typing
import uuid

from dataclay.exceptions import ObjectNotPersistentError, SerializationError
from dataclay._internal.model import metadata, registry, state
from dataclay._internal.model.active import is_active
from dataclay._internal.model.async_methods import AsyncMethods
from dataclay._internal.model.checks import (
    alias_text, backend_text, check_recursive, dataset_argument, move_target, optional_alias)
from dataclay._internal.model.fields import MISSING, PersistentField
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.object_store import ObjectStoreMethods
from dataclay._internal.model.persistence_flag import PERSISTENT, VOLATILE, PersistenceFlag
from dataclay._internal.model.states import CREATION, HINT_KEY, ID_KEY, PENDING_KEY, STATE_KEY
from dataclay._internal.runtime.current import get_runtime, peek_runtime

_RESERVED_PREFIX = "_dc_"
_T = typing.TypeVar("_T", bound="DataClayObject")  # the class a class method is called on


class DataClayObject(ObjectStoreMethods, AsyncMethods):
    """An object that can live in a dataClay backend: make_persistent() stores it (and what it references)."""

    _dc_fields: tuple = ()
    _dc_field_set: frozenset = frozenset()
    _dc_active_methods: frozenset = frozenset()
    _dc_class_name: str = "dataclay.DataClayObject"
    _dc_custom_getstate: bool = False
    _dc_custom_setstate: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fields: list[str] = []
        for klass in reversed(cls.__mro__):
            for name, annotation in klass.__dict__.get("__annotations__", {}).items():
                if name.startswith(_RESERVED_PREFIX) or _is_class_var(annotation) or name in fields:
                    continue
                fields.append(name)
        for name in fields:
            own = cls.__dict__.get(name, MISSING)
            if not isinstance(own, PersistentField) and (own is not MISSING or name in _own_annotations(cls)):
                setattr(cls, name, PersistentField(name, own))
        cls._dc_fields = tuple(fields)
        cls._dc_field_set = frozenset(fields)
        candidates = {name for klass in cls.__mro__ for name, value in vars(klass).items() if is_active(value)}
        cls._dc_active_methods = frozenset(n for n in candidates if is_active(getattr(cls, n, None)))
        cls._dc_class_name = registry.class_name_of(cls)
        cls._dc_custom_getstate = state.custom_getstate(cls)
        cls._dc_custom_setstate = state.custom_setstate(cls)
        registry.register(cls)

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        CREATION.call(obj)
        return obj

    # ---- persistence and aliases ---------------------------------------------------------------------

    def make_persistent(self, alias: str | None = None, backend_id: str | uuid.UUID | None = None,
                        recursive: bool = True) -> None:
        """Stores this object and every volatile dataClay object it reaches (one call to one backend).

        Afterwards they are proxies: field accesses and active methods go to the backend. On an object
        that is already persistent, only gives it `alias`."""
        alias = optional_alias(alias, "make_persistent")
        check_recursive(recursive)
        backend = backend_text(backend_id)
        get_runtime().make_persistent(self, alias, backend, recursive)
        metadata.remember_alias(self, alias)

    def makePersistent(self, alias: str | None = None) -> None:
        """COMPSs spelling of make_persistent(alias)."""
        self.make_persistent(alias)

    @classmethod
    def get_by_alias(cls: type[_T], alias: str, dataset_name: str | None = None, dataset: str | None = None) -> _T:
        """The object with `alias` in `dataset_name` (or `dataset`; default: the session's dataset); it must be
        an instance of this class."""
        alias = alias_text(alias, "get_by_alias")
        found = get_runtime().get_by_alias(cls, alias, dataset_argument(dataset_name, dataset))
        return metadata.remember_alias(found, alias)

    @classmethod
    def get_by_id(cls: type[_T], object_id: str | uuid.UUID) -> _T:
        """The object with this ID (UUID or its text); called on a model class, it must be an instance of it."""
        return get_runtime().get_by_id(object_id, None if cls is DataClayObject else cls)

    @classmethod
    def delete_alias(cls, alias: str, dataset_name: str | None = None, dataset: str | None = None) -> None:
        """Removes `alias` from `dataset_name` (or `dataset`; default: the session's dataset); the object stays,
        and garbage collection removes it once nothing else reaches it. An alias that does not exist is no
        error, as in dataClay 4."""
        alias = alias_text(alias, "delete_alias")
        get_runtime().delete_alias(alias, dataset_argument(dataset_name, dataset))

    def add_alias(self, alias: str) -> None:
        """Gives this persistent object one more alias, in its dataset; AliasAlreadyExistsError if it is taken."""
        alias = alias_text(alias, "add_alias")
        self._persistent_id("add_alias")
        get_runtime().add_alias(self, alias)
        metadata.remember_alias(self, alias)

    def get_aliases(self) -> set[str]:
        """Every alias this persistent object has now."""
        self._persistent_id("get_aliases")
        return get_runtime().get_aliases(self)

    def __repr__(self) -> str:
        return metadata.describe(self)

    # ---- identity and location ------------------------------------------------------------------

    def get_id(self) -> uuid.UUID | None:
        """The object's ID, or None while it is volatile."""
        oid = self.getID()
        return uuid.UUID(oid) if oid else None

    def getID(self) -> str | None:
        """The object's ID as text, or None while it is volatile (COMPSs spelling)."""
        d = self.__dict__
        return d.get(ID_KEY) or d.get(PENDING_KEY)

    @property
    def is_persistent(self) -> PersistenceFlag | bool:
        """Whether the object lives in a backend. In a process whose session a dataClay 4 `Client` opened, True or
        False, as dataClay 4 gives it (`obj.is_persistent is True`); otherwise (`api.init()`, COMPSs, no session,
        model code in a backend) a flag that is truthy and also callable, `obj.is_persistent()`, as dataClay 2
        programs call it."""
        persistent = self._dc_is_registered
        if getattr(peek_runtime(), "plain_flags", False):
            return persistent
        return PERSISTENT if persistent else VOLATILE

    @property
    def _dc_is_registered(self) -> bool:
        """Whether the object is persistent (dataClay 4's name); in a backend, objects model code makes are."""
        d = self.__dict__
        return d.get(STATE_KEY) is not None or PENDING_KEY in d

    @property
    def _dc_meta(self) -> metadata.ObjectMeta:
        """The object's metadata under dataClay 4's names (ID, class, dataset, master and replica backends,
        aliases), fresh from the Logic Module; read-only."""
        d = self.__dict__
        if d.get(STATE_KEY) is None:
            if PENDING_KEY in d:
                return metadata.made_here(d[PENDING_KEY], type(self)._dc_class_name, get_runtime().backend_id)
            return metadata.volatile(registry.class_name_of(type(self)))
        return metadata.of_record(get_runtime().object_metadata(self), self)

    @property
    def backends(self) -> set[str]:
        """The IDs of every backend holding a copy (dataClay 4's `obj.backends`); empty while volatile."""
        if self.__dict__.get(STATE_KEY) is None:
            return set()
        return set(get_runtime().get_all_locations(self))

    def get_location(self) -> str:
        """The ID of one of the backends holding a copy, chosen at random among those alive."""
        self._persistent_id("get_location")
        return get_runtime().get_location(self)

    def get_location_name(self) -> str:
        """The name (as `dataclay status` and get_backends() show it) of the backend get_location() returns;
        from the backend list this program already has, when it has one."""
        self._persistent_id("get_location_name")
        runtime = get_runtime()
        return runtime.backend_name(runtime.get_location(self))

    def get_all_locations(self) -> list[str]:
        """Every backend ID holding a copy, master first."""
        self._persistent_id("get_all_locations")
        return get_runtime().get_all_locations(self)

    def sync(self) -> None:
        """Reloads this persistent object's metadata (locations, aliases) from the Logic Module; cached
        metadata is otherwise refreshed only when a backend turns out not to hold the object."""
        self._persistent_id("sync")
        get_runtime().refresh(self)

    def deletePersistent(self) -> None:
        """Removes every alias of this object (COMPSs spelling), so that garbage collection removes it once
        no other persistent object references it and no open session holds it (this one holds it until
        it closes). The object is not deleted at once: proxies of it keep working until it is collected."""
        self._persistent_id("deletePersistent")
        get_runtime().delete_persistent(self)

    # ---- copies: replicas, versions, moves ------------------------------------------------------

    def new_replica(self, backend_id: str | uuid.UUID | None = None, recursive: bool = True) -> str:
        """Copies this object (and, if `recursive`, every object it references, transitively) to
        `backend_id` (None: a backend without a copy, chosen by the master's); returns that backend's ID.

        A call that changes the object runs on the master, which updates every replica before it
        returns; reads may be served by a replica, also while the master's backend is down."""
        self._persistent_id("new_replica")
        check_recursive(recursive)
        backend = backend_text(backend_id)
        return get_runtime().new_replica(self, backend, recursive).backend_id

    def new_version(self: _T, backend_id: str | uuid.UUID | None = None) -> _T:
        """A version of this object: a new object of the same class with its own ID and a copy of this
        state, on `backend_id` (None: the master's backend). Changing it leaves this object untouched
        until consolidate_version() is called on it. Like any object, a version that no alias, open session
        or reachable object reaches is garbage-collected."""
        self._persistent_id("new_version")
        backend = backend_text(backend_id)
        return get_runtime().new_version(self, backend).obj

    def consolidate_version(self) -> None:
        """Gives the original object (the root, for a version of a version) this version's state, on
        every copy, and retires this version: using it afterwards raises ObjectDoesNotExistError.
        NotAVersionError if this object is not a version."""
        self._persistent_id("consolidate_version")
        get_runtime().consolidate_version(self)

    def move(self, backend_id: str | uuid.UUID, recursive: bool = False, remotes: bool = True) -> None:
        """Relocates this object's master copy (and, if `recursive`, those of the objects it references,
        transitively; with `remotes=False`, only those stored where this object is) to `backend_id`;
        aliases and references keep reaching it. A volatile object is made persistent there instead, as
        in dataClay 4."""
        backend = move_target(backend_id, recursive, remotes, "move")
        if not self.is_persistent:
            self.make_persistent(backend_id=backend)
            return
        self._persistent_id("move")
        get_runtime().move(self, backend, recursive, remotes)

    def _persistent_id(self, operation: str) -> str:
        if PENDING_KEY in self.__dict__ and self.__dict__.get(STATE_KEY) is None:
            self.make_persistent()  # made by model code in a backend: stored when something needs it stored
        oid = self.__dict__.get(ID_KEY)
        if not oid:
            # "is not registered!" is dataClay 4's wording, which its programs match on
            raise ObjectNotPersistentError(f"this {type(self).__name__} is not registered! {operation}() needs a "
                                           f"persistent object, and this one is volatile: call make_persistent() "
                                           f"first")
        return oid

    # ---- pickling -------------------------------------------------------------------------------

    def __reduce_ex__(self, protocol):
        d = self.__dict__
        if d.get(STATE_KEY) is None:
            return rebuild_volatile, (type(self),), state.stored_state(self)
        return proxy_for, (type(self), d[ID_KEY], d.get(HINT_KEY, ""))

    def __setstate__(self, values) -> None:
        if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
            raise SerializationError(f"state of a {type(self).__name__} must be a dict of field names")
        self.__dict__.update({name: values[name] for name in state.stored_names(type(self), values)})


def rebuild_volatile(cls):
    """An empty volatile instance of a dataClay class (its fields follow as pickle state)."""
    if not (isinstance(cls, type) and issubclass(cls, DataClayObject)):
        raise SerializationError(f"{cls!r} is not a dataClay class")
    return object.__new__(cls)


def proxy_for(cls, object_id: str, hint: str = ""):
    """The instance standing for a persistent object (what plain pickle makes of a persistent object)."""
    if not (isinstance(cls, type) and issubclass(cls, DataClayObject)):
        raise SerializationError(f"{cls!r} is not a dataClay class")
    return IDENTITY.proxy(cls, str(uuid.UUID(object_id)), hint)


def _own_annotations(cls) -> dict:
    return cls.__dict__.get("__annotations__", {})


def _is_class_var(annotation) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is typing.ClassVar or typing.get_origin(annotation) is typing.ClassVar
