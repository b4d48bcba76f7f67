"""The execution environment's runtime: objects of this backend run in memory (loaded on first
use, over the link), others are reached through their backend's Data Service in the caller's
session, by calls the Data Service relays (the environment has no network and no token)."""
from __future__ import annotations

import pathlib
import threading

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.config import EnvironmentConfig
from dataclay._internal.ee.changes import ChangeCollector
from dataclay._internal.ee.relay import LOGIC_MODULE
from dataclay._internal.ee.residency import ResidentObjects
from dataclay._internal.model.state import stored_state
from dataclay._internal.ee.call_context import acting_for, current_call
from dataclay._internal.model.states import CREATION, PENDING_KEY, STATE_KEY, TRACKER
from dataclay._internal.serialization.encoder import new_object_id
from dataclay._internal.rpc import LogicModuleClient
from dataclay._internal.runtime.base import Runtime
from dataclay._internal.runtime.router import BackendRouter
from dataclay._internal.serialization.policy import BackendClassPolicy


class EnvironmentRuntime(Runtime):
    """Runtime of an execution environment of backend `config.backend_id`: state is loaded through
    `session` (its link), model code comes from `models_dir`."""

    def __init__(self, config: EnvironmentConfig, session, models_dir: pathlib.Path):
        policy = BackendClassPolicy(models_dir, config.pickle_allow)
        super().__init__(BackendRouter(LogicModuleClient(LOGIC_MODULE), _relayed), policy)
        self.backend_id = config.backend_id
        state_lock = threading.RLock()
        self.residents = ResidentObjects(config.backend_id, session, policy, state_lock, config.resident_bytes)
        self.changes = ChangeCollector(self.residents, state_lock)
        TRACKER.install(self.residents.track)
        CREATION.install(_made_by_model_code)

    persists_arguments = False

    @property
    def plain_flags(self) -> bool:
        """Whether the call this thread serves came from a dataClay 4 program (see Runtime.plain_flags)."""
        call = current_call()
        return call is not None and call.plain_flags

    def get_field(self, obj, name: str):
        """A field: from memory if the object is stored here, else from its backend."""
        if self.residents.load(obj):
            return getattr(obj, name)
        return super().get_field(obj, name)

    def set_field(self, obj, name: str, value) -> None:
        """Assigns a field: in memory if the object is stored here (stored at the end of the call)."""
        if self.residents.load(obj):
            setattr(obj, name, value)
        else:
            super().set_field(obj, name, value)

    def call_method(self, obj, name: str, args: tuple, kwargs: dict):
        """Runs an active method: in this process if the object is stored here, else in its backend."""
        if self.residents.load(obj):
            return getattr(obj, name)(*args, **kwargs)
        return super().call_method(obj, name, args, kwargs)

    def make_persistent(self, obj, alias, backend_id, recursive) -> None:
        """As everywhere, except that an object made persistent here is stored in this backend by default, as
        dataClay 4 stores what its backends make."""
        if backend_id is None and obj.__dict__.get(STATE_KEY) is None:
            backend_id = self.backend_id
        super().make_persistent(obj, alias, backend_id, recursive)

    def runs_here(self, obj) -> bool:
        """Whether `obj` is stored in this backend (then loaded, if it was not)."""
        return self.residents.load(obj)

    def check_client_side(self, operation: str) -> None:
        """Copies, versions, moves and alias removal by object are client-side: InvalidArgumentError."""
        if operation in _CLIENT_SIDE:
            raise _client_side(operation)

    def get_properties(self, obj) -> dict:
        """The object's fields: from memory if it is stored here, else from its backend."""
        if self.residents.load(obj):
            return stored_state(obj)
        return super().get_properties(obj)

    def replace_fields(self, obj, values: dict) -> None:
        """Assigns several fields of an object stored here, as part of the current call (which stores all of its
        changes at once); objects stored elsewhere are refused (their update needs a version: client-side)."""
        if not self.residents.load(obj):
            raise InvalidArgumentError(f"dc_update() inside an active method applies to objects stored in this "
                                       f"backend only; {obj.getID()} is stored elsewhere")
        for name, value in values.items():
            setattr(obj, name, value)

    def new_replica(self, obj, backend_id, recursive):
        """Not available inside a backend: InvalidArgumentError."""
        raise _client_side("new_replica")

    def new_version(self, obj, backend_id):
        """Not available inside a backend: InvalidArgumentError."""
        raise _client_side("new_version")

    def consolidate_version(self, version):
        """Not available inside a backend: InvalidArgumentError."""
        raise _client_side("consolidate_version")

    def move(self, obj, backend_id, recursive, remotes=True):
        """Not available inside a backend: InvalidArgumentError."""
        raise _client_side("move")

    def delete_persistent(self, obj):
        """Not available inside a backend: InvalidArgumentError."""
        raise _client_side("deletePersistent")

    def evict(self, ids, idle: bool = False) -> int:
        """Unloads the resident objects among `ids` (the store's state is authoritative), and with `idle`
        every other one no call in flight has touched; returns how many were.

        Under the commit lock: a call collecting deltas must never see an object half unloaded (its
        missing fields would read as removed)."""
        with self.changes.commit_lock:
            return self.residents.evict(ids) + (self.residents.evict_idle() if idle else 0)

    @property
    def data_manager(self) -> "DataManager":
        """dataClay 4's `get_runtime().data_manager`, for model code: `await data_manager.flush_all()`."""
        return DataManager(self, current_call())

    def close(self) -> None:
        """Closes the channels to other backends."""
        self.router.close()
        self.close_aio()


_CLIENT_SIDE = frozenset({"new_replica", "new_version", "consolidate_version", "move", "deletePersistent"})


def _client_side(operation: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"{operation}() is a client-side operation: call it from a client program "
                                f"(after dataclay.api.init()), not inside an active method running in a backend")


def _relayed() -> str:
    """The token the environment's clients put on their calls: none (the Data Service adds the caller's)."""
    return "relayed"


def _made_by_model_code(obj) -> None:
    """An object model code makes during a call is persistent from the start, as in dataClay 4: it has its ID
    now, and is stored (here) when something needs it stored: a reference from stored state or a result at the
    end of the call, an alias, make_persistent(), a flush. One nothing reaches by then is never stored."""
    call = current_call()
    if call is not None:
        obj.__dict__[PENDING_KEY] = new_object_id()
        call.created.append(obj)


class DataManager:
    """What dataClay 4's data manager offers model code: flush_all() stores the objects the current call made
    and unloads from this process's memory every object of this backend no call in flight is using (the
    current call's objects stay); each is reloaded from the store, whose state is always current, when next
    used."""

    def __init__(self, runtime: EnvironmentRuntime, call):
        self._runtime = runtime
        self._call = call

    async def flush_all(self) -> None:
        with acting_for(self._call):  # the call waiting for this: what it made is stored in its session
            for made in list(self._call.created if self._call is not None else ()):
                if made.__dict__.get(STATE_KEY) is None and PENDING_KEY in made.__dict__:
                    self._runtime.make_persistent(made, None, None, True)
        self._runtime.evict((), idle=True)
