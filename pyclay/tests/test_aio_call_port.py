"""The asyncio call port client (rpc/aio_call_port.py) against a server speaking the frames: many calls
of one loop on one connection, answered out of order; a silent server, a closed connection and a
refused port; a cancelled call's late reply. The real Data Service's side is in
tests/test_call_port.py."""
import asyncio
import socket
import struct
import threading
import time

import pytest

from dataclay.exceptions import BackendUnavailableError, NotAuthenticatedError
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2
from dataclay._internal.rpc.aio_call_port import AsyncCallPort
from dataclay._internal.rpc.call_port import Unusable

pytestmark = pytest.mark.timeout(30)
HEADER = struct.Struct(">I")


class FrameServer:
    """A call port on a local socket: opens every connection, then lets `answer(frames, writer)` decide
    what each batch of call frames gets."""

    def __init__(self, answer):
        self.answer = answer
        self.connections = 0
        self.server = None

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _serve(self, reader, writer):
        self.connections += 1
        try:
            while True:
                size = HEADER.unpack(await reader.readexactly(4))[0]
                frame = ds_pb2.CallFrame.FromString(await reader.readexactly(size))
                if frame.HasField("open"):
                    send(writer, ds_pb2.CallReply(id=frame.id))
                    continue
                await self.answer(frame, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def send(writer, reply):
    data = reply.SerializeToString()
    writer.write(HEADER.pack(len(data)) + data)


def call(method: str) -> ds_pb2.CallFrame:
    return ds_pb2.CallFrame(call_method=ds_pb2.CallMethodRequest(object_id="o", method=method))


def test_a_loops_calls_share_one_connection_and_get_their_own_answers_in_any_order():
    held = []

    async def answer(frame, writer):
        held.append(frame)
        if len(held) == 20:  # everything in flight at once, answered last first
            for f in reversed(held):
                send(writer, ds_pb2.CallReply(id=f.id, value=f.call_method.method.encode()))

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=0)
            values = await asyncio.gather(*(port.call("token", call(f"m{i}")) for i in range(20)))
            port.close()
            return values, server.connections

    values, connections = asyncio.run(main())
    assert values == [f"m{i}".encode() for i in range(20)]
    assert connections == 1


def test_a_silent_server_fails_the_waiting_calls_after_the_silence_bound():
    async def answer(frame, writer):
        pass  # never answers, sends no keepalive

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=100)  # silent after 0.3 s
            started = time.monotonic()
            with pytest.raises(BackendUnavailableError, match="went silent"):
                await asyncio.gather(port.call("token", call("a")), port.call("token", call("b")))
            port.close()
            return time.monotonic() - started

    assert 0.25 <= asyncio.run(main()) < 3


def test_keepalives_keep_a_slow_call_waiting():
    async def answer(frame, writer):
        for _ in range(6):  # 0.6 s, twice the silence bound, with a keepalive every 0.1 s
            send(writer, ds_pb2.CallReply(id=0))
            await asyncio.sleep(0.1)
        send(writer, ds_pb2.CallReply(id=frame.id, value=b"slow"))

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=100)
            try:
                return await port.call("token", call("slow"))
            finally:
                port.close()

    assert asyncio.run(main()) == b"slow"


def test_a_closed_connection_fails_its_calls_and_the_next_call_opens_another():
    async def answer(frame, writer):
        if frame.call_method.method == "drop":
            writer.close()
        else:
            send(writer, ds_pb2.CallReply(id=frame.id, value=b"ok"))

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=0)
            with pytest.raises(BackendUnavailableError) as broken:
                await port.call("token", call("drop"))
            after = await port.call("token", call("again"))
            port.close()
            return broken.value, after, server.connections

    error, after, connections = asyncio.run(main())
    assert not error.connect_failed  # it may have run: not retried as a call that was never sent
    assert after == b"ok" and connections == 2


def test_errors_arrive_as_the_calls_dataclay_errors():
    async def answer(frame, writer):
        send(writer, ds_pb2.CallReply(id=frame.id, error=common_pb2.ErrorInfo(
            code=common_pb2.NOT_AUTHENTICATED, message="the session ended")))

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=0)
            try:
                await port.call("token", call("x"))
            finally:
                port.close()

    with pytest.raises(NotAuthenticatedError, match="the session ended"):
        asyncio.run(main())


def test_a_cancelled_calls_late_reply_is_dropped_and_the_connection_goes_on():
    async def answer(frame, writer):
        if frame.call_method.method == "slow":
            await asyncio.sleep(0.3)
        send(writer, ds_pb2.CallReply(id=frame.id, value=frame.call_method.method.encode()))

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=0)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(port.call("token", call("slow")), 0.05)
            value = await port.call("token", call("next"))
            port.close()
            return value, server.connections

    assert asyncio.run(main()) == (b"next", 1)


def test_a_port_nobody_listens_on_is_unusable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]

    async def main():
        port = AsyncCallPort("127.0.0.1", free, keepalive_ms=0)
        await port.call("token", call("x"))

    with pytest.raises(Unusable):
        asyncio.run(main())


def test_the_calls_of_a_loop_wait_for_one_question_and_a_port_not_served_is_never_asked_again():
    from dataclay._internal.rpc.aio_call_port import AsyncCallPortLookup
    asked = []

    async def ask():
        asked.append(1)
        await asyncio.sleep(0.05)
        return 0

    async def main():
        lookup = AsyncCallPortLookup("127.0.0.1", None, None)
        first = await asyncio.gather(*(lookup.port(ask) for _ in range(10)))
        return first, await lookup.port(ask)

    first, later = asyncio.run(main())
    assert first == [None] * 10 and later is None
    assert len(asked) == 1


def test_a_failed_question_is_asked_again_only_later():
    from dataclay.exceptions import BackendUnavailableError as Unavailable
    from dataclay._internal.rpc.aio_call_port import AsyncCallPortLookup
    asked = []

    async def failing():
        asked.append(1)
        raise Unavailable("not now")

    async def main():
        lookup = AsyncCallPortLookup("127.0.0.1", None, None)
        return await lookup.port(failing), await lookup.port(failing)

    assert asyncio.run(main()) == (None, None)
    assert len(asked) == 1


def test_a_large_reply_streaming_in_is_not_taken_for_silence():
    # setup: an 8 MiB reply sent in 64 KiB pieces 10 ms apart (about 1.3 s); silence bound 0.3 s
    async def answer(frame, writer):
        data = ds_pb2.CallReply(id=frame.id, value=bytes(8 << 20)).SerializeToString()
        data = HEADER.pack(len(data)) + data
        for i in range(0, len(data), 1 << 16):
            writer.write(data[i:i + (1 << 16)])
            await writer.drain()
            await asyncio.sleep(0.01)

    async def main():
        async with FrameServer(answer) as server:
            port = AsyncCallPort("127.0.0.1", server.port, keepalive_ms=100)
            started = time.monotonic()
            value = await port.call("token", call("m"))
            took = time.monotonic() - started
            port.close()
            return len(value), took

    size, took = asyncio.run(main())
    assert size == 8 << 20 and took > 0.6


def test_a_call_cancelled_while_its_frame_waits_to_be_sent_leaves_nothing_behind():
    # setup: a server that stops reading after the open, so a large frame waits in drain()
    async def main():
        stop_reading = asyncio.Event()

        async def serve(reader, writer):
            size = HEADER.unpack(await reader.readexactly(4))[0]
            frame = ds_pb2.CallFrame.FromString(await reader.readexactly(size))
            send(writer, ds_pb2.CallReply(id=frame.id))
            await stop_reading.wait()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = AsyncCallPort("127.0.0.1", server.sockets[0].getsockname()[1], keepalive_ms=0)
        big = ds_pb2.CallFrame(set_field=ds_pb2.SetFieldRequest(object_id="x", field="f", value=bytes(32 << 20)))
        task = asyncio.ensure_future(port.call("token", big))
        await asyncio.sleep(0.5)
        assert not task.done()  # still sending
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        waiting = dict(port._connections["token"]._waiting)
        stop_reading.set()
        port.close()
        server.close()
        return waiting

    assert asyncio.run(main()) == {}


def test_a_connection_left_open_is_closed_when_its_event_loop_ends():
    # setup: a server on a thread of its own, which sees the client's end of the connection
    server = socket.create_server(("127.0.0.1", 0))
    ended = threading.Event()

    def serve():
        conn, _ = server.accept()
        size = HEADER.unpack(conn.recv(4, socket.MSG_WAITALL))[0]
        frame = ds_pb2.CallFrame.FromString(conn.recv(size, socket.MSG_WAITALL))
        data = ds_pb2.CallReply(id=frame.id).SerializeToString()
        conn.sendall(HEADER.pack(len(data)) + data)
        size = HEADER.unpack(conn.recv(4, socket.MSG_WAITALL))[0]
        frame = ds_pb2.CallFrame.FromString(conn.recv(size, socket.MSG_WAITALL))
        data = ds_pb2.CallReply(id=frame.id, value=b"v").SerializeToString()
        conn.sendall(HEADER.pack(len(data)) + data)
        if conn.recv(1) == b"":
            ended.set()
        conn.close()
    threading.Thread(target=serve, daemon=True).start()

    async def main():
        port = AsyncCallPort("127.0.0.1", server.getsockname()[1], keepalive_ms=0)
        return await port.call("token", call("m"))  # the port is never closed

    # run
    assert asyncio.run(main()) == b"v"
    # verify: the socket was closed as the loop ended, not left to the garbage collector
    assert ended.wait(5)
    server.close()
