"""ModelWatcher: the execution environment's own copy of the model code its account may use, and
the source of every model module it imported. The Data Service sends the whole set (`deploy`): the
files are written to a private directory (on sys.path), files no longer in the set are removed,
and a set that changes or removes a module already imported makes the environment restart (code
already loaded cannot be replaced or unloaded safely in a running process)."""
from __future__ import annotations

import importlib
import os
import pathlib
import sys

from dataclay.exceptions import InvalidArgumentError

class ModelWatcher:
    """Model modules under `models_dir` (this process's own directory) and what they were imported from."""

    def __init__(self, models_dir: pathlib.Path):
        self.models_dir = pathlib.Path(models_dir).resolve()
        self.models_dir.mkdir(mode=0o700, parents=True, exist_ok=True)

    def install(self, files) -> list[str]:
        """Makes `files` ((path, content) pairs) the whole model code here; returns the model modules
        already imported that this changes or removes (the environment must then restart)."""
        wanted = {}
        for path, content in files:
            wanted[_relative(path)] = content
        changed = []
        for relative, content in wanted.items():
            target = self.models_dir / relative
            if target.is_file() and target.read_bytes() == content:
                continue
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".partial")
            partial.write_bytes(content)
            os.replace(partial, target)
            changed.append(relative)
        for existing in list(self.models_dir.rglob("*")):
            relative = existing.relative_to(self.models_dir).as_posix()
            if existing.is_file() and relative not in wanted:
                existing.unlink()
                changed.append(relative)
        importlib.invalidate_caches()
        contrib = sys.modules.get("dataclay.contrib")
        if contrib is not None:
            contrib.rescan()  # a model under dataclay/contrib/<name>/ may have just made that directory
        return [name for name in map(module_name, (p for p in changed if p.endswith(".py")))
                if name in sys.modules and self._model_file(sys.modules[name]) is not None]

    def _model_file(self, module) -> pathlib.Path | None:
        file = getattr(module, "__file__", None)
        if not file:
            return None
        path = pathlib.Path(file).resolve()
        return path if self.models_dir in path.parents else None


def _relative(path: str) -> str:
    """A model file's path, checked to stay inside the models directory."""
    pure = pathlib.PurePosixPath(path)
    if pure.is_absolute() or not pure.parts or any(part in ("", ".", "..") for part in pure.parts):
        raise InvalidArgumentError(f"model file path {path!r} must be relative and stay inside the model")
    return pure.as_posix()


def module_name(path: str) -> str:
    """"pkg/mod.py" -> "pkg.mod"; a package's "__init__.py" names the package."""
    parts = list(pathlib.PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
