"""Mutations of recorded valid messages: byte-level (what a broken or hostile peer puts on the
wire: flipped bits, lying lengths, cut messages, spliced fields) and field-level (a well-formed
message with one value replaced by an edge case or by a real name of another object, account or
dataset: what reaches the code behind the parser)."""
from __future__ import annotations

import random

from google.protobuf import descriptor as d

from dataclay._internal.rpc.framing import encode_varint
from fuzz.strategies import INT_EDGES, ODD_STRINGS

_INTERESTING_BYTES = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x1A, 0x22, 0x08]


class Mutator:
    """Mutates seeds with its own random stream; `ids` and `names` are real values of the prepared
    world (object IDs, accounts, datasets, aliases) that a field may be swapped to."""

    def __init__(self, rng: random.Random, ids: list[str], names: list[str], payloads: list[bytes]):
        self.rng = rng
        self.ids = ids
        self.names = names
        self.payloads = payloads

    # ---- bytes --------------------------------------------------------------------------------

    def mutate_bytes(self, data: bytes, other: bytes = b"") -> bytes:
        """One to four byte-level changes of a serialised message (`other`: a seed to splice from)."""
        out = bytearray(data)
        for _ in range(self.rng.randint(1, 4)):
            out = bytearray(self.rng.choice(self._BYTE_OPS)(self, out, other))
        return bytes(out)

    def _flip(self, b: bytearray, _other: bytes) -> bytearray:
        if b:
            i = self.rng.randrange(len(b))
            b[i] ^= 1 << self.rng.randrange(8)
        return b

    def _set_byte(self, b: bytearray, _other: bytes) -> bytearray:
        if b:
            b[self.rng.randrange(len(b))] = self.rng.choice(_INTERESTING_BYTES)
        return b

    def _insert(self, b: bytearray, _other: bytes) -> bytearray:
        i = self.rng.randint(0, len(b))
        return b[:i] + bytearray(self.rng.randbytes(self.rng.randint(1, 16))) + b[i:]

    def _delete(self, b: bytearray, _other: bytes) -> bytearray:
        if len(b) < 2:
            return b
        i = self.rng.randrange(len(b))
        return b[:i] + b[i + self.rng.randint(1, min(16, len(b) - i)):]

    def _duplicate(self, b: bytearray, _other: bytes) -> bytearray:
        if not b:
            return b
        i = self.rng.randrange(len(b))
        j = min(len(b), i + self.rng.randint(1, 64))
        return b[:j] + b[i:j] * self.rng.choice([1, 2, 50]) + b[j:]

    def _truncate(self, b: bytearray, _other: bytes) -> bytearray:
        return b[:self.rng.randint(0, len(b))]

    def _lying_length(self, b: bytearray, _other: bytes) -> bytearray:
        """A length-delimited field (wire type 2) whose length says more or less than follows."""
        starts = [i for i in range(len(b) - 1) if b[i] & 0x07 == 2]
        if not starts:
            return b
        i = self.rng.choice(starts)
        claim = self.rng.choice([0, 1, 127, 128, 2**14, 2**21, 2**28, 2**31 - 1, 2**32 - 1, 2**63])
        return b[:i + 1] + bytearray(encode_varint(claim)) + b[i + 2:]

    def _splice(self, b: bytearray, other: bytes) -> bytearray:
        if not other:
            return b
        i, j = self.rng.randint(0, len(b)), self.rng.randint(0, len(other))
        return b[:i] + bytearray(other[j:])

    def _overlong_varint(self, b: bytearray, _other: bytes) -> bytearray:
        """A tag or value varint of 11 bytes (more than any varint may have)."""
        i = self.rng.randint(0, len(b))
        return b[:i] + bytearray(b"\xff" * 10 + b"\x01") + b[i:]

    _BYTE_OPS = [_flip, _set_byte, _insert, _delete, _duplicate, _truncate, _lying_length, _splice, _overlong_varint]

    # ---- fields -------------------------------------------------------------------------------

    def mutate_fields(self, message) -> bytes:
        """A copy of `message` (a protobuf message) with one to three values replaced, serialised."""
        m = type(message)()
        m.CopyFrom(message)
        for _ in range(self.rng.randint(1, 3)):
            slots = list(_slots(m))
            if not slots:
                break
            owner, field = self.rng.choice(slots)
            self._replace(owner, field)
        return m.SerializeToString()

    def _replace(self, owner, field: d.FieldDescriptor) -> None:
        if field.type == d.FieldDescriptor.TYPE_MESSAGE:
            if field.is_repeated:
                items = getattr(owner, field.name)
                if len(items) and self.rng.random() < 0.5:
                    first = items[0]
                    for _ in range(self.rng.choice([1, 100, 3000])):
                        items.add().CopyFrom(first)
                else:
                    del items[:]
            else:
                owner.ClearField(field.name)
            return
        value = self._value(field)
        if field.is_repeated:
            items = getattr(owner, field.name)
            if self.rng.random() < 0.3:
                del items[:]
            else:
                items.extend([value] * self.rng.choice([1, 2, 1000]))
        else:
            setattr(owner, field.name, value)

    def _value(self, field: d.FieldDescriptor):
        t, r = field.type, self.rng
        if t == d.FieldDescriptor.TYPE_STRING:
            return r.choice([r.choice(self.ids), r.choice(self.names), r.choice(ODD_STRINGS),
                             r.choice(self.ids).upper(), ""])
        if t == d.FieldDescriptor.TYPE_BYTES:
            return r.choice([r.choice(self.payloads), r.randbytes(r.randint(0, 64)), b""])
        if t == d.FieldDescriptor.TYPE_BOOL:
            return r.random() < 0.5
        if t == d.FieldDescriptor.TYPE_ENUM:
            return r.choice([v.number for v in field.enum_type.values] + [-1, 99, 2**31 - 1])
        if t in (d.FieldDescriptor.TYPE_DOUBLE, d.FieldDescriptor.TYPE_FLOAT):
            return r.choice([0.0, -1.0, float("inf"), float("nan"), 1e308])
        lo, hi = _range(t)
        return r.choice([v for v in INT_EDGES if lo <= v <= hi] + [lo, hi])


def _range(t: int) -> tuple[int, int]:
    if t in (d.FieldDescriptor.TYPE_UINT32, d.FieldDescriptor.TYPE_FIXED32):
        return 0, 2**32 - 1
    if t in (d.FieldDescriptor.TYPE_UINT64, d.FieldDescriptor.TYPE_FIXED64):
        return 0, 2**64 - 1
    if t in (d.FieldDescriptor.TYPE_INT32, d.FieldDescriptor.TYPE_SINT32, d.FieldDescriptor.TYPE_SFIXED32):
        return -2**31, 2**31 - 1
    return -2**63, 2**63 - 1


def _slots(message, depth: int = 0):
    """(message, field) for every field of `message` and of the messages it holds (set or not)."""
    for field in message.DESCRIPTOR.fields:
        if field.type == d.FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            continue
        yield message, field
        if field.type != d.FieldDescriptor.TYPE_MESSAGE or depth >= 3:
            continue
        if field.is_repeated:
            for item in list(getattr(message, field.name))[:3]:
                yield from _slots(item, depth + 1)
        elif message.HasField(field.name):
            yield from _slots(getattr(message, field.name), depth + 1)
