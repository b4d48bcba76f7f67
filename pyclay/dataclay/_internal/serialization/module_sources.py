"""Where the import system would load a dotted module from, found without importing or running
anything: each level ("a", "a.b", "a.b.c") is either imported already, or located by the finders
of sys.meta_path in its parent's search path, exactly as `import a.b.c` would look for it.

The policies use this to decide about a module by what would run, before anything runs. A package
`__init__` of a level found acceptable does run when the level below is imported: that is code of
the same model (or the same allowed source), chosen by whoever accepted the model."""
from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import pathlib
import site
import sys
import sysconfig
from typing import NamedTuple


class Level(NamedTuple):
    """One level of a dotted module name and what importing it would run."""

    name: str
    loaded: bool               # already in sys.modules: importing it again runs nothing
    origin: pathlib.Path | None  # the source file that runs (None: already loaded, or a namespace package)
    locations: tuple           # where its submodules are searched (empty: not a package)
    plain_source: bool         # loaded by the standard source-file loader (or a namespace package: no code)

    @property
    def is_package(self) -> bool:
        """Whether submodules are searched under it."""
        return bool(self.locations)


def levels(module: str) -> list[Level] | None:
    """Each level of `module`, outermost first; None when some level cannot be found (or the name is malformed)."""
    if not dotted(module):
        return None
    found: list[Level] = []
    search = None
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        level = _loaded(name) if name in sys.modules else _unloaded(name, search)
        if level is None:
            return None
        found.append(level)
        search = [str(p) for p in level.locations]
        if depth < len(parts) and not search:
            return None  # "a.b" where "a" is not a package: no import would find it
    return found


def dotted(name: str) -> bool:
    """Whether `name` is a dotted name of identifiers ("a.b.c")."""
    return isinstance(name, str) and bool(name) and all(part.isidentifier() for part in name.split("."))


def installed(path: pathlib.Path) -> bool:
    """Whether `path` is inside this Python's own installation: its standard library or a site-packages
    directory (where pip puts distributions), as opposed to a directory someone put on the path."""
    resolved = path.resolve()
    return any(resolved == root or root in resolved.parents for root in _installation_dirs())


@functools.cache
def _installation_dirs() -> tuple:
    paths = sysconfig.get_paths()
    found = [paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    found += list(getattr(site, "getsitepackages", lambda: [])()) + [site.getusersitepackages()]
    return tuple(dict.fromkeys(pathlib.Path(p).resolve() for p in found if p))


def sha256_of(path: pathlib.Path) -> str | None:
    """The SHA-256 (hex) of a file's bytes; None if it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _loaded(name: str) -> Level | None:
    module = sys.modules.get(name)
    if module is None:
        return None
    file = getattr(module, "__file__", None)
    locations = tuple(pathlib.Path(p) for p in (getattr(module, "__path__", None) or ()) if isinstance(p, str))
    return Level(name, True, pathlib.Path(file) if isinstance(file, str) else None, locations, True)


def _unloaded(name: str, search) -> Level | None:
    spec = _find_spec(name, search)
    if spec is None:
        return None
    locations = tuple(pathlib.Path(p) for p in (spec.submodule_search_locations or ()) if isinstance(p, str))
    if spec.origin is None or not spec.has_location:
        # a namespace package has no code to run; anything else without a file (built-in, frozen) is not
        # plain source
        namespace = spec.submodule_search_locations is not None and spec.origin in (None, "namespace")
        return Level(name, False, None, locations, namespace)
    plain = type(spec.loader) is importlib.machinery.SourceFileLoader
    return Level(name, False, pathlib.Path(spec.origin), locations, plain)


def _find_spec(name: str, search):
    """The spec the import system would use for `name` (in `search`, its parent's path), asking the
    finders of sys.meta_path in order as the import does; finders locate, they run no module code."""
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(name, search)
        except (ImportError, OSError, ValueError):
            return None
        if spec is not None:
            return spec
    return None
