"""ModelWatcher: remembers the source of every model module this process imported, so that a
deployment that changes one of them makes the execution environment restart (code already
loaded cannot be replaced safely in a running process)."""
from __future__ import annotations

import hashlib
import importlib
import logging
import pathlib
import sys

_log = logging.getLogger(__name__)


class ModelWatcher:
    """Model modules imported from `models_dir` and the SHA-256 of the source they were loaded from."""

    def __init__(self, models_dir):
        self.models_dir = pathlib.Path(models_dir).resolve() if models_dir else None
        self._hashes: dict[str, str] = {}
        self._modules_seen = 0

    def note_imports(self) -> None:
        """Records the source of model modules imported since the last call (cheap when none were).

        A file replaced between its import and this call is recorded with its new content; the
        window is one call long."""
        if self.models_dir is None or len(sys.modules) == self._modules_seen:
            return
        self._modules_seen = len(sys.modules)
        for name, module in list(sys.modules.items()):
            if name in self._hashes:
                continue
            path = self._model_file(module)
            if path is not None:
                try:
                    self._hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest()
                except OSError as e:
                    _log.warning("cannot read the source of model module %s: %s", name, e)

    def changed_by(self, files) -> list[str]:
        """Model modules already imported whose source differs in `files` ((path, content) pairs).

        Also refreshes the import system's caches so new modules are found."""
        importlib.invalidate_caches()
        changed = []
        for path, content in files:
            if not path.endswith(".py"):
                continue
            name = module_name(path)
            module = sys.modules.get(name)
            if module is None or self._model_file(module) is None:
                continue
            if self._hashes.get(name) != hashlib.sha256(content).hexdigest():
                changed.append(name)
        return changed

    def _model_file(self, module) -> pathlib.Path | None:
        file = getattr(module, "__file__", None)
        if not file:
            return None
        path = pathlib.Path(file).resolve()
        return path if self.models_dir in path.parents else None


def module_name(path: str) -> str:
    """"pkg/mod.py" -> "pkg.mod"; a package's "__init__.py" names the package."""
    parts = list(pathlib.PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
