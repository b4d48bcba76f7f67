"""The client entry points: init() opens a session, finish() closes it; get_backends() and
get_by_id() ask the cluster. Configuration comes from a file and/or DATACLAY_* variables."""
from __future__ import annotations

import atexit

from dataclay.exceptions import DataClayException
from dataclay._internal.config import Config
from dataclay._internal.runtime.base import canonical_id
from dataclay._internal.runtime.client import ClientRuntime
from dataclay._internal.runtime.current import get_runtime, install_runtime, peek_runtime, remove_runtime

__all__ = ["init", "finish", "get_backends", "get_by_id", "is_initialized"]

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


def get_backends() -> dict:
    """Backend ID -> info with name, host, port, languages and alive."""
    return get_runtime().get_backends()


def get_by_id(object_id):
    """The persistent object with this ID (UUID or text); its class's module must be importable."""
    return get_runtime().get_by_id(canonical_id(object_id))
