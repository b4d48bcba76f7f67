"""The runtime of this process: the client runtime after api.init(), or the execution
environment's. Objects look it up here on every remote operation."""
from __future__ import annotations

import threading

from dataclay.exceptions import NotAuthenticatedError

_lock = threading.Lock()
_runtime = None


def get_runtime():
    """The active runtime; raises NotAuthenticatedError before api.init()."""
    runtime = _runtime
    if runtime is None:
        raise NotAuthenticatedError("no dataClay session in this process: start a dataclay.Client (or call "
                                    "dataclay.api.init()) first")
    return runtime


def peek_runtime():
    """The active runtime, or None."""
    return _runtime


def install_runtime(runtime) -> bool:
    """Makes `runtime` the active one unless another is active; True if it was installed."""
    global _runtime
    with _lock:
        if _runtime is not None:
            return False
        _runtime = runtime
        return True


def remove_runtime(runtime) -> bool:
    """Deactivates `runtime` if it is the active one; True if it was."""
    global _runtime
    with _lock:
        if _runtime is runtime:
            _runtime = None
            return True
        return False
