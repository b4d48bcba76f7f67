"""Reads a Python model from a class path for `dataclaycmd NewModel` without running any of it:
the sources are parsed with `ast` to find the dataClay classes, their fields and active methods."""
from __future__ import annotations

import ast
import pathlib

from dataclay.exceptions import InvalidArgumentError
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
        sources[relative] = path.read_bytes()
    if not sources:
        raise InvalidArgumentError(f"no Python modules under {class_path!r}")
    trees = {relative: _parse(root / relative, data) for relative, data in sources.items()}
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


def _base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def _model_classes(trees: dict[pathlib.PurePath, ast.Module]) -> list[logicmodule_pb2.ClassDescription]:
    """Top-level classes deriving, directly or through other model classes, from DataClayObject."""
    candidates = [(module_name(rel), node) for rel, tree in trees.items()
                  for node in tree.body if isinstance(node, ast.ClassDef)]
    model_names = {"DataClayObject"}
    changed = True
    while changed:
        changed = False
        for _, node in candidates:
            if node.name not in model_names and model_names.intersection(_base_names(node)):
                model_names.add(node.name)
                changed = True
    return [_describe(module, node) for module, node in candidates if node.name in model_names]


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
