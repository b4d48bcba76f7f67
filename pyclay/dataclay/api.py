"""The client entry points: init() opens a session, finish() closes it; get_backends() and
get_by_id() ask the cluster, list_datasets(), list_aliases() and list_objects() show what is stored.
Configuration comes from a file and/or DATACLAY_* variables."""
from __future__ import annotations

import atexit
import uuid
from typing import Iterator

from dataclay.exceptions import DataClayException
from dataclay._internal.config import Config
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.records import AliasRecord, BackendRecord, DatasetRecord, ObjectInfoRecord
from dataclay._internal.runtime import listing
from dataclay._internal.runtime.base import canonical_id
from dataclay._internal.runtime.client import ClientRuntime
from dataclay._internal.runtime.current import get_runtime, install_runtime, peek_runtime, remove_runtime

__all__ = ["init", "finish", "get_backends", "get_by_id", "is_initialized", "list_aliases", "list_datasets",
           "list_objects"]

_exit_hook_registered = False


def init(config_file: str | None = None) -> None:
    """Opens a session with the cluster (config_file, else $DATACLAY_HOME/client.properties, plus
    DATACLAY_* variables) and returns when ready; does nothing if this process is already initialised."""
    if peek_runtime() is not None:
        return
    global _exit_hook_registered
    try:
        runtime = ClientRuntime(Config.load(config_file)).open()
    except DataClayException as e:  # its message says what to do: the library's frames would only bury it
        raise e.with_traceback(None) from None
    if not install_runtime(runtime):
        runtime.close()
        return
    if not _exit_hook_registered:
        atexit.register(finish)
        _exit_hook_registered = True


def finish() -> None:
    """Closes the session and every channel; persistent objects are unusable until the next init()."""
    runtime = peek_runtime()
    if isinstance(runtime, ClientRuntime) and remove_runtime(runtime):
        runtime.close()


def is_initialized() -> bool:
    """True between init() and finish() (and inside an execution environment)."""
    return peek_runtime() is not None


def get_backends() -> dict[str, BackendRecord]:
    """Backend ID -> info with name, host, port, languages and alive."""
    return get_runtime().get_backends()


def get_by_id(object_id: str | uuid.UUID) -> DataClayObject:
    """The persistent object with this ID (UUID or text); its class's module must be importable."""
    return get_runtime().get_by_id(canonical_id(object_id))


def _lm():
    return get_runtime().router.lm()


def _session_lm():
    """The Logic Module client getter, after checking there is a session now (so the call, not the first
    iteration, says there is none)."""
    get_runtime()
    return _lm


def list_datasets(count_objects: bool = True, page_size: int = 0) -> Iterator[DatasetRecord]:
    """The datasets this session may see, by name: its account's own, and those of data contracts in force
    (an administrator: every dataset). Each is a DatasetRecord (name, owner, access, contract_expires_at_ms,
    objects). Pages of `page_size` (0: the Logic Module's default) are asked for as the iteration needs them."""
    return listing.datasets(_session_lm(), count_objects, page_size)


def list_aliases(pattern: str = "*", dataset: str | None = None, page_size: int = 0) -> Iterator[AliasRecord]:
    """The aliases matching `pattern` ('*': any run of characters, '?': one character, every other character
    itself), in `dataset` or in every dataset this session may see, by dataset then alias. Each is an
    AliasRecord (alias, dataset, object_id, class_name, language, backend_id), fetched a page at a time."""
    return listing.aliases(_session_lm(), pattern, dataset, page_size)


def list_objects(cls_or_class_name=None, dataset: str | None = None,
                 page_size: int = 0) -> Iterator[ObjectInfoRecord]:
    """The objects of a class (a DataClayObject subclass or its "module.Class" name; None: every class), in
    `dataset` or in every dataset this session may see, by dataset, class and ID. Each is an ObjectInfoRecord
    (id, class_name, language, dataset, master_backend_id, replica_backend_ids, aliases, version_of), fetched a
    page at a time."""
    return listing.objects(_session_lm(), cls_or_class_name, dataset, page_size)
