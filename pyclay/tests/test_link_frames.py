"""DataServiceLink, the execution environment's framed link over its standard streams, against the
wire contract: 4-byte big-endian length + one protobuf message, checked from the other ends of a pair
of pipes."""
import os
import struct
import threading

import pytest

from dataclay._internal.proto import executionenv_pb2
from dataclay._internal.rpc import DataServiceLink, LinkClosedError, LinkProtocolError
from dataclay._internal.rpc.link_frames import READ_BUFFER
from peers import read_frame


class DataServiceEnds:
    """The Data Service's ends of the two pipes: it writes what the link reads, reads what it writes."""

    def __init__(self):
        self.link_reads, self.write_fd = os.pipe()
        self.read_fd, self.link_writes = os.pipe()

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def finish(self) -> None:
        os.close(self.write_fd)

    def recv(self, size: int) -> bytes:
        return os.read(self.read_fd, size)

    def close(self) -> None:
        for fd in (self.write_fd, self.read_fd):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
def pair():
    """(the link, the Data Service's ends of its pipes); all closed afterwards."""
    theirs = DataServiceEnds()
    link = DataServiceLink(theirs.link_reads, theirs.link_writes)
    yield link, theirs
    link.close()
    theirs.close()


def _frame(message) -> bytes:
    body = message.SerializeToString()
    return struct.pack(">I", len(body)) + body


def _execute(call_id: int, payload: bytes = b"") -> executionenv_pb2.DataServiceMessage:
    return executionenv_pb2.DataServiceMessage(execute=executionenv_pb2.ExecuteRequest(call_id=call_id,
                                                                                       payload=payload))


def _result(call_id: int, size: int) -> executionenv_pb2.EnvironmentMessage:
    return executionenv_pb2.EnvironmentMessage(result=executionenv_pb2.ExecuteResult(
        call_id=call_id, result=bytes([call_id % 251]) * size))


@pytest.mark.timeout(30)
def test_frames_are_received_whole_and_end_of_stream_is_none(pair):
    link, theirs = pair
    big = bytes(range(256)) * (3 * READ_BUFFER // 256 + 7)
    sent = [_execute(1), executionenv_pb2.DataServiceMessage(), _execute(2, big), _execute(3, b"x")]
    writer = threading.Thread(target=lambda: (theirs.sendall(b"".join(_frame(m) for m in sent)), theirs.finish()))
    writer.start()
    received = [link.receive() for _ in sent]
    writer.join(10)
    assert received == sent and link.receive() is None


@pytest.mark.timeout(30)
@pytest.mark.parametrize("data, message", [
    (b"\x00\x00", "inside a frame header"),
    (b"\x00\x00\x00\x09abc", "inside a frame (3 of 9 bytes)"),
    (b"\x80\x00\x00\x00", "exceeds"),
    (b"\x00\x00\x00\x02\xff\xff", "is not a DataServiceMessage"),
])
def test_malformed_frames_are_protocol_errors(pair, data, message):
    link, theirs = pair
    theirs.sendall(data)
    theirs.finish()
    with pytest.raises(LinkProtocolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        link.receive()


@pytest.mark.timeout(60)
def test_frames_from_concurrent_senders_never_interleave(pair):
    # setup: senders of small and large frames (above the single-send limit) at once
    link, theirs = pair
    senders, per_sender = 6, 150
    sizes = (10, 70_000, 300, 200_000)
    received = []
    reader = threading.Thread(target=lambda: received.extend(
        executionenv_pb2.EnvironmentMessage.FromString(read_frame(theirs.read_fd)) for _ in range(senders * per_sender)))
    reader.start()

    def send(sender: int) -> None:
        for n in range(per_sender):
            link.send(_result(sender * 1000 + n, sizes[n % len(sizes)]))

    # run
    threads = [threading.Thread(target=send, args=(s,)) for s in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    reader.join(30)
    # verify: every frame whole, and each sender's frames in its own order
    assert len(received) == senders * per_sender
    for message in received:
        n = message.result.call_id % 1000
        assert message.result.result == bytes([message.result.call_id % 251]) * sizes[n % len(sizes)]
    for s in range(senders):
        mine = [m.result.call_id for m in received if m.result.call_id // 1000 == s]
        assert mine == [s * 1000 + n for n in range(per_sender)]


@pytest.mark.timeout(30)
def test_finish_sending_closes_the_writing_end_after_the_last_frame(pair):
    link, theirs = pair
    link.send_hello(42, "test", "bwrap,seccomp")
    link.finish_sending()
    hello = executionenv_pb2.EnvironmentMessage.FromString(read_frame(theirs.read_fd))
    assert hello.hello.pid == 42 and hello.hello.confinement == "bwrap,seccomp" and theirs.recv(1) == b""
    with pytest.raises(LinkClosedError):
        link.send(_result(1, 1))
    theirs.sendall(_frame(_execute(9)))
    assert link.receive().execute.call_id == 9


@pytest.mark.timeout(30)
def test_send_after_the_other_end_closed_is_link_closed(pair):
    link, theirs = pair
    theirs.close()
    with pytest.raises(LinkClosedError):
        for _ in range(3):
            link.send(_result(1, 100_000))
