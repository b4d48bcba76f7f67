"""ModelCatalog: which modules are code of a Python model this client may use (its own models, the
published ones; an administrator's: all), as the Logic Module lists them, with the SHA-256 of each
of their files. A client decides by these names, and by whether the source it would import is that
code byte for byte, before it imports a model module that data names."""
from __future__ import annotations

import hashlib
import pathlib
import threading
import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

from dataclay.exceptions import DataClayException, SerializationError

RETRY_SECONDS = 30.0
"""A module the Logic Module did not list is not asked about again for this long (a model registered
or published meanwhile is seen after it)."""

MAX_REMEMBERED = 4096
"""Refused module names remembered at most (then forgotten all at once; each costs one more ask)."""


class ModelCode(NamedTuple):
    """A model that defines a module: its namespace and the SHA-256 (hex) of each file, by its path."""

    namespace: str
    digests: dict


class ModelCatalog:
    """The models `list_models()` returns (Model messages of Python models), fetched on first need and
    again for a module it does not know, at most once per module name every RETRY_SECONDS.

    A module once listed stays known to this process even if its model is unpublished later: its code,
    if imported, has run already, and otherwise only the exact registered bytes would be imported."""

    def __init__(self, list_models: Callable[[], Iterable], clock: Callable[[], float] | None = None):
        self._list_models = list_models
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._modules: dict[str, list[ModelCode]] = {}
        self._asked: dict[str, float] = {}

    def models_defining(self, module: str) -> list[ModelCode]:
        """The models whose files define `module` ("pkg.mod"); the Logic Module is asked when it is not
        known yet. SerializationError if it cannot be asked."""
        with self._lock:
            known = self._modules.get(module)
            if known:
                return known
            now = self._clock()
            if now - self._asked.get(module, -RETRY_SECONDS) < RETRY_SECONDS:
                return []
            if len(self._asked) >= MAX_REMEMBERED:
                self._asked.clear()
            self._asked[module] = now
        try:
            models = list(self._list_models())
        except DataClayException as e:
            raise SerializationError(f"could not ask the Logic Module which models this program may use: "
                                     f"{type(e).__name__}: {e}") from None
        modules = _modules_of(models)
        with self._lock:
            self._modules.update(modules)
            return self._modules.get(module, [])

    def forget(self, module: str) -> None:
        """Drops what is known of `module` (its model may have changed since): the Logic Module is asked
        again at the next lookup RETRY_SECONDS after the last time it was asked."""
        with self._lock:
            self._modules.pop(module, None)


def _modules_of(models: Iterable) -> dict[str, list[ModelCode]]:
    found: dict[str, list[ModelCode]] = {}
    for model in models:
        if getattr(model, "withdrawn", False):
            continue  # its classes are refused to everyone
        digests = {f.path: hashlib.sha256(f.content).hexdigest() for f in model.files}
        code = ModelCode(model.namespace, digests)
        for path in digests:
            name = module_name(path)
            if name:
                found.setdefault(name, []).append(code)
    return found


def module_name(path: str) -> str:
    """"pkg/mod.py" -> "pkg.mod"; a package's "pkg/__init__.py" -> "pkg"; "" for anything but a .py file."""
    pure = pathlib.PurePosixPath(path)
    if pure.suffix != ".py" or pure.is_absolute():
        return ""
    parts = list(pure.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else ""


def file_of(level_name: str, is_package: bool) -> str:
    """The model file path that holds module `level_name` ("a.b" -> "a/b.py", or "a/b/__init__.py")."""
    base = level_name.replace(".", "/")
    return f"{base}/__init__.py" if is_package else f"{base}.py"
