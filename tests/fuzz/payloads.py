"""The crafted payload corpus: pickles that would run code, allocate without bound, reference other
datasets' objects or break the decoder, and Kryo payloads naming disallowed classes, out-of-range
class IDs, lengths beyond the payload and deep nesting. Built from raw opcodes, never by pickling
a real dangerous object here (so building the corpus runs nothing either).

`must_refuse` marks the payloads a backend must refuse when it decodes them (SERIALIZATION_ERROR,
or another typed refusal): whatever it does, a payload never creates the marker file."""
from __future__ import annotations

import dataclasses
import pickle
import struct

from dataclay._internal.rpc.framing import encode_varint as varint


@dataclasses.dataclass(frozen=True)
class Payload:
    """One crafted value: `name` says what it tries."""
    name: str
    data: bytes
    must_refuse: bool = True


# ---- pickles --------------------------------------------------------------------------------

def _global0(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def _str0(text: str) -> bytes:
    return b"S" + repr(text).encode() + b"\n"


def _unicode(text: str) -> bytes:
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def _stack_global(module: str, name: str) -> bytes:
    return _unicode(module) + _unicode(name) + b"\x93"


def _as_args(value_ops: bytes) -> bytes:
    """Wraps the opcodes of one value into method arguments ((value,), {})."""
    return b"\x80\x04" + value_ops + b"\x85}\x86."


# Callables that would run code or touch the system, by the names an attacker would use.
_CODE_RUNNERS = [
    ("os", "system"), ("posix", "system"), ("nt", "system"), ("subprocess", "Popen"),
    ("subprocess", "call"), ("subprocess", "check_output"), ("builtins", "eval"), ("builtins", "exec"),
    ("builtins", "__import__"), ("builtins", "open"), ("builtins", "compile"), ("builtins", "getattr"),
    ("builtins", "setattr"), ("builtins", "type"), ("builtins", "globals"), ("importlib", "import_module"),
    ("pickle", "loads"), ("_pickle", "loads"), ("marshal", "loads"), ("runpy", "_run_code"),
    ("pty", "spawn"), ("functools", "partial"), ("operator", "attrgetter"), ("operator", "methodcaller"),
    ("copyreg", "_reconstructor"), ("ctypes", "CDLL"), ("sys", "exit"), ("os", "_exit"),
    ("shutil", "rmtree"), ("code", "interact"), ("people.model", "os.system"),
    ("people.model", "Person.birthday"), ("people.model", "activemethod"), ("builtins", "dict.fromkeys"),
    ("builtins", "__builtins__"), ("dataclay._internal.ee.main", "main"), ("os.path", "join"),
]


def crafted_pickles(marker: str, other_object: tuple[str, str]) -> list[Payload]:
    """Pickles (each a whole value) that must not run code; `marker` is the file a successful
    attack would create, `other_object` (id, class name) an object of a dataset the caller may not read."""
    touch = f"touch {marker}"
    out: list[Payload] = []
    for module, name in _CODE_RUNNERS:
        tag = f"{module}.{name}"
        out.append(Payload(f"GLOBAL+REDUCE {tag}", _global0(module, name) + b"(" + _str0(touch) + b"tR."))
        out.append(Payload(f"STACK_GLOBAL+REDUCE {tag}",
                           b"\x80\x04" + _stack_global(module, name) + _unicode(touch) + b"\x85R."))
        out.append(Payload(f"INST {tag}", b"(" + _str0(touch) + b"i" + module.encode() + b"\n" + name.encode()
                           + b"\n."))
        out.append(Payload(f"OBJ {tag}", b"(" + _global0(module, name) + _str0(touch) + b"o."))
        out.append(Payload(f"NEWOBJ {tag}", b"\x80\x02" + _global0(module, name) + _str0(touch) + b"\x85\x81."))
    out += [
        Payload("NEWOBJ_EX builtins.type", b"\x80\x04" + _stack_global("builtins", "type")
                + _unicode("X") + b")}\x87}\x92."),
        Payload("eval via getattr chain", _global0("builtins", "getattr") + b"(" + _global0("builtins", "__import__")
                + b"(" + _str0("os") + b"tR" + _str0("system") + b"tR(" + _str0(touch) + b"tR."),
        Payload("BUILD __class__ swap on a safe type", b"\x80\x02" + _global0("collections", "OrderedDict")
                + b")RN}" + _str0("__class__") + _global0("builtins", "dict") + b"s\x86b."),
        Payload("BUILD unknown fields on a model class", b"\x80\x04"
                + _stack_global("dataclay._internal.model.object", "rebuild_volatile")
                + _stack_global("people.model", "Counter") + b"\x85R}" + _unicode("_dc_id")
                + _unicode(other_object[0]) + b"s" + b"b."),
        Payload("rebuild_volatile of a non-dataClay class", b"\x80\x04"
                + _stack_global("dataclay._internal.model.object", "rebuild_volatile")
                + _stack_global("collections", "OrderedDict") + b"\x85R."),
        Payload("EXT1 unregistered extension", b"\x80\x02\x82\x01."),
        Payload("EXT4 huge extension code", b"\x80\x02\x84\xff\xff\xff\x7f."),
        Payload("unsupported protocol", b"\x80\x09N."),
        Payload("empty", b""),
        Payload("STOP only", b"."),
        Payload("bad opcode", b"\x80\x05\xff."),
        Payload("MARK underflow", b"t."),
        Payload("memo get of nothing", b"\x80\x02h\x05."),
        Payload("long memo get", b"\x80\x02j\xff\xff\xff\xff."),
        # lengths beyond the payload
        Payload("BINUNICODE8 claims 2^62 bytes", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 62) + b"abc."),
        Payload("BINBYTES8 claims 2^62 bytes", b"\x80\x04\x8e" + struct.pack("<Q", 1 << 62) + b"abc."),
        Payload("BYTEARRAY8 claims 2^62 bytes", b"\x80\x05\x96" + struct.pack("<Q", 1 << 62) + b"abc."),
        Payload("FRAME claims 2^62 bytes", b"\x80\x04\x95" + struct.pack("<Q", 1 << 62) + b"N."),
        Payload("LONG4 claims 2^31-1 bytes", b"\x80\x02\x8b" + struct.pack("<i", 2**31 - 1) + b"\x01."),
        Payload("BINSTRING claims 2^31-1 bytes", b"T" + struct.pack("<i", 2**31 - 1) + b"ab."),
        Payload("BINUNICODE claims 2^32-1 bytes", b"X" + struct.pack("<I", 2**32 - 1) + b"ab."),
        Payload("negative BINSTRING length", b"T" + struct.pack("<i", -5) + b"ab."),
        # allowed constructors asked for impossible sizes (larger than any machine: refused at once)
        Payload("bytearray(2^45)", _global0("builtins", "bytearray") + b"(I35184372088832\ntR."),
        Payload("bytes(2^45)", _global0("builtins", "bytes") + b"(I35184372088832\ntR."),
        Payload("huge int from text", _global0("builtins", "int") + b"(" + _str0("9" * 100_000) + b"tR."),
        Payload("invalid UTF-8 in BINUNICODE", b"\x80\x04X\x02\x00\x00\x00\xff\xfe."),
        # persistent IDs: another dataset's object, and malformed references
        Payload("persistent ID of another dataset's object", b"\x80\x04(" + _unicode("dc")
                + _unicode(other_object[0]) + _unicode(other_object[1]) + _unicode("") + b"tQ.", must_refuse=False),
        Payload("list holding another dataset's object", b"\x80\x04](" + _unicode("dc") + _unicode(other_object[0])
                + _unicode(other_object[1]) + _unicode("") + b"tQa.", must_refuse=False),
        Payload("persistent ID naming os.system", b"\x80\x04(" + _unicode("dc") + _unicode(other_object[0])
                + _unicode("os.system") + _unicode("") + b"tQ."),
        Payload("persistent ID with a bad object ID", b"\x80\x04(" + _unicode("dc") + _unicode("not-a-uuid")
                + _unicode(other_object[1]) + _unicode("") + b"tQ."),
        Payload("persistent ID of the wrong shape", b"\x80\x04(" + _unicode("dc") + b"tQ."),
        Payload("persistent ID that is an int", b"\x80\x04K*Q."),
        Payload("text persistent ID", b"Pdc\n."),
    ]
    # deep nesting: lists nested 100,000 deep (built iteratively by the unpickler)
    depth = 100_000
    out.append(Payload("lists nested 100,000 deep", b"(" * depth + b"l" * depth + b".", must_refuse=False))
    out.append(Payload("MARK flood", b"(" * 200_000 + b"N.", must_refuse=False))
    # truncations of a valid value
    valid = pickle.dumps({"a": [1, 2.5, "x" * 40], "b": (b"raw", None)}, protocol=5)
    for cut in sorted({1, 2, 3, 5, 8, 13, len(valid) // 2, len(valid) - 2, len(valid) - 1}):
        out.append(Payload(f"truncated at {cut}/{len(valid)}", valid[:cut]))
    return out


def as_arguments(p: Payload) -> Payload:
    """The same payload as method arguments: the pickle of ((value,), {}) around its opcodes (the
    value's own PROTO and STOP dropped), or the bytes as they are when they are not one whole value."""
    body = p.data
    if body.startswith(b"\x80") and len(body) >= 2:
        body = body[2:]
    if not body.endswith(b".") or p.name.startswith(("truncated", "empty", "STOP only", "MARK underflow")):
        return p
    return Payload(p.name, _as_args(body[:-1]), p.must_refuse)


# ---- Kryo -----------------------------------------------------------------------------------
# Kryo 5 as dataClay's codec configures it (javaclay CodecKryo): class IDs are varints of the
# registration number + 2 (0 null, 1 "a class name follows"); every object is preceded by a
# reference marker (1: a new object); Object[] is number 20 (0x16 on the wire), byte[] 21 (0x17).
# Kryo's positive varint is protobuf's (LEB128): `varint` below is framing.encode_varint.


def kryo_ascii(text: str) -> bytes:
    """A Kryo ASCII string: its bytes with the last one's high bit set."""
    raw = bytearray(text.encode("ascii"))
    raw[-1] |= 0x80
    return bytes(raw)


def kryo_args(*encoded_elements: bytes) -> bytes:
    """The encoding of an Object[] holding already-encoded elements (method arguments)."""
    return b"\x16\x01" + varint(len(encoded_elements) + 1) + b"".join(encoded_elements)


def kryo_named(class_name: str) -> bytes:
    """A class written by name (as Kryo writes a model class), followed by a new-object marker."""
    return b"\x01\x00" + kryo_ascii(class_name) + b"\x01"


def kryo_string(text: str) -> bytes:
    """A String element."""
    return b"\x03\x01" + kryo_ascii(text)


def kryo_model_ref(class_name: str, object_id: str) -> bytes:
    """A reference to a model object: its class by name, its ID (two longs), no backend hint."""
    import uuid
    u = uuid.UUID(object_id)
    msb, lsb = u.int >> 64, u.int & ((1 << 64) - 1)
    return kryo_named(class_name) + struct.pack(">QQ", msb, lsb) + b"\x00"


_DISALLOWED_CLASSES = [
    "java.lang.ProcessBuilder", "javax.script.ScriptEngineManager", "java.lang.Runtime", "java.lang.Thread",
    "java.lang.Class", "java.lang.ClassLoader", "java.net.URLClassLoader", "java.net.URL", "java.io.File",
    "java.io.FileOutputStream", "java.lang.reflect.Method", "java.lang.invoke.MethodHandle",
    "java.util.PriorityQueue", "java.util.concurrent.ConcurrentHashMap", "javax.naming.InitialContext",
    "com.sun.rowset.JdbcRowSetImpl", "sun.misc.Unsafe", "jdk.internal.misc.Unsafe",
    "io.dataclay.ds.DataServiceMain", "io.dataclay.ds.store.kv.KvStore",
    "org.codehaus.groovy.runtime.MethodClosure", "[Ljava.lang.ProcessBuilder;", "fuzzjava.Vault$Missing",
    "java.lang.ProcessBuilder\u0001", "x" * 100_000,
]


def crafted_kryo(valid_args: bytes, other_vault: str) -> list[Payload]:
    """Kryo payloads (method arguments or field values) that must be refused without running or
    allocating anything; `valid_args` is a valid encoding to truncate, `other_vault` the ID of a
    vault in a dataset the caller may not read."""
    out = [Payload(f"class name {name[:60]}", kryo_args(kryo_named(name) + b"\x00" * 8))
           for name in _DISALLOWED_CLASSES]
    out.append(Payload("class name as UTF-8 string", kryo_args(
        b"\x01\x00" + bytes([0x80 | 0x19]) + "java.lang.ProcessBuilder".encode() + b"\x01")))
    out.append(Payload("class name ID never defined", kryo_args(b"\x01\x07\x01")))
    for class_id in (10, 11, 19, 42, 43, 127, 128, 1000, 2**31 - 1, 2**32 - 1):
        out.append(Payload(f"class ID {class_id}", kryo_args(varint(class_id) + b"\x01\x00\x00")))
    claims = {
        "byte[] of 2^30": b"\x17\x01" + varint(2**30 + 1) + b"\x00",
        "Object[] of 2^31-2": b"\x16\x01" + varint(2**31 - 1),
        "int[] of 2^30": b"\x18\x01" + varint(2**30 + 1) + b"\x00",
        "long[] of 2^28": b"\x19\x01" + varint(2**28 + 1) + b"\x00",
        "String[] of 2^30": b"\x1f\x01" + varint(2**30 + 1),
        "ArrayList of 2^30": b"\x20\x01" + varint(2**30),
        "HashMap of 2^30": b"\x21\x01" + varint(2**30),
        "TreeSet of 2^30": b"\x27\x01\x00" + varint(2**30),
        "BigInteger of 2^30 bytes": b"\x29\x01" + varint(2**30 + 1) + b"\x01",
        "String of 2^31 UTF-8 chars": b"\x03\x01\xff\xff\xff\xff\x0f" + b"ab",
        "back-reference to object 2^31": b"\x03" + varint(2**31),
    }
    for name, element in claims.items():
        out.append(Payload(f"length claim: {name}", kryo_args(element)))
        out.append(Payload(f"bare value: {name}", element))
    depth = 100_000
    out.append(Payload("Object[] nested 100,000 deep", b"\x16\x01\x02" * depth + b"\x00"))
    out.append(Payload("ArrayList nested 3,000 deep (decodes; printing it recurses)",
                       kryo_args(b"\x20\x01\x01" * 3000 + b"\x00"), must_refuse=False))
    out.append(Payload("ArrayList nested 100,000 deep", kryo_args(b"\x20\x01\x01" * depth + b"\x00")))
    out.append(Payload("trailing bytes", valid_args + b"\x00\x00"))
    out.append(Payload("empty", b""))
    for cut in sorted({1, 2, 3, len(valid_args) // 2, len(valid_args) - 1}):
        out.append(Payload(f"truncated at {cut}/{len(valid_args)}", valid_args[:cut]))
    out.append(Payload("reference to another dataset's vault", kryo_args(kryo_model_ref("fuzzjava.Vault", other_vault)),
                       must_refuse=False))
    out.append(Payload("model reference of a disallowed class",
                       kryo_args(kryo_model_ref("java.lang.ProcessBuilder", other_vault))))
    return out
