"""Length-prefixed framing, written once for both directions: what writes a length and what reads it
back use the same functions here.

Two framings are in use, and neither may change (other processes and files on disk hold them):
- frames of the execution environment's link (rpc/link_frames.py): a 4-byte unsigned big-endian
  length N, at most MAX_FRAME, then N bytes;
- delimited records of snapshot data files and import streams (cli/snapshot): a protobuf varint
  length, then the record; a record may also carry length-delimited fields whose heads (tag and
  length) are built here, so a body is wrapped without being copied or decoded.

Pure functions over bytes (bytes, bytearray, memoryview or mmap): no protobuf, no I/O of their own."""
from __future__ import annotations

from typing import Callable, Iterator

FRAME_HEADER = 4
MAX_FRAME = 2**31 - 1
MAX_VARINT_BYTES = 10  # a 64-bit value; protobuf refuses longer varints
LENGTH_DELIMITED = 2  # the protobuf wire type of bytes, strings and messages


class FramingError(ValueError):
    """Bytes that are not well-formed frames, varints or delimited records; `truncated` says that
    they end too early (more bytes could have completed them), `index` and `offset` name the record
    or varint that is wrong."""

    def __init__(self, message: str, truncated: bool = False, index: int = 0, offset: int = 0):
        super().__init__(message)
        self.truncated = truncated
        self.index = index
        self.offset = offset


def encode_varint(n: int) -> bytes:
    """`n` (not negative) as a protobuf varint (LEB128: 7 bits a byte, low bits first)."""
    if n < 0:
        raise ValueError(f"a varint is not negative: {n}")
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if not n:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def decode_varint(buffer, at: int = 0) -> tuple[int, int]:
    """The varint at `buffer[at]` and the position after it; FramingError (truncated) when the buffer
    ends inside it, and FramingError when it is longer than MAX_VARINT_BYTES."""
    value, shift, size = 0, 0, len(buffer)
    for end in range(at, at + MAX_VARINT_BYTES):
        if end >= size:
            raise FramingError(f"the bytes end inside a varint at byte {at}", truncated=True, offset=at)
        byte = buffer[end]
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, end + 1
    raise FramingError(f"the varint at byte {at} is longer than {MAX_VARINT_BYTES} bytes", offset=at)


def tag(number: int, wire_type: int) -> bytes:
    """The key of protobuf field `number` of `wire_type`."""
    return encode_varint((number << 3) | wire_type)


def field_head(number: int, length: int) -> bytes:
    """What precedes a length-delimited protobuf field `number` of `length` bytes: its tag and length."""
    return tag(number, LENGTH_DELIMITED) + encode_varint(length)


def delimit(body) -> bytes:
    """`body` preceded by its length as a varint: one delimited record."""
    return encode_varint(len(body)) + body


def delimited_spans(buffer) -> Iterator[tuple[int, int]]:
    """(start, end) of each delimited record in `buffer`: the record is buffer[start:end].
    FramingError naming the record when a length is malformed (too long, or cut by the end of the
    buffer) or, `truncated`, when the record runs past the end."""
    at, size, index = 0, len(buffer), 0
    while at < size:
        try:
            length, start = decode_varint(buffer, at)
        except FramingError:
            raise FramingError(f"record {index} at byte {at} has a malformed length", index=index,
                               offset=at) from None
        if start + length > size:
            raise FramingError(f"record {index} at byte {at} runs past its end", truncated=True, index=index,
                               offset=at)
        yield start, start + length
        at = start + length
        index += 1


def frame(body) -> bytes:
    """`body` as one frame: its length as 4 bytes, big-endian, then it; FramingError over MAX_FRAME."""
    if len(body) > MAX_FRAME:
        raise FramingError(f"a message of {len(body)} bytes exceeds the {MAX_FRAME}-byte frame limit")
    return len(body).to_bytes(FRAME_HEADER, "big") + body


def read_frame(read: Callable[[int], bytes]) -> bytes | None:
    """The body of the next frame that `read` gives (a binary file's read: `n` bytes, fewer only at
    end of stream), or None at end of stream before a frame. FramingError (truncated) when the stream
    ends inside a frame, and FramingError when a length is over MAX_FRAME (nothing of the body read)."""
    header = read(FRAME_HEADER)
    if not header:
        return None
    if len(header) < FRAME_HEADER:
        raise FramingError(f"the stream ended inside a frame header ({len(header)} of {FRAME_HEADER} bytes)",
                           truncated=True)
    size = int.from_bytes(header, "big")
    if size > MAX_FRAME:
        raise FramingError(f"frame length {size} exceeds the {MAX_FRAME}-byte limit")
    body = read(size) if size else b""
    if len(body) < size:
        raise FramingError(f"the stream ended inside a frame ({len(body)} of {size} bytes)", truncated=True)
    return body
