"""Reads a Java model for `dataclaycmd NewModel ... java` without running any of it: the class files
under a directory (or inside a jar) are sent as they are, and their headers are parsed to find the
DataClayObject subclasses with their persistent fields and methods."""
from __future__ import annotations

import pathlib
import struct
import zipfile

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.proto import common_pb2, logicmodule_pb2

MAX_FILE_BYTES = 16 << 20
BASE_CLASS = "io/dataclay/api/DataClayObject"
ACC_PUBLIC, ACC_PRIVATE, ACC_STATIC, ACC_TRANSIENT, ACC_SYNTHETIC, ACC_BRIDGE = 0x1, 0x2, 0x8, 0x80, 0x1000, 0x40
_PRIMITIVES = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "F": "float",
               "D": "double", "V": "void"}


class ClassFile:
    """What a class file's header says: its name, superclass, fields and methods (name, descriptor, flags)."""

    def __init__(self, name: str, super_name: str | None, fields: list, methods: list):
        self.name, self.super_name, self.fields, self.methods = name, super_name, fields, methods


def read_java_model(namespace: str, class_path: str) -> logicmodule_pb2.Model:
    """Every class file under `class_path` (a directory or a jar), named by its package path."""
    files = _class_files(pathlib.Path(class_path))
    if not files:
        raise InvalidArgumentError(f"no .class files under {class_path!r}")
    parsed = {}
    for path, data in files.items():
        parsed[path] = _parse(path, data)
    by_name = {c.name: c for c in parsed.values()}
    model_names = [name for name in by_name if _is_model(name, by_name)]
    if not model_names:
        raise InvalidArgumentError(f"no DataClayObject subclasses among the classes under {class_path!r} "
                                   f"(models extend io.dataclay.api.DataClayObject)")
    model = logicmodule_pb2.Model(namespace=namespace, language=common_pb2.JAVA)
    for path, data in sorted(files.items()):
        model.files.add(path=path, content=data)
    for name in sorted(model_names):
        model.classes.append(_describe(by_name[name]))
    return model


def _class_files(root: pathlib.Path) -> dict[str, bytes]:
    if root.is_dir():
        out = {}
        for path in sorted(root.rglob("*.class")):
            relative = path.relative_to(root).as_posix()
            if path.stat().st_size > MAX_FILE_BYTES:
                raise InvalidArgumentError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB")
            if not relative.endswith(("module-info.class", "package-info.class")):
                out[relative] = path.read_bytes()
        return out
    if root.is_file() and zipfile.is_zipfile(root):
        out = {}
        with zipfile.ZipFile(root) as jar:
            for entry in jar.infolist():
                name = entry.filename
                if entry.is_dir() or not name.endswith(".class") or name.startswith("META-INF/"):
                    continue
                if name.endswith(("module-info.class", "package-info.class")):
                    continue
                if entry.file_size > MAX_FILE_BYTES:
                    raise InvalidArgumentError(f"{root}!{name} is larger than {MAX_FILE_BYTES >> 20} MiB")
                if name.startswith("/") or ".." in name.split("/"):
                    raise InvalidArgumentError(f"{root} has an entry with an unsafe path: {name!r}")
                out[name] = jar.read(entry)
        return out
    raise InvalidArgumentError(f"class_path {str(root)!r} is neither a directory nor a jar")


def _is_model(name: str, by_name: dict) -> bool:
    seen = set()
    current = by_name.get(name)
    while current is not None and current.name not in seen:
        seen.add(current.name)
        if current.super_name == BASE_CLASS:
            return True
        current = by_name.get(current.super_name)
    return False


def _describe(c: ClassFile) -> logicmodule_pb2.ClassDescription:
    description = logicmodule_pb2.ClassDescription(name=c.name.replace("/", "."))
    for name, descriptor, flags in c.fields:
        if not flags & (ACC_STATIC | ACC_TRANSIENT | ACC_SYNTHETIC):
            description.fields.add(name=name, type=java_type(descriptor))
    for name, descriptor, flags in c.methods:
        if name.startswith("<") or flags & (ACC_STATIC | ACC_PRIVATE | ACC_SYNTHETIC | ACC_BRIDGE):
            continue
        description.methods.add(name=name, signature=name + descriptor)
    return description


def java_type(descriptor: str) -> str:
    """`[Ljava/lang/String;` -> `java.lang.String[]`."""
    dims = len(descriptor) - len(descriptor.lstrip("["))
    element = descriptor[dims:]
    base = _PRIMITIVES.get(element) or element[1:-1].replace("/", ".")
    return base + "[]" * dims


def _parse(path: str, data: bytes) -> ClassFile:
    """Reads the constant pool and the field and method tables of a class file."""
    try:
        return _parse_unchecked(data)
    except (struct.error, IndexError, KeyError, UnicodeDecodeError, ValueError) as e:
        raise InvalidArgumentError(f"{path} is not a valid class file ({e}); nothing was registered") from None


def _parse_unchecked(data: bytes) -> ClassFile:
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ValueError("bad magic number")
    pos = 8
    (count,) = struct.unpack_from(">H", data, pos)
    pos += 2
    utf8, classes = {}, {}
    index = 1
    while index < count:
        tag = data[pos]
        pos += 1
        if tag == 1:
            (length,) = struct.unpack_from(">H", data, pos)
            utf8[index] = data[pos + 2:pos + 2 + length].decode("utf-8", errors="surrogatepass")
            pos += 2 + length
        elif tag == 7:
            (classes[index],) = struct.unpack_from(">H", data, pos)
            pos += 2
        elif tag in (8, 16, 19, 20):
            pos += 2
        elif tag == 15:
            pos += 3
        elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
            pos += 4
        elif tag in (5, 6):
            pos += 8
            index += 1
        else:
            raise ValueError(f"unknown constant pool tag {tag}")
        index += 1
    _access, this_class, super_class, interfaces = struct.unpack_from(">HHHH", data, pos)
    pos += 8 + 2 * interfaces
    name = utf8[classes[this_class]]
    super_name = utf8[classes[super_class]] if super_class else None
    fields, pos = _members(data, pos, utf8)
    methods, pos = _members(data, pos, utf8)
    return ClassFile(name, super_name, fields, methods)


def _members(data: bytes, pos: int, utf8: dict) -> tuple[list, int]:
    (count,) = struct.unpack_from(">H", data, pos)
    pos += 2
    out = []
    for _ in range(count):
        flags, name_index, descriptor_index, attributes = struct.unpack_from(">HHHH", data, pos)
        pos += 8
        for _ in range(attributes):
            (length,) = struct.unpack_from(">I", data, pos + 2)
            pos += 6 + length
        out.append((utf8[name_index], utf8[descriptor_index], flags))
    return out, pos
