"""The client side of a Data Service's call port (rpc/call_port.py) against a peer on a real socket
playing the server's side of the frames: replies and keepalives, errors mapped as over gRPC, a
server that goes silent or closes, one that is not there (the caller falls back to gRPC), an idle
connection the server closed, and a fork's child that must not share its parent's connection nor wait
on a lock another thread of the parent held.
The real server's side is tested against a cluster in tests/test_call_port.py."""
import os
import socket
import struct
import threading
import time

import pytest

from dataclay.exceptions import BackendUnavailableError, InvalidArgumentError, NotAuthenticatedError, ObjectNotHereError
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2
from dataclay._internal.rpc.call_port import CallPort, CallPortLookup, Unusable

HEADER = struct.Struct(">I")


class FramePeer:
    """Listens on a free port; each connection is served by `answer(frame) -> list of (delay, reply)`
    after its OpenCalls (refused when the session is not "good"). Counts connections and frames."""

    def __init__(self, answer):
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = []
        self.opened = []
        self.pause = 0.0  # seconds between reads: a server that takes a large frame slowly
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        buffer = bytearray()
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            time.sleep(self.pause)
            while len(buffer) >= 4 and len(buffer) >= 4 + HEADER.unpack_from(buffer)[0]:
                (size,) = HEADER.unpack_from(buffer)
                frame = ds_pb2.CallFrame.FromString(bytes(buffer[4:4 + size]))
                del buffer[:4 + size]
                if frame.HasField("open"):
                    self.opened.append(frame.open)
                    if frame.open.session == "good":
                        self.send(conn, ds_pb2.CallReply(id=frame.id, value=b""))
                    else:
                        self.send(conn, ds_pb2.CallReply(id=frame.id, error=common_pb2.ErrorInfo(
                            code=common_pb2.NOT_AUTHENTICATED, message="unknown session")))
                        conn.close()
                        return
                    continue
                for delay, reply in self.answer(frame):
                    time.sleep(delay)
                    if reply is None:
                        conn.close()
                        return
                    try:
                        self.send(conn, reply)
                    except OSError:  # the client gave the call up, or the test closed the connection
                        return

    @staticmethod
    def send(conn, reply):
        body = reply.SerializeToString()
        conn.sendall(HEADER.pack(len(body)) + body)

    def close_connections(self):
        for conn in self.connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def close(self):
        self.server.close()
        self.close_connections()


def echo(frame):
    return [(0, ds_pb2.CallReply(id=frame.id, value=frame.get_field.field.encode()))]


def get(field: str):
    return ds_pb2.CallFrame(get_field=ds_pb2.GetFieldRequest(object_id="x", field=field))


@pytest.fixture
def peers():
    made = []

    def make(answer):
        peer = FramePeer(answer)
        made.append(peer)
        return peer
    yield make
    for peer in made:
        peer.close()


def test_a_call_is_answered_with_its_value_and_keepalives_are_skipped(peers):
    # setup: every reply comes after two keepalives
    peer = peers(lambda frame: [(0, ds_pb2.CallReply()), (0, ds_pb2.CallReply()), *echo(frame)])
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    # run
    values = [port.call("good", get(f"f{i}")) for i in range(5)]
    # verify: one connection, opened once with the keepalive asked for
    assert values == [b"f0", b"f1", b"f2", b"f3", b"f4"]
    assert len(peer.connections) == 1 and [o.keepalive_ms for o in peer.opened] == [300]
    port.close()


def test_errors_are_the_dataclay_errors_a_grpc_call_raises(peers):
    # setup
    def refuse(frame):
        return [(0, ds_pb2.CallReply(id=frame.id, error=common_pb2.ErrorInfo(
            code=common_pb2.OBJECT_NOT_HERE, message="object x is not here")))]
    peer = peers(refuse)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    # run / verify: a call's error, and the connection goes on serving
    for _ in range(2):
        with pytest.raises(ObjectNotHereError, match="object x is not here"):
            port.call("good", get("a"))
    assert len(peer.connections) == 1
    # a refused session is the server's answer, not a reason to fall back to gRPC
    with pytest.raises(NotAuthenticatedError, match="unknown session"):
        port.call("bad-token", get("a"))
    port.close()


def test_a_server_silent_for_the_bound_fails_the_call_and_a_slow_one_kept_alive_does_not(peers):
    # setup: "slow" is answered after 1 s with keepalives every 0.1 s; "silent" after 1 s with none
    def answer(frame):
        if frame.get_field.field == "slow":
            return [*[(0.1, ds_pb2.CallReply())] * 10, *echo(frame)]
        return [(1.0, ds_pb2.CallReply(id=frame.id, value=b"late"))]
    peer = peers(answer)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=100)  # gives up after 0.3 s of silence
    # run
    assert port.call("good", get("slow")) == b"slow"
    started = time.monotonic()
    with pytest.raises(BackendUnavailableError, match="silent") as silent:
        port.call("good", get("silent"))
    waited = time.monotonic() - started
    # verify: given up after the bound, as a call that may have run
    assert 0.25 < waited < 0.9
    assert not silent.value.connect_failed
    port.close()


def test_a_connection_closed_under_a_call_fails_it_and_the_next_call_opens_another(peers):
    # setup
    closes = iter([True, False])
    peer = peers(lambda frame: [(0, None)] if next(closes) else echo(frame))
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    # run
    with pytest.raises(BackendUnavailableError, match="closed") as broken:
        port.call("good", get("a"))
    again = port.call("good", get("b"))
    # verify
    assert not broken.value.connect_failed
    assert again == b"b" and len(peer.connections) == 2
    port.close()


def test_an_idle_connection_the_server_closed_is_replaced_before_a_call_is_sent(peers):
    # setup
    peer = peers(echo)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    assert port.call("good", get("a")) == b"a"
    # run: the server closes while the client is idle
    peer.close_connections()
    time.sleep(0.1)
    # verify: the call goes on a new connection, never on the closed one
    assert port.call("good", get("b")) == b"b"
    assert len(peer.opened) == 2
    port.close()


def test_nothing_listening_means_make_the_call_over_grpc():
    # setup: a port nobody listens on
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    port = CallPort("127.0.0.1", free, keepalive_ms=300)
    # run / verify
    with pytest.raises(Unusable):
        port.call("good", get("a"))


def test_the_lookup_asks_once_and_again_only_after_the_port_failed(peers, monkeypatch):
    # setup
    peer = peers(echo)
    asked = []

    def ask():
        asked.append(1)
        return peer.port
    monkeypatch.setattr("dataclay._internal.rpc.call_port.RETRY_AFTER_S", 0.3)
    lookup = CallPortLookup("127.0.0.1", None, None)
    # run
    first = lookup.port(ask)
    second = lookup.port(ask)
    lookup.unusable(first)
    meanwhile = lookup.port(ask)
    time.sleep(0.35)
    later = lookup.port(ask)
    # verify
    assert first is second and meanwhile is None
    assert later is not None and later is not first and len(asked) == 2
    assert lookup.port(ask) is later
    lookup.close()
    assert lookup.port(ask) is None


def test_a_port_not_served_is_never_asked_again():
    lookup = CallPortLookup("127.0.0.1", None, None)
    assert lookup.port(lambda: 0) is None
    assert lookup.port(lambda: pytest.fail("asked again")) is None


def test_threads_have_connections_of_their_own(peers):
    # setup
    peer = peers(echo)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    results = []
    # run
    threads = [threading.Thread(target=lambda i=i: results.append(port.call("good", get(f"t{i}")))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # verify
    assert sorted(results) == [b"t0", b"t1", b"t2", b"t3"]
    assert len(peer.connections) == 4
    port.close()


def test_the_connections_of_threads_that_ended_are_closed_as_new_ones_open(peers):
    # setup: 5 threads, one after the other, each making a call and ending
    peer = peers(echo)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    for i in range(5):
        t = threading.Thread(target=port.call, args=("good", get(f"t{i}")))
        t.start()
        t.join()
    # run / verify: only the last thread's connection stays open, and this thread's new one
    assert port.call("good", get("main")) == b"main"
    assert len(port._connections) == 1
    port.close()


def test_a_forked_child_opens_its_own_connection_and_the_parents_keeps_working(peers):
    # setup
    peer = peers(echo)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    assert port.call("good", get("parent")) == b"parent"
    # run
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, port.call("good", get("child")))
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    from_child = os.read(read, 100)
    os.close(read)
    # verify
    assert status == 0 and from_child == b"child"
    assert port.call("good", get("again")) == b"again"
    assert len(peer.connections) == 2
    port.close()


def test_while_one_thread_asks_for_the_port_the_others_calls_go_over_grpc_without_waiting():
    # setup: a thread asks a backend that is slow to answer
    lookup = CallPortLookup("127.0.0.1", None, None)
    asking, answer = threading.Event(), threading.Event()
    got = []

    def slow():
        asking.set()
        answer.wait(10)
        return 45678

    first = threading.Thread(target=lambda: got.append(lookup.port(slow)))
    first.start()
    asking.wait(5)
    # run: another thread's call meanwhile
    other = []
    second = threading.Thread(target=lambda: other.append(lookup.port(lambda: 1)))
    second.start()
    second.join(5)
    held = second.is_alive()
    answer.set()
    first.join(5)
    second.join(5)
    # verify: it was not held (gRPC), and the first thread's answer is the port for everyone after
    assert not held and other == [None]
    assert got[0].address == ("127.0.0.1", 45678)
    assert lookup.port(lambda: 1) is got[0]
    lookup.close()


@pytest.mark.parametrize("held", ["port", "lookup"])
def test_a_child_forked_while_another_thread_held_a_lock_calls_without_waiting_for_it(peers, held):
    # setup: another thread holds the port's lock at the fork, as one does while it opens a connection,
    # or the lookup's, as one does while it asks a backend that has not said its port yet
    peer = peers(echo)
    lookup = CallPortLookup("127.0.0.1", None, None)
    lock = lookup.port(lambda: peer.port)._lock if held == "port" else lookup._lock
    taken, release = threading.Event(), threading.Event()

    def hold():
        with lock:
            taken.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    # run: the child asks for the port and calls through it
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, lookup.port(lambda: peer.port).call("good", get("child")))
        finally:
            os._exit(0)
    os.close(write)
    exited = _exit_within(pid, 5.0)
    from_child = os.read(read, 100) if exited else b""
    os.close(read)
    release.set()
    holder.join()
    # verify: the child was answered; the parent's lock is the parent's, and the parent calls on
    assert exited and from_child == b"child"
    assert lookup.port(lambda: peer.port).call("good", get("parent")) == b"parent"
    lookup.close()


def _exit_within(pid: int, seconds: float) -> bool:
    """Whether the child `pid` exited with status 0 within `seconds` (it is killed if not)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status == 0
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return False


def test_closing_the_port_lets_a_call_in_flight_on_another_thread_finish(peers):
    # setup: a call answered after 0.5 s, on a thread of its own
    peer = peers(lambda frame: [(0.5, ds_pb2.CallReply(id=frame.id, value=b"answered"))])
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    got = []
    caller = threading.Thread(target=lambda: got.append(port.call("good", get("a"))))
    caller.start()
    time.sleep(0.2)
    # run: the port closed meanwhile, as a client reconnecting closes its old one
    port.close()
    caller.join(5)
    # verify: the call got its answer, its connection closed after it, and later calls go elsewhere
    assert got == [b"answered"]
    assert not port._connections
    with pytest.raises(Unusable):
        port.call("good", get("b"))


def test_a_calls_own_unavailable_error_keeps_the_connection(peers):
    # setup: the server answers the call itself with BACKEND_UNAVAILABLE (its environment is down)
    peer = peers(lambda frame: [(0, ds_pb2.CallReply(id=frame.id, error=common_pb2.ErrorInfo(
        code=common_pb2.BACKEND_UNAVAILABLE, message="the execution environment is restarting")))])
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=300)
    # run
    for _ in range(2):
        with pytest.raises(BackendUnavailableError, match="restarting"):
            port.call("good", get("a"))
    # verify: the transport was fine, so one connection served both
    assert len(peer.connections) == 1
    port.close()


def test_a_large_frame_to_a_server_reading_it_slowly_is_not_taken_for_silence(peers):
    # setup: the server reads 64 KiB every 5 ms (24 MiB in about 2 s) into a small buffer; silence is
    # given up after 0.6 s
    peer = peers(echo)
    peer.pause = 0.005
    peer.server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
    port = CallPort("127.0.0.1", peer.port, keepalive_ms=200)
    frame = ds_pb2.CallFrame(set_field=ds_pb2.SetFieldRequest(object_id="x", field="f", value=bytes(24 << 20)))
    # run / verify: the frame got through (the echo answers with the field's name)
    started = time.monotonic()
    assert port.call("good", frame) == b""
    assert time.monotonic() - started > 1.0  # it was slow, not absorbed by the socket buffers
    port.close()


def test_a_frame_the_server_refuses_while_it_is_written_fails_with_the_servers_error():
    # setup: a server that opens the session, then refuses the next frame from its length alone, as
    # the Data Service refuses one over its size limit: an error with ID 0, and the connection reset
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = server.accept()
        size = HEADER.unpack(conn.recv(4, socket.MSG_WAITALL))[0]
        frame = ds_pb2.CallFrame.FromString(conn.recv(size, socket.MSG_WAITALL))
        FramePeer.send(conn, ds_pb2.CallReply(id=frame.id))
        conn.recv(4, socket.MSG_WAITALL)
        FramePeer.send(conn, ds_pb2.CallReply(error=common_pb2.ErrorInfo(
            code=common_pb2.INVALID_ARGUMENT, message="a frame of 16777244 bytes is larger than this backend accepts")))
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
    threading.Thread(target=serve, daemon=True).start()
    port = CallPort("127.0.0.1", server.getsockname()[1], keepalive_ms=300)
    frame = ds_pb2.CallFrame(set_field=ds_pb2.SetFieldRequest(object_id="x", field="f", value=bytes(16 << 20)))
    # run / verify: the server's reason, not a backend that looks down
    with pytest.raises(InvalidArgumentError, match="larger than"):
        port.call("good", frame)
    port.close()
    server.close()
