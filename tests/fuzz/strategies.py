"""Hypothesis strategies built from the protobuf descriptors: for any request type, messages whose
every field is drawn from values that tend to break servers (edges of integer ranges, enum numbers
outside the enum, empty/huge/odd/UUID-like strings, crafted payloads in bytes fields, repeated
fields with thousands of entries), mixed with the prepared world's real IDs and names so that some
messages pass the first checks and reach deeper code."""
from __future__ import annotations

import uuid

from google.protobuf import descriptor as d
from hypothesis import strategies as st

from dataclay._internal.rpc.framing import LENGTH_DELIMITED, delimit, tag

INT_EDGES = [0, 1, -1, 2, 7, 127, 128, 255, 256, 65535, 65536, 2**31 - 1, -2**31, 2**32 - 1, 2**53,
              2**63 - 1, -2**63, 10**12, 1_700_000_000_000]
ODD_STRINGS = [
    "", " ", "\x00", "\n", "a" * 65, "a" * 257, "x" * 5000, "x" * 300_000, "../../../../etc/passwd", "/abs/path",
    "pkg/../escape.py", "C:\\windows", "%s%n%x%d", "${jndi:ldap://127.0.0.1/x}", "'; DROP TABLE objects; --",
    "\u202egnp.exe", "ünïcödé", "😀" * 20, "\ufeff", "people.model.Counter", "fuzzjava.Vault", "java.lang.ProcessBuilder",
    "os.system", "builtins.eval", "__init__", "__class__", "_dc_id", "<lambda>", "size(I)I", "describe(Ljava/lang/Object;)",
    "increment", "value", "kept", "tests", "fuzzjava", "admin", "fuzz-user", "_dataclay_backends", "_dataclay_system",
    "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "ffffffffffffffffffffffffffffffff",
    "gggggggg-gggg-gggg-gggg-gggggggggggg", "{12345678-1234-1234-1234-123456789abc}",
    "12345678-1234-1234-1234-123456789abc ", "urn:uuid:12345678-1234-1234-1234-123456789abc",
    "127.0.0.1", "localhost", "0.0.0.0", "[::1]", "256.256.256.256", "kv", "memory",
]


def uuid_like() -> st.SearchStrategy[str]:
    """UUIDs and near-UUIDs: canonical, upper-case, without dashes, truncated, with a bad digit."""
    base = st.uuids().map(str)
    return st.one_of(
        base, base.map(str.upper), base.map(lambda u: u.replace("-", "")), base.map(lambda u: u[:-1]),
        base.map(lambda u: u + "0"), base.map(lambda u: u[:8] + "x" + u[9:]), base.map(lambda u: " " + u))


class Context:
    """Real names of the prepared world that generated messages may use."""

    def __init__(self, ids: list[str], names: list[str], payloads: list[bytes]):
        self.ids = ids or [str(uuid.uuid4())]
        self.names = names or ["x"]
        self.payloads = payloads or [b""]


def _repeated(part: st.SearchStrategy, kind) -> st.SearchStrategy:
    """Long values made cheaply: a short drawn part repeated 30-3000 times (Hypothesis draws long
    values one element at a time, which costs more than sending them)."""
    return st.tuples(part, st.integers(30, 3000)).map(lambda t: t[0] * t[1])


def _string(ctx: Context, big: bool) -> st.SearchStrategy[str]:
    odd = ODD_STRINGS if big else [s for s in ODD_STRINGS if len(s) <= 300]
    common = [st.text(max_size=40), st.sampled_from(odd), uuid_like(), st.sampled_from(ctx.ids), st.sampled_from(ctx.names)]
    return st.one_of(*common, _repeated(st.text(min_size=1, max_size=6), str)) if big else st.one_of(*common)


def _bytes(ctx: Context, big: bool) -> st.SearchStrategy[bytes]:
    common = [st.binary(max_size=64), st.sampled_from(ctx.payloads)]
    if not big:
        return st.one_of(*common)
    return st.one_of(*common, _repeated(st.binary(min_size=1, max_size=6), bytes), st.just(b"\x00" * 1_000_000))


def _scalar(field: d.FieldDescriptor, ctx: Context, big: bool = False) -> st.SearchStrategy:
    """Values of a non-message field; `big`: long strings and bytes too (not for elements that
    may be repeated thousands of times)."""
    t = field.type
    if t == d.FieldDescriptor.TYPE_STRING:
        return _string(ctx, big)
    if t == d.FieldDescriptor.TYPE_BYTES:
        return _bytes(ctx, big)
    if t == d.FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if t == d.FieldDescriptor.TYPE_ENUM:
        numbers = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(numbers), st.sampled_from([-1, max(numbers) + 1, 2**31 - 1, -2**31]))
    if t in (d.FieldDescriptor.TYPE_INT32, d.FieldDescriptor.TYPE_SINT32, d.FieldDescriptor.TYPE_SFIXED32):
        return st.one_of(st.sampled_from([v for v in INT_EDGES if -2**31 <= v < 2**31]),
                         st.integers(-2**31, 2**31 - 1))
    if t in (d.FieldDescriptor.TYPE_INT64, d.FieldDescriptor.TYPE_SINT64, d.FieldDescriptor.TYPE_SFIXED64):
        return st.one_of(st.sampled_from(INT_EDGES), st.integers(-2**63, 2**63 - 1))
    if t in (d.FieldDescriptor.TYPE_UINT32, d.FieldDescriptor.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if t in (d.FieldDescriptor.TYPE_UINT64, d.FieldDescriptor.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    if t in (d.FieldDescriptor.TYPE_DOUBLE, d.FieldDescriptor.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32 if t == d.FieldDescriptor.TYPE_FLOAT else 64)
    raise TypeError(f"no strategy for field type {t} of {field.full_name}")


def _value(field: d.FieldDescriptor, ctx: Context, depth: int, big: bool) -> st.SearchStrategy:
    if field.type == d.FieldDescriptor.TYPE_MESSAGE:
        return message_dicts(field.message_type, ctx, depth + 1, big)
    return _scalar(field, ctx, big)


def _is_map(field: d.FieldDescriptor) -> bool:
    return (field.type == d.FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry)


def _field(field: d.FieldDescriptor, ctx: Context, depth: int, big: bool) -> st.SearchStrategy:
    if _is_map(field):
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        return st.dictionaries(_scalar(key, ctx), _value(value, ctx, depth, False), max_size=5)
    if field.is_repeated:
        element = _value(field, ctx, depth, False)
        few = st.lists(element, max_size=4)
        # thousands of copies of one element: cheap to build, costly to a server that does not bound them
        many = st.tuples(element, st.sampled_from([1000, 5000, 20_000])).map(lambda t: [t[0]] * t[1])
        # only at the top level: thousands of messages each with thousands of entries would cost
        # this process more than the server
        return st.one_of(few, few, few, many) if depth == 0 else few
    return _value(field, ctx, depth, big)


def message_dicts(descriptor: d.Descriptor, ctx: Context, depth: int = 0, big: bool = True) -> st.SearchStrategy[dict]:
    """Dicts of field values for `descriptor` (each field present or not), nested messages included."""
    if depth > 3:
        return st.just({})
    return st.fixed_dictionaries({}, optional={f.name: _field(f, ctx, depth, big) for f in descriptor.fields})


def _fill(message, values: dict) -> None:
    for name, value in values.items():
        field = message.DESCRIPTOR.fields_by_name[name]
        target = getattr(message, name)
        if _is_map(field):
            sub = field.message_type.fields_by_name["value"]
            for k, v in value.items():
                if sub.type == d.FieldDescriptor.TYPE_MESSAGE:
                    _fill(target[k], v)
                else:
                    target[k] = v
        elif field.is_repeated:
            if field.type == d.FieldDescriptor.TYPE_MESSAGE:
                for v in value:
                    _fill(target.add(), v)
            else:
                target.extend(value)
        elif field.type == d.FieldDescriptor.TYPE_MESSAGE:
            _fill(target, value)
        else:
            setattr(message, name, value)


def unknown_fields() -> st.SearchStrategy[bytes]:
    """Fields the schema does not have: a tag of any number and wire type, then what that type carries."""
    def encode(t: tuple) -> bytes:
        number, wire, body = t
        return tag(number, wire) + (delimit(body) if wire == LENGTH_DELIMITED else body)
    return st.tuples(st.integers(1, 2**29 - 1), st.sampled_from([0, 1, 2, 5]), st.binary(max_size=16)).map(encode)


def requests(message_class, ctx: Context) -> st.SearchStrategy[bytes]:
    """Serialised requests of `message_class`, every field drawn as above, sometimes followed by
    fields the schema does not know."""
    def build(values: dict) -> bytes:
        m = message_class()
        _fill(m, values)
        return m.SerializeToString()
    extra = st.one_of(st.just(b""), st.just(b""), unknown_fields())
    return st.tuples(message_dicts(message_class.DESCRIPTOR, ctx).map(build), extra).map(lambda t: t[0] + t[1])
