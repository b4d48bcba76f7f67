"""Which globals an unpickler may load. Backends (the execution environment) accept the safe
built-ins, DATACLAY_PICKLE_ALLOW entries and classes of the deployed model modules; clients also
accept classes they can import that are dataClay classes or defined in model modules."""
from __future__ import annotations

import importlib
import pathlib
import sys

from dataclay.exceptions import ClassNotRegisteredError, SerializationError
from dataclay._internal.model import registry
from dataclay._internal.model.object import DataClayObject, rebuild_volatile
from dataclay._internal.serialization.safe_names import REBUILD_VOLATILE, SAFE_GLOBALS


class ClassPolicy:
    """The allow-list of one unpickling side; resolved globals are cached, refusals are not."""

    def __init__(self, allow=()):
        self._allow = frozenset(allow)
        self._cache: dict = {}

    def find_class(self, module, name):
        """The global `module.name` if allowed; else SerializationError (nothing imported, nothing run)."""
        found = self._cache.get((module, name))
        if found is not None:
            return found
        if not (isinstance(module, str) and isinstance(name, str)):
            raise SerializationError("refused a malformed global reference in a pickle")
        if (module, name) in SAFE_GLOBALS:
            found = getattr(importlib.import_module(module), name)
        elif (module, name) == REBUILD_VOLATILE:
            found = rebuild_volatile
        elif f"{module}.{name}" in self._allow:
            found = _lookup(importlib.import_module(module), name)
        else:
            found = self._model_global(module, name)
        if found is None:
            raise SerializationError(
                f"refused to load {module}.{name}: it is not a registered model class, a safe built-in "
                f"or listed in DATACLAY_PICKLE_ALLOW")
        self._cache[(module, name)] = found
        return found

    def dataclay_class(self, class_name: str) -> type:
        """The dataClay class stored as "module.Class"; ClassNotRegisteredError if it is not allowed here."""
        if not isinstance(class_name, str) or "." not in class_name:
            raise ClassNotRegisteredError(f"{class_name!r} is not a 'module.Class' name")
        known = registry.registered_class(class_name)
        if known is not None and self._accepts_registered(known):
            return known
        module, _, name = class_name.rpartition(".")
        try:
            cls = self.find_class(module, name)
        except SerializationError as e:
            raise ClassNotRegisteredError(f"class {class_name} cannot be loaded here: {e}") from None
        if not (isinstance(cls, type) and issubclass(cls, DataClayObject)):
            raise ClassNotRegisteredError(f"{class_name} is not a DataClayObject subclass")
        return cls

    def _accepts_registered(self, cls: type) -> bool:
        return False

    def _model_global(self, module: str, name: str):
        return None


class BackendClassPolicy(ClassPolicy):
    """A backend's policy: model classes come only from modules under `models_dir`."""

    def __init__(self, models_dir, allow=()):
        super().__init__(allow)
        self.models_dir = pathlib.Path(models_dir).resolve() if models_dir else None

    def _accepts_registered(self, cls: type) -> bool:
        return self.is_model_module(cls.__module__)

    def is_model_module(self, module: str) -> bool:
        """True if `module` (and each package above it) is deployed model code under models_dir."""
        if self.models_dir is None or not _dotted(module):
            return False
        parts = module.split(".")
        for depth in range(1, len(parts) + 1):
            prefix = ".".join(parts[:depth])
            loaded = sys.modules.get(prefix)
            if loaded is not None:
                if not self._loaded_from_models(loaded):
                    return False
                continue
            base = self.models_dir.joinpath(*parts[:depth])
            if not (base.with_suffix(".py").is_file() or base.is_dir()):
                return False
        return True

    def _loaded_from_models(self, module) -> bool:
        paths = [getattr(module, "__file__", None)] + list(getattr(module, "__path__", []) or [])
        paths = [pathlib.Path(p).resolve() for p in paths if p]
        return bool(paths) and all(p == self.models_dir or self.models_dir in p.parents for p in paths)

    def _model_global(self, module: str, name: str):
        if not self.is_model_module(module):
            return None
        try:
            loaded = importlib.import_module(module)
        except Exception as e:  # model code that fails to import is reported, never half-trusted
            raise SerializationError(f"model module {module} failed to import: {type(e).__name__}: {e}") from None
        if not self._loaded_from_models(loaded):
            return None
        found = _lookup(loaded, name)
        if isinstance(found, type) and found.__module__ == module:
            return found
        return None


class ClientClassPolicy(ClassPolicy):
    """A client's policy: also dataClay classes it can import and classes of model modules."""

    def _accepts_registered(self, cls: type) -> bool:
        return True

    def _model_global(self, module: str, name: str):
        known = registry.registered_class(f"{module}.{name}")
        if known is not None:
            return known
        if not _dotted(module) or module.split(".")[0] in sys.stdlib_module_names:
            return None
        try:
            loaded = importlib.import_module(module)
        except Exception:  # not importable here: the caller reports the class as refused
            return None
        found = _lookup(loaded, name)
        if not isinstance(found, type):
            return None
        if issubclass(found, DataClayObject):
            return found
        if found.__module__ == module and registry.is_model_module(module):
            return found
        return None


def _dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def _lookup(module, name: str):
    """`module.name` where name may be a dotted path of plain (non-dunder) identifiers."""
    target = module
    for part in name.split("."):
        if not part.isidentifier() or part.startswith("__"):
            raise SerializationError(f"refused global name {name!r}")
        target = getattr(target, part, None)
        if target is None:
            return None
    return target
