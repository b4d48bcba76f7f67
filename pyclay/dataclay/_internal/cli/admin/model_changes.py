"""What re-registering a model changes, told to whoever registers it (`dataclaycmd NewModel`): classes added
and removed, fields added, removed and retyped, active methods added, removed and changed, each with what it
means for the objects already stored (docs/models.md). Works on the model descriptions the Logic Module keeps
(Python and Java alike); for Python, the new model's source says which added fields have a default."""
from __future__ import annotations

import ast
import pathlib

from dataclay.exceptions import DataClayException
from dataclay._internal.cli.admin.model_files import module_name
from dataclay._internal.proto import common_pb2, logicmodule_pb2


def registered(lm, namespace: str) -> logicmodule_pb2.Model | None:
    """The model registered under `namespace` now, if the caller may read it (None for a new namespace)."""
    try:
        model = lm.get_model(namespace)
    except DataClayException:
        return None
    return model if model.namespace else None


def describe_changes(old: logicmodule_pb2.Model, new: logicmodule_pb2.Model) -> list[str]:
    """One line per change from `old` (the registered model) to `new` (the one being registered)."""
    before = {c.name: c for c in old.classes}
    after = {c.name: c for c in new.classes}
    python = new.language == common_pb2.PYTHON
    defaults = _python_defaults(new) if python else {}
    lines = []
    for name in sorted(after.keys() - before.keys()):
        lines.append(f"class added: {name}")
    for name in sorted(before.keys() - after.keys()):
        lines.append(f"class removed: {name} (its stored objects stay, but no program can use them until a model "
                     f"with this class is registered again)")
    for name in sorted(before.keys() & after.keys()):
        lines.extend(_class_changes(name, before[name], after[name], defaults.get(name, set()), python))
    return lines


def _class_changes(name: str, old, new, defaults: set, python: bool) -> list[str]:
    lines = []
    old_fields = {f.name: f.type for f in old.fields}
    new_fields = {f.name: f.type for f in new.fields}
    for field in [f.name for f in new.fields if f.name not in old_fields]:
        typed = f"{field}: {new_fields[field]}" if new_fields[field] else field
        if field in defaults:
            outcome = "objects stored before read the class-level default"
        elif not python:
            outcome = "objects stored before have no stored value for it"
        else:
            outcome = ("objects stored before have no value for it: reading it raises AttributeError until it is "
                       "assigned; a class-level default (" + typed + " = ...) would give them one")
        lines.append(f"{name}: field added: {typed} ({outcome})")
    for field in [f.name for f in old.fields if f.name not in new_fields]:
        lines.append(f"{name}: field removed: {field} (objects stored before keep its value, unread by the new code)")
    for field in [f.name for f in new.fields if f.name in old_fields and old_fields[f.name] != new_fields[f.name]]:
        lines.append(f"{name}: field retyped: {field}: {old_fields[field] or '?'} -> {new_fields[field] or '?'} "
                     f"(stored values are not converted: objects stored before still hold the old type)")
    old_methods = {m.name: m.signature for m in old.methods}
    new_methods = {m.name: m.signature for m in new.methods}
    for method in [m.name for m in new.methods if m.name not in old_methods]:
        lines.append(f"{name}: method added: {new_methods[method]}")
    for method in [m.name for m in old.methods if m.name not in new_methods]:
        lines.append(f"{name}: method removed: {old_methods[method]} (calls to it now fail with "
                     f"MethodDoesNotExistError)")
    for method in [m.name for m in new.methods if m.name in old_methods and old_methods[m.name] != new_methods[m.name]]:
        lines.append(f"{name}: method changed: {old_methods[method]} -> {new_methods[method]}")
    return lines


def _python_defaults(model: logicmodule_pb2.Model) -> dict[str, set]:
    """"module.Class" -> the annotated fields its body gives a value (`unit: str = "kg"`)."""
    found: dict[str, set] = {}
    for file in model.files:
        try:
            tree = ast.parse(file.content)
        except (SyntaxError, ValueError):
            continue
        module = module_name(pathlib.PurePosixPath(file.path))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                found[f"{module}.{node.name}"] = {
                    item.target.id for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None}
    return found


def report(old: logicmodule_pb2.Model | None, new: logicmodule_pb2.Model) -> str:
    """The text NewModel adds for a namespace that was registered before ("" for a new one)."""
    if old is None or not old.namespace:
        return ""
    lines = describe_changes(old, new)
    if not lines:
        return f"\nno class, field or active method changed since version {old.version}"
    return f"\nchanges since version {old.version}:\n" + "\n".join(f"  {line}" for line in lines)
