"""rpc/framing.py, the one codec of length-prefixed frames, varints and delimited records, against
the bytes the link and the snapshot files hold (written out here, not computed by the codec)."""
import io

import pytest

from dataclay._internal.proto import dataservice_pb2
from dataclay._internal.rpc import framing

VARINTS = [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
           (2**31 - 1, b"\xff\xff\xff\xff\x07"), (2**64 - 1, b"\xff" * 9 + b"\x01")]


@pytest.mark.parametrize("value, encoded", VARINTS)
def test_varints_are_protobuf_varints_both_ways(value, encoded):
    assert framing.encode_varint(value) == encoded
    assert framing.decode_varint(b"\x55" + encoded + b"\x55", 1) == (value, 1 + len(encoded))


def test_a_negative_varint_is_refused():
    with pytest.raises(ValueError, match="not negative"):
        framing.encode_varint(-1)


def test_a_varint_cut_by_the_end_is_truncated():
    with pytest.raises(framing.FramingError, match="end inside a varint at byte 1") as caught:
        framing.decode_varint(b"\x00\x80\x80", 1)
    assert caught.value.truncated and caught.value.offset == 1


def test_a_varint_over_ten_bytes_is_malformed_not_truncated():
    with pytest.raises(framing.FramingError, match="longer than 10 bytes") as caught:
        framing.decode_varint(b"\xff" * 10 + b"\x01")
    assert not caught.value.truncated


def test_field_heads_are_what_protobuf_writes_before_a_length_delimited_field():
    # setup: a CopiedObject (object = field 1, replica_backend_ids = field 2) as protobuf encodes it
    message = dataservice_pb2.CopiedObject(replica_backend_ids=["b" * 200])
    # run
    built = framing.field_head(2, 200) + b"b" * 200
    # verify
    assert built == message.SerializeToString() and framing.field_head(1, 3) == b"\x0a\x03"
    assert framing.tag(15, 0) == b"\x78" and framing.tag(16, 2) == b"\x82\x01"


def test_delimited_records_round_trip_through_memoryviews():
    records = [b"", b"x", b"y" * 127, b"z" * 128, b"w" * 70_000]
    stream = b"".join(framing.delimit(r) for r in records)
    assert stream[:4] == b"\x00\x01x\x7f"
    view = memoryview(stream)
    assert [bytes(view[a:b]) for a, b in framing.delimited_spans(view)] == records
    assert list(framing.delimited_spans(b"")) == []


def test_a_record_running_past_the_end_is_truncated_and_named():
    stream = framing.delimit(b"ab") + framing.delimit(b"cde")
    with pytest.raises(framing.FramingError, match="record 1 at byte 3 runs past its end") as caught:
        list(framing.delimited_spans(stream[:-1]))
    assert caught.value.truncated and (caught.value.index, caught.value.offset) == (1, 3)


@pytest.mark.parametrize("tail", [b"\x80", b"\xff" * 11])
def test_a_record_length_cut_or_overlong_is_malformed(tail):
    with pytest.raises(framing.FramingError, match="record 1 at byte 2 has a malformed length") as caught:
        list(framing.delimited_spans(framing.delimit(b"a") + tail))
    assert not caught.value.truncated


def test_frames_are_a_four_byte_big_endian_length_and_the_body():
    assert framing.frame(b"") == b"\x00\x00\x00\x00"
    assert framing.frame(b"abc") == b"\x00\x00\x00\x03abc"
    assert framing.frame(b"x" * 258)[:4] == b"\x00\x00\x01\x02"


def test_frames_read_back_whole_and_end_of_stream_is_none():
    stream = io.BytesIO(framing.frame(b"") + framing.frame(b"abc") + framing.frame(b"y" * 70_000))
    assert [framing.read_frame(stream.read) for _ in range(4)] == [b"", b"abc", b"y" * 70_000, None]


@pytest.mark.parametrize("data, message", [
    (b"\x00\x00", r"inside a frame header \(2 of 4 bytes\)"),
    (b"\x00\x00\x00\x09abc", r"inside a frame \(3 of 9 bytes\)"),
])
def test_a_stream_ending_inside_a_frame_is_truncated(data, message):
    with pytest.raises(framing.FramingError, match=message) as caught:
        framing.read_frame(io.BytesIO(data).read)
    assert caught.value.truncated


def test_a_frame_length_over_the_limit_is_refused_before_its_body_is_read():
    reads = []
    stream = io.BytesIO(b"\x80\x00\x00\x00" + b"x" * 16)

    def read(n):
        reads.append(n)
        return stream.read(n)

    with pytest.raises(framing.FramingError, match="exceeds the 2147483647-byte limit") as caught:
        framing.read_frame(read)
    assert reads == [4] and not caught.value.truncated


def test_a_body_over_the_limit_is_never_framed():
    class Huge(bytes):
        def __len__(self):
            return framing.MAX_FRAME + 1

    with pytest.raises(framing.FramingError, match="exceeds the 2147483647-byte frame limit"):
        framing.frame(Huge())
    assert framing.MAX_FRAME == 2**31 - 1
