"""The COMPSs Storage Runtime Interface (SRI) for dataClay, in the order COMPSs calls it:

- master: init(config_file_path) before the application, finish() after it;
- worker: initWorker(config_file_path) in the worker process (configuration only: its executors are
  forked from it, and a gRPC channel must not cross a fork), then in every forked executor
  initWorkerPostFork() (connects), each task inside `with TaskContext(logger, values):`, and
  finishWorkerPostFork() before the executor ends; finishWorker() last, in the worker process;
- anywhere connected: getByID, getLocations, newReplica, newVersion, consolidateVersion. Connected means
  init() or initWorkerPostFork() in this process, or any other dataClay session it opened
  (dataclay.api.init(), a started dataclay.Client): a plain program may use these calls too.

The configuration file is the client file `dataclay.api.init` reads (KEY=VALUE lines:
DATACLAY_HOST, DATACLAY_PORT, DATACLAY_USER, DATACLAY_PASSWORD, ...); None means
$DATACLAY_HOME/client.properties and the DATACLAY_* environment. A call made in the wrong order
raises StorageStateError; a bad argument raises dataclay.exceptions.InvalidArgumentError."""
from __future__ import annotations

import json
import logging
import os
import threading
import uuid

from dataclay import DataClayObject
from dataclay import api as _dataclay
from dataclay._internal.config import Config
from dataclay.exceptions import BackendDoesNotExistError, DataClayException, InvalidArgumentError
from storage import _hosts

StorageObject = DataClayObject
"""The base class COMPSs applications give their persistent classes (`from storage.api import StorageObject`)."""

__all__ = ["init", "finish", "initWorker", "finishWorker", "initWorkerPostFork", "finishWorkerPostFork",
           "getByID", "getLocations", "newReplica", "newVersion", "consolidateVersion", "TaskContext",
           "StorageObject", "StorageStateError"]

_log = logging.getLogger(__name__)
_lock = threading.RLock()
_role = None            # None, "master" or "worker"
_worker_config = None   # the file initWorker was given (None: default file and environment)
_connected_pid = None   # worker: the process whose initWorkerPostFork opened the session


class StorageStateError(DataClayException, RuntimeError):
    """A storage.api call made in the wrong order (e.g. getByID before init)."""


# ---- master --------------------------------------------------------------------------------------

def init(config_file_path=None, **kwargs) -> None:
    """Master side: opens this process's dataClay session from the client configuration file."""
    global _role
    path = _config_path(config_file_path)
    with _lock:
        if _role is not None:
            raise StorageStateError(f"init() called in a process already initialised as {_role}: call "
                                    f"{'finish()' if _role == 'master' else 'finishWorker()'} first")
        _dataclay.init(path)
        _role = "master"
    _log.debug("storage initialised (master) from %s", path or "the default configuration")


def finish(**kwargs) -> None:
    """Master side: closes the session init() opened."""
    global _role
    with _lock:
        if _role != "master":
            raise StorageStateError("finish() without init(): nothing to finish" if _role is None else
                                    "finish() in a worker process: workers call finishWorker()")
        _role = None
        _dataclay.finish()


# ---- worker ----------------------------------------------------------------------------------------

def initWorker(config_file_path=None, **kwargs) -> None:
    """Worker side, before forking executors: reads and checks the configuration; connects nothing."""
    global _role, _worker_config
    path = _config_path(config_file_path)
    with _lock:
        if _role is not None:
            raise StorageStateError(f"initWorker() in a process already initialised as {_role}")
        if _dataclay.is_initialized():
            raise StorageStateError("initWorker() in a process that already has a dataClay session: executors "
                                    "are forked from this process and a gRPC channel must not cross a fork")
        config = Config.load(path)
        if not (config.user and config.password):
            raise InvalidArgumentError(f"initWorker(): DATACLAY_USER and DATACLAY_PASSWORD must be set "
                                       f"({config.source or 'the environment'} has no credentials)")
        _role, _worker_config = "worker", path


def initWorkerPostFork() -> None:
    """Worker side, in each forked executor: opens the executor's own session."""
    global _connected_pid
    with _lock:
        if _role != "worker":
            raise StorageStateError("initWorkerPostFork() before initWorker()" if _role is None else
                                    "initWorkerPostFork() in the master: the master calls init()")
        if _connected_pid == os.getpid():
            raise StorageStateError("initWorkerPostFork() called twice in this process")
        if _connected_pid is not None:
            raise StorageStateError(f"this process was forked from process {_connected_pid} after that one "
                                    f"connected: fork executors before initWorkerPostFork(), never after")
        _dataclay.init(_worker_config)
        _connected_pid = os.getpid()


def finishWorkerPostFork() -> None:
    """Worker side, in each executor before it ends: closes the session initWorkerPostFork() opened."""
    global _connected_pid
    with _lock:
        if _role != "worker" or _connected_pid != os.getpid():
            raise StorageStateError("finishWorkerPostFork() without initWorkerPostFork() in this process")
        _connected_pid = None
        _dataclay.finish()


def finishWorker(**kwargs) -> None:
    """Worker side, last: forgets the configuration initWorker() read."""
    global _role, _worker_config
    with _lock:
        if _role != "worker":
            raise StorageStateError("finishWorker() without initWorker()" if _role is None else
                                    "finishWorker() in the master: the master calls finish()")
        if _connected_pid == os.getpid():
            raise StorageStateError("finishWorker() while this process is still connected: call "
                                    "finishWorkerPostFork() first")
        _role, _worker_config = None, None


class TaskContext:
    """Encloses one task's execution in a worker executor (COMPSs: `with TaskContext(logger, values):`)."""

    def __init__(self, logger, values, config_file_path=None, **kwargs):
        if not isinstance(logger, (logging.Logger, logging.LoggerAdapter)):
            raise InvalidArgumentError(f"TaskContext: logger must be a logging.Logger, not {logger!r}")
        if not isinstance(values, (list, tuple)):
            raise InvalidArgumentError(f"TaskContext: values must be the list of the task's parameters, "
                                       f"not {type(values).__name__}")
        self.logger = logger
        self.values = values

    def __enter__(self) -> "TaskContext":
        _require_session("TaskContext")
        self.logger.debug("task starting with %d parameter(s)", len(self.values))
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            self.logger.warning("task raised %s: %s", exc_type.__name__, exc)
        else:
            self.logger.debug("task ended")
        return False


# ---- objects -------------------------------------------------------------------------------------------

def getByID(id):
    """The persistent object with this ID (the text getID() returns), as a proxy of its registered class."""
    oid = _object_id(id)
    _require_session("getByID")
    return _dataclay.get_by_id(oid)


def getLocations(id) -> list:
    """Host names of the backends holding a copy of the object, the master's first, each once."""
    obj = getByID(id)
    return _hosts.hosts_of(_dataclay.get_backends(), obj.get_all_locations())


def newReplica(id, backend=None) -> list:
    """Copies the object and what it references to the backend `backend` names (a host name, backend name or
    ID, preferring one without a copy; None or empty: any backend without a copy); returns getLocations()."""
    named = _named(backend, "newReplica")
    obj = getByID(id)
    target = None
    if named:
        holders = set(obj.get_all_locations())
        target = _backend_id(backend, "newReplica", prefer=lambda b: b not in holders)
    obj.new_replica(backend_id=target)
    return getLocations(id)


def newVersion(id, preserve_source=True, backend=None) -> str:
    """A new version of the object (a copy with its own ID) on the backend `backend` names (preferring one that
    holds the object, so no bytes move; None or empty: beside the object); returns the version's ID.

    dataClay always keeps the source: it is the original, or an intermediate version that nothing
    references once COMPSs moves on (preserve_source=False), which garbage collection removes."""
    if not isinstance(preserve_source, bool):
        raise InvalidArgumentError(f"newVersion(): preserve_source must be True or False, not {preserve_source!r}")
    named = _named(backend, "newVersion")
    obj = getByID(id)
    target = None
    if named:
        holders = set(obj.get_all_locations())
        target = _backend_id(backend, "newVersion", prefer=lambda b: b in holders)
    return obj.new_version(backend_id=target).getID()


def consolidateVersion(final_id) -> None:
    """Gives the original object the state of this (final) version and retires the version; NotAVersionError
    if the object is not a version."""
    getByID(final_id).consolidate_version()


# ---- checks ------------------------------------------------------------------------------------------

def _require_session(what: str) -> None:
    """Passes in any process with a dataClay session: COMPSs' master or connected executor, or a program that
    called dataclay.api.init() (or started a dataclay.Client) itself. A COMPSs worker process that has not
    connected is refused even so: a session inherited across a fork is not its own."""
    if _role == "master" or (_role == "worker" and _connected_pid == os.getpid()):
        return
    if _role is None:
        if _dataclay.is_initialized():
            return
        raise StorageStateError(f"{what} before init() (COMPSs master), initWorker() and initWorkerPostFork() "
                                f"(COMPSs worker) or dataclay.api.init(): this process has no dataClay session")
    raise StorageStateError(f"{what} in a worker process that has not called initWorkerPostFork()")


def _config_path(value):
    if value is None:
        return None
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentError(f"config_file_path must be the path of a client configuration file or None, "
                                   f"not {value!r}")
    return value


def _object_id(value) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):  # dataClay 4's form: an object's metadata as JSON, with its "id"
            try:
                text = str(json.loads(text).get("id", ""))
            except (ValueError, AttributeError):
                text = ""
        try:
            return str(uuid.UUID(text))
        except ValueError:
            pass
    raise InvalidArgumentError(f"id must be an object ID (the UUID text getID() returns, or dataClay 4's JSON "
                               f"metadata with an \"id\"), not {value!r}")


def _named(backend, operation: str) -> bool:
    """True if `backend` names a backend; False for None or blank (the default place)."""
    if backend is None:
        return False
    if not isinstance(backend, str):
        raise InvalidArgumentError(f"{operation}(): backend must be a host name, backend name or backend ID, "
                                   f"not {backend!r}")
    return bool(backend.strip())


def _backend_id(backend: str, operation: str, prefer) -> str:
    backends = _dataclay.get_backends()
    found = _hosts.pick(backends, backend, prefer)
    if found is None:
        known = ", ".join(sorted(f"{b.name} ({b.host}, {b.id})" for b in backends.values())) or "none"
        raise BackendDoesNotExistError(f"{operation}(): {backend!r} names no dataClay backend; backends: {known}")
    return found
