"""Reads a Python model from a class path for `dataclaycmd NewModel` without running any of it:
the sources are parsed with `ast` to find the dataClay classes, their fields and active methods."""
from __future__ import annotations

import ast
import pathlib

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.common import progress
from dataclay._internal.proto import common_pb2, logicmodule_pb2

MAX_FILE_BYTES = 16 << 20


def read_python_model(namespace: str, class_path: str) -> logicmodule_pb2.Model:
    """Every module under `class_path`, named by its path relative to it, and its dataClay classes."""
    root = pathlib.Path(class_path)
    if not root.is_dir():
        raise InvalidArgumentError(f"class_path {class_path!r} is not a directory")
    sources = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InvalidArgumentError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB")
        _check_layout(relative)
        sources[relative] = path.read_bytes()
    if not sources:
        raise InvalidArgumentError(f"no Python modules under {class_path!r}")
    with progress.bar("reading the model", total=len(sources), unit="module") as shown:
        trees = {}
        for relative, data in sources.items():
            trees[relative] = _parse(root / relative, data)
            shown.update()
    classes = _model_classes(trees)
    if not classes:
        raise InvalidArgumentError(f"no DataClayObject subclasses in the modules under {class_path!r}")
    model = logicmodule_pb2.Model(namespace=namespace, language=common_pb2.PYTHON)
    for relative, data in sources.items():
        model.files.add(path=relative.as_posix(), content=data)
    model.classes.extend(classes)
    return model


def module_name(relative: pathlib.PurePath) -> str:
    """`WordCount/classes.py` -> `WordCount.classes`; a package's `__init__.py` names the package."""
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _parse(path: pathlib.Path, data: bytes) -> ast.Module:
    try:
        return ast.parse(data, filename=str(path))
    except SyntaxError as e:
        raise InvalidArgumentError(f"{path}:{e.lineno}: {e.msg}; nothing was registered") from None
    except ValueError as e:
        raise InvalidArgumentError(f"{path}: {e}; nothing was registered") from None


# What a model class may derive from to be one, by qualified name; a base that no import names (a star
# import, say) counts when its bare name is DataClayObject.
ROOTS = {"dataclay.DataClayObject", "dataclay.StorageObject", "storage.api.StorageObject",
         "dataclay._internal.model.object.DataClayObject"}
# Packages of the client library itself: a model module there would shadow it, except dataClay 4's
# place for contributed models, dataclay.contrib.<name>
LIBRARY_PACKAGES = ("dataclay", "storage")
CONTRIB = ("dataclay", "contrib")


def _check_layout(relative: pathlib.PurePath) -> None:
    parts = relative.parts
    if parts[0] not in LIBRARY_PACKAGES and relative.stem not in LIBRARY_PACKAGES:
        return
    if parts[:2] == CONTRIB and len(parts) > 2 and parts[2] != "__init__.py":
        return
    raise InvalidArgumentError(
        f"{relative.as_posix()}: a model may not put modules in the client library's own package "
        f"'{parts[0].removesuffix('.py')}' (backends never load them from a model, so its objects could be stored but "
        f"never used): move the model to a package of its own, or, for dataClay 4's contributed models, under "
        f"dataclay/contrib/<name>/; nothing was registered")


def _imported_names(module: str, is_package: bool, tree: ast.Module) -> dict[str, str]:
    """Each name a module binds at top level to a class it defines or imports -> its qualified name."""
    names = {}
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".") if package else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join(filter(None, [".".join(base), source]))
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    names[top] = top
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = f"{module}.{node.name}"
    return names


def _qualified(expression: ast.expr, names: dict[str, str]) -> str | None:
    parts = []
    while isinstance(expression, ast.Attribute):
        parts.append(expression.attr)
        expression = expression.value
    if isinstance(expression, ast.Subscript):  # Generic[T]-style bases are not model roots
        return None
    if not isinstance(expression, ast.Name):
        return None
    parts.append(names.get(expression.id, expression.id))
    return ".".join(reversed(parts))


def _model_classes(trees: dict[pathlib.PurePath, ast.Module]) -> list[logicmodule_pb2.ClassDescription]:
    """Top-level classes deriving, directly or through other model classes, from DataClayObject; bases are
    resolved through each module's own imports, so a class is never taken for another of the same name."""
    candidates = []
    for relative, tree in trees.items():
        module = module_name(relative)
        names = _imported_names(module, relative.name == "__init__.py", tree)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                bases = {_qualified(base, names) for base in node.bases} - {None}
                candidates.append((module, node, f"{module}.{node.name}", bases))
    model_names = set(ROOTS) | {"DataClayObject"}
    changed = True
    while changed:
        changed = False
        for _, _, qualified, bases in candidates:
            if qualified not in model_names and model_names.intersection(bases):
                model_names.add(qualified)
                changed = True
    return [_describe(module, node) for module, node, qualified, _ in candidates if qualified in model_names]


def _describe(module: str, node: ast.ClassDef) -> logicmodule_pb2.ClassDescription:
    description = logicmodule_pb2.ClassDescription(name=f"{module}.{node.name}")
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            description.fields.add(name=item.target.id, type=ast.unparse(item.annotation))
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_active(item):
            description.methods.add(name=item.name, signature=f"{item.name}({ast.unparse(item.args)})")
    return description


def _is_active(node: ast.FunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name == "activemethod":
            return True
    return False
