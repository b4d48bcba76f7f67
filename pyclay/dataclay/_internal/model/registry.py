"""Every DataClayObject subclass defined in this process, by its stored name ("module.QualName"),
and the modules that define them (model modules)."""
from __future__ import annotations

import threading

_lock = threading.Lock()
_classes: dict[str, type] = {}
_model_modules: set[str] = set()


def register(cls: type) -> None:
    """Records a DataClayObject subclass (a redefinition replaces the earlier class)."""
    with _lock:
        _classes[class_name_of(cls)] = cls
        _model_modules.add(cls.__module__)


def class_name_of(cls: type) -> str:
    """The name a class is stored under: "module.QualName"."""
    return f"{cls.__module__}.{cls.__qualname__}"


def registered_class(name: str) -> type | None:
    """The DataClayObject subclass stored as `name`, if defined in this process."""
    return _classes.get(name)


def is_model_module(module: str) -> bool:
    """True if `module` defines at least one DataClayObject subclass."""
    return module in _model_modules
