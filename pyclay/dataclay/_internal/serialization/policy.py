"""Which globals an unpickler may load, decided from the module and name as written, before anything
is imported. Every side accepts the safe built-ins and the DATACLAY_PICKLE_ALLOW entries. Backends
(the execution environment) also accept classes of modules that would load from the deployed models
directory; clients, classes already defined in this process and classes of the models the Logic
Module lists for them, when the source they would import is that model's code byte for byte.

A refused global's module is never imported and none of its code runs. The import system's finders
(which locate modules and run none of their code) are asked only about names that are model code
by name: present in the models directory, or listed by the Logic Module. An accepted model module
is imported with its packages' `__init__` code, which is code of the same model, checked likewise."""
from __future__ import annotations

import collections
import importlib
import pathlib
import sys
from collections.abc import Callable, Iterable

from dataclay.exceptions import ClassNotRegisteredError, SerializationError
from dataclay._internal.model import registry
from dataclay._internal.model.object import DataClayObject, rebuild_volatile
from dataclay._internal.serialization import module_sources
from dataclay._internal.serialization.model_catalog import ModelCatalog, file_of
from dataclay._internal.serialization.safe_names import LIBRARY_CLASSES, REBUILD_VOLATILE, SAFE_GLOBALS

DEFAULT_DICT = ("collections", "defaultdict")


CONTRIB = ["dataclay", "contrib"]


def _import_contrib() -> None:
    """Imports dataclay.contrib (a no-op once done): importing it finds the dataclay/contrib directories on
    sys.path, and a deploy (ee/models.py) looks again for those its models add."""
    import dataclay.contrib  # noqa: F401


class ClassPolicy:
    """The allow-list of one unpickling side; resolved globals are cached, refusals are not."""

    _model_scope = "known here"

    def __init__(self, allow=()):
        self._allow = frozenset(allow)
        self._cache: dict = {}

    def find_class(self, module, name):
        """The global `module.name` if allowed; else SerializationError (nothing imported, nothing run)."""
        if not (module_sources.dotted(module) and (_plain_name(name) or name.isidentifier())):
            raise SerializationError(f"refused a malformed global reference {module!r}, {name!r}; nothing was "
                                     f"imported")
        found = self._cache.get((module, name))
        if found is not None:
            return found
        if not _plain_name(name) and not self._listed_dunder(module, name):
            found = None
        elif (module, name) == DEFAULT_DICT:
            found = self._defaultdict
        elif (module, name) in SAFE_GLOBALS:
            found = getattr(importlib.import_module(module), name)
        elif (module, name) == REBUILD_VOLATILE:
            found = rebuild_volatile
        elif (module, name) in LIBRARY_CLASSES:
            found = getattr(importlib.import_module(module), name)
        elif f"{module}.{name}" in self._allow:
            found = _allowed(module, name)
        else:
            found = self._model_global(module, name)
        if found is None:
            raise SerializationError(
                f"refused to load {module}.{name}: add it to DATACLAY_PICKLE_ALLOW (DATACLAY_PICKLE_ALLOW="
                f"{module}.{name}, comma-separated with any other entries) on the clients and the backends, or, "
                f"for a model class, register its model (dataclaycmd NewModel) and get its code (dataclaycmd "
                f"GetStubs). It is not a safe built-in, a numpy value or a class of a model {self._model_scope}; "
                f"nothing was imported for it")
        self._cache[(module, name)] = found
        return found

    def _listed_dunder(self, module: str, name: str) -> bool:
        """A one-level name with dunders (Cython's `__pyx_unpickle_<Class>`, which pandas pickles use) is
        accepted only when DATACLAY_PICKLE_ALLOW lists it exactly: it reaches no attribute of another object."""
        return name.isidentifier() and f"{module}.{name}" in self._allow

    def _defaultdict(self, default_factory=None, *rest):
        """collections.defaultdict as a pickle rebuilds it, with a factory that is None or a class this policy
        accepts by name (the factory runs later, when model code reads a missing key)."""
        if rest or not (default_factory is None or self._accepts_factory(default_factory)):
            raise SerializationError(f"refused a collections.defaultdict whose default factory {default_factory!r} "
                                     f"is not a class this side accepts by name")
        return collections.defaultdict(default_factory)

    def _accepts_factory(self, factory) -> bool:
        if not isinstance(factory, type):
            return False
        module, name = getattr(factory, "__module__", None), getattr(factory, "__qualname__", None)
        if not (isinstance(module, str) and isinstance(name, str)) or (module, name) == DEFAULT_DICT:
            return False
        try:
            return self.find_class(module, name) is factory
        except SerializationError:
            return False

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
    """A backend's policy: model classes come only from modules that would load from under `models_dir`."""

    _model_scope = "deployed on this backend"

    def __init__(self, models_dir, allow=()):
        super().__init__(allow)
        self.models_dir = pathlib.Path(models_dir).resolve() if models_dir else None

    def _accepts_registered(self, cls: type) -> bool:
        return self.is_model_module(cls.__module__)

    def is_model_module(self, module: str) -> bool:
        """True if `module`, and each package above it, is loaded or would be imported from deployed model code
        under models_dir; decided without importing any of it (only this library's dataclay.contrib)."""
        if self.models_dir is None or not module_sources.dotted(module):
            return False
        parts = module.split(".")
        # dataClay 4's contributed models (dataclay.contrib.<name>...): the two levels above are this
        # library's own, with no model code; each level from <name> down is judged like any model module
        shared = len(CONTRIB) if parts[:len(CONTRIB)] == CONTRIB and len(parts) > len(CONTRIB) else 0
        top = parts[shared]
        where = self.models_dir.joinpath(*parts[:shared])
        deployed = (where / top).is_dir() or (where / f"{top}.py").is_file()
        if shared:
            if not deployed:
                return False
            _import_contrib()
        elif top not in sys.modules and not deployed:
            return False  # not model code: no finder is even asked about it
        found = module_sources.levels(module)
        return found is not None and all(self._from_models(level) for level in found[shared:])

    def _from_models(self, level: module_sources.Level) -> bool:
        paths = _paths(level)
        return level.plain_source and bool(paths) and all(self._inside(p) for p in paths)

    def _inside(self, path: pathlib.Path) -> bool:
        resolved = path.resolve()
        return resolved == self.models_dir or self.models_dir in resolved.parents

    def _model_global(self, module: str, name: str):
        if not self.is_model_module(module):
            return None
        loaded = _import_model(module)
        if not self.is_model_module(module):
            return None  # its own code put something else in its place
        return _class_defined_in(loaded, module, name)


class ClientClassPolicy(ClassPolicy):
    """A client's policy: also classes defined in this process in model modules, and classes of the models
    `list_models()` returns (the Logic Module's list of what this client may use)."""

    _model_scope = "this program may use"

    def __init__(self, allow=(), list_models: Callable[[], Iterable] | None = None):
        super().__init__(allow)
        self._catalog = ModelCatalog(list_models) if list_models is not None else None

    def _accepts_registered(self, cls: type) -> bool:
        return True

    def _model_global(self, module: str, name: str):
        known = registry.registered_class(f"{module}.{name}")
        if known is not None:
            return known
        loaded = sys.modules.get(module)
        if loaded is not None and registry.is_model_module(module):
            return _class_defined_in(loaded, module, name)
        if self._catalog is None or module.split(".")[0] in sys.stdlib_module_names:
            return None  # the standard library is never model code (see _check_model_source): no need to ask
        models = self._catalog.models_defining(module)
        if not models:
            return None
        try:
            _check_model_source(module, name, models)
        except SerializationError:
            self._catalog.forget(module)  # a model registered again since the list was fetched heals in time
            raise
        return _class_defined_in(_import_model(module), module, name)


def _check_model_source(module: str, name: str, models: list) -> None:
    """Raises SerializationError, before any import, unless importing `module` would run only the code of
    one of `models`: each level not imported yet is plain source, outside this Python's installation, whose
    bytes are the model's file."""
    namespaces = ", ".join(sorted({m.namespace for m in models}))
    get_code = (f"get its code with `dataclaycmd GetStubs <user> <password> {models[0].namespace} <dir>` and "
                f"put <dir> on the PYTHONPATH")
    levels = module_sources.levels(module)
    if levels is None:
        raise SerializationError(f"{module}.{name} is a class of model {namespaces}, whose module {module} is not on "
                                 f"this program's path; nothing was imported: {get_code}")
    pending = [level for level in levels if not level.loaded]
    # A model may share its module names with an installed package, even byte for byte: what is installed
    # is the program's own environment, never model code for data to pull in.
    installed = next((level for level in pending if any(module_sources.installed(p) for p in _paths(level))), None)
    if installed is not None:
        raise SerializationError(f"{module}.{name} is a class of model {namespaces}, but {installed.name} would be "
                                 f"imported from this Python's installation ({_where(installed)}), not from model "
                                 f"code on the path; nothing was imported: {get_code} ahead of it, or import "
                                 f"{module} in the program yourself")
    for model in models:
        if all(_is_model_file(level, model) for level in pending):
            return
    differing = next(level for level in pending if not _is_model_file(level, models[0]))
    raise SerializationError(f"{module}.{name} is a class of model {namespaces}, but {_where(differing)}, which this "
                             f"program would import for it, is not that model's registered code; nothing was "
                             f"imported: {get_code}, ahead of other copies")


def _paths(level: module_sources.Level) -> list:
    return ([level.origin] if level.origin else []) + list(level.locations)


def _where(level: module_sources.Level) -> str:
    return str(level.origin) if level.origin else level.name


def _is_model_file(level: module_sources.Level, model) -> bool:
    if not level.plain_source:
        return False
    if level.origin is None:
        return True  # a namespace package: no code runs for it
    wanted = model.digests.get(file_of(level.name, level.is_package))
    return wanted is not None and module_sources.sha256_of(level.origin) == wanted


def _import_model(module: str):
    try:
        return importlib.import_module(module)
    except Exception as e:  # model code that fails to import is reported, never half-trusted
        raise SerializationError(f"model module {module} failed to import: {type(e).__name__}: {e}") from None


def _allowed(module: str, name: str):
    try:
        loaded = importlib.import_module(module)
    except Exception as e:  # listed by the deployment but not importable here
        raise SerializationError(f"{module}.{name} is listed in DATACLAY_PICKLE_ALLOW but its module cannot be "
                                 f"imported here: {type(e).__name__}: {e}") from None
    return _lookup(loaded, name)


def _class_defined_in(loaded, module: str, name: str):
    """The class `name` of module `loaded` if that module defines it (not one it imported), else None."""
    found = _lookup(loaded, name)
    if isinstance(found, type) and found.__module__ == module:
        return found
    return None


def _plain_name(name) -> bool:
    return module_sources.dotted(name) and not any(part.startswith("__") for part in name.split("."))


def _lookup(module, name: str):
    """`module.name` where name may be a dotted path of plain (non-dunder) identifiers."""
    target = module
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target
