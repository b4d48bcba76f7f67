"""The Data Service's call port (dataservice.proto: GetCallPort, CallFrame, CallReply), against a real
cluster: a client's method calls and field reads and writes go through it and answer as over gRPC;
raw sockets speaking the frames get the same checks a gRPC call gets (session, access, every field),
and hostile or malformed frames get a clear error, change nothing and leave the backend serving."""
from __future__ import annotations

import pickle
import random
import socket
import struct
import uuid

import pytest

from dataclay.exceptions import DataClayException
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from test_core_acceptance import client
from test_sessions_and_safety import admin_lm

HEADER = struct.Struct(">I")


class RawConnection:
    """A plain socket to a call port, speaking the frames by hand."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buffer = b""

    def send(self, frame: ds_pb2.CallFrame) -> None:
        self.send_bytes(frame.SerializeToString())

    def send_bytes(self, body: bytes, announced: int | None = None) -> None:
        self.sock.sendall(HEADER.pack(len(body) if announced is None else announced) + body)

    def reply(self) -> ds_pb2.CallReply | None:
        """The next reply that is not a keepalive; None when the server closed the connection."""
        while True:
            while len(self.buffer) < 4 or len(self.buffer) < 4 + HEADER.unpack_from(self.buffer)[0]:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return None
                self.buffer += chunk
            (size,) = HEADER.unpack_from(self.buffer)
            reply = ds_pb2.CallReply.FromString(self.buffer[4:4 + size])
            self.buffer = self.buffer[4 + size:]
            if reply.id != 0 or reply.HasField("error"):
                return reply

    def closed(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True

    def open(self, token: str, keepalive_ms: int = 0) -> ds_pb2.CallReply:
        self.send(ds_pb2.CallFrame(id=1, open=ds_pb2.OpenCalls(session=token, keepalive_ms=keepalive_ms)))
        return self.reply()

    def close(self) -> None:
        self.sock.close()


def error_code(reply: ds_pb2.CallReply) -> str:
    assert reply.HasField("error"), f"expected an error, got {reply}"
    return common_pb2.ErrorCode.Name(reply.error.code)


def counter_on(cluster, alias: str, value: int) -> tuple[str, str]:
    """(object ID, its backend's address) of a new Counter."""
    made = client(cluster, f"""
        c = Counter({value}); c.make_persistent(alias={alias!r})
        print(json.dumps({{"id": c.getID(), "backend": c.get_location()}}))
    """)
    lm = admin_lm(cluster)
    backend = next(b for b in lm.get_backends() if b.id == made["backend"])
    return made["id"], f"{backend.host}:{backend.port}"


def call_port_of(address: str, token: str) -> int:
    ds = DataServiceClient(address, token)
    try:
        return ds._call(ds._stub.GetCallPort, common_pb2.Empty()).port
    finally:
        ds.close()


def get_call(object_id: str, call_id: int) -> ds_pb2.CallFrame:
    return ds_pb2.CallFrame(id=call_id, call_method=ds_pb2.CallMethodRequest(
        object_id=object_id, method="get", args=pickle.dumps(((), {}))))


def test_a_clients_calls_go_through_the_call_port_and_answer_as_over_grpc(cluster):
    made = client(cluster, """
        from dataclay._internal.runtime import current
        c = Counter(1); c.make_persistent(alias="through-the-port")
        values = [c.increment(), c.increment(5), c.get(), c.value]
        c.value = 40
        values += [c.get(), c.increment()]
        ds = current.get_runtime().router.data_service(c.get_location())
        port = ds._calls.port(ds._ask_call_port)
        print(json.dumps({"values": values, "port": port.address[1] if port else 0,
                          "connections": len(port._connections) if port else 0}))
    """)
    assert made["values"] == [2, 7, 7, 7, 40, 41]
    assert made["port"] > 0 and made["connections"] == 1


def test_raw_frames_are_checked_like_grpc_calls(cluster):
    object_id, address = counter_on(cluster, "raw-frames", 9)
    lm = admin_lm(cluster)
    port = call_port_of(address, lm.token)
    raw = RawConnection(port)
    try:
        opened = raw.open(lm.token, keepalive_ms=200)
        assert opened.id == 1 and not opened.HasField("error")
        # a call answers with its own id, pickled as over gRPC
        raw.send(get_call(object_id, 7))
        answer = raw.reply()
        assert answer.id == 7 and pickle.loads(answer.value) == 9
        # every field is checked, and the connection goes on serving
        raw.send(ds_pb2.CallFrame(id=8, call_method=ds_pb2.CallMethodRequest(object_id="not-a-uuid", method="get")))
        bad = raw.reply()
        assert bad.id == 8 and error_code(bad) == "INVALID_ARGUMENT" and "object_id" in bad.error.message
        raw.send(ds_pb2.CallFrame(id=9, get_field=ds_pb2.GetFieldRequest(object_id=object_id, field="")))
        assert error_code(raw.reply()) == "INVALID_ARGUMENT"
        raw.send(get_call(str(uuid.uuid4()), 10))
        assert error_code(raw.reply()) == "OBJECT_NOT_HERE"
        raw.send(ds_pb2.CallFrame(id=11))
        empty = raw.reply()
        assert empty.id == 11 and error_code(empty) == "INVALID_ARGUMENT" and "names no call" in empty.error.message
        raw.send(ds_pb2.CallFrame(id=12, open=ds_pb2.OpenCalls(session=lm.token)))
        assert "already open" in raw.reply().error.message
        # field writes and reads
        raw.send(ds_pb2.CallFrame(id=13, set_field=ds_pb2.SetFieldRequest(object_id=object_id, field="value",
                                                                         value=pickle.dumps(12))))
        assert not raw.reply().HasField("error")
        raw.send(ds_pb2.CallFrame(id=14, get_field=ds_pb2.GetFieldRequest(object_id=object_id, field="value")))
        assert pickle.loads(raw.reply().value) == 12
        # calls pipelined on one connection are all answered, each with its id
        for i in range(100, 110):
            raw.send(get_call(object_id, i))
        assert sorted(raw.reply().id for _ in range(10)) == list(range(100, 110))
        # a call's id is never 0: the connection ends, saying why, and a call sent with it is not served
        after = ds_pb2.CallFrame(id=15, set_field=ds_pb2.SetFieldRequest(object_id=object_id, field="value",
                                                                        value=pickle.dumps(99)))
        zero_frame, after_frame = get_call(object_id, 0).SerializeToString(), after.SerializeToString()
        raw.sock.sendall(HEADER.pack(len(zero_frame)) + zero_frame + HEADER.pack(len(after_frame)) + after_frame)
        zero = raw.reply()
        assert zero.id == 0 and error_code(zero) == "INVALID_ARGUMENT" and raw.closed()
    finally:
        raw.close()
    assert client(cluster, """print(json.dumps(Counter.get_by_alias("raw-frames").get()))""") == 12


@pytest.mark.parametrize("name, send", [
    ("garbage", lambda raw, token: raw.send_bytes(b"\xff" * 40)),
    ("a call before the connection is open", lambda raw, token: raw.send(get_call(str(uuid.uuid4()), 3))),
    ("a frame larger than the backend accepts", lambda raw, token: raw.send_bytes(b"", announced=0x7FFFFFF0)),
    ("an unknown session", lambda raw, token: raw.open("bogus-token")),
    ("no session", lambda raw, token: raw.open("")),
    ("a keepalive too short to keep", lambda raw, token: raw.open(token, keepalive_ms=5)),
])
def test_a_hostile_connection_gets_a_clear_error_and_is_closed(cluster, name, send):
    lm = admin_lm(cluster)
    address = next(f"{b.host}:{b.port}" for b in lm.get_backends())
    raw = RawConnection(call_port_of(address, lm.token))
    try:
        reply = send(raw, lm.token) or raw.reply()
        assert reply is not None and reply.HasField("error"), name
        assert error_code(reply) in ("INVALID_ARGUMENT", "NOT_AUTHENTICATED"), (name, reply)
        assert reply.error.message, name
        assert raw.closed(), name
    finally:
        raw.close()
    assert client(cluster, """c = Counter(3); c.make_persistent(); print(json.dumps(c.increment()))""") == 4


def test_mutated_frames_get_typed_answers_or_a_close_and_break_nothing(cluster):
    # setup: valid frames of every kind, to mutate
    object_id, address = counter_on(cluster, "fuzzed-frames", 21)
    lm = admin_lm(cluster)
    port = call_port_of(address, lm.token)
    valid = [get_call(object_id, 5).SerializeToString(),
             ds_pb2.CallFrame(id=6, get_field=ds_pb2.GetFieldRequest(object_id=object_id, field="value"))
             .SerializeToString(),
             ds_pb2.CallFrame(id=7, set_field=ds_pb2.SetFieldRequest(object_id=object_id, field="nope", value=b"\x80"))
             .SerializeToString()]
    rng = random.Random(11)
    answers = {"replies": 0, "closed": 0}
    # run: 300 mutated frames, each on a connection opened in the administrator's session
    for _ in range(300):
        body = bytearray(rng.choice(valid))
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(len(body))] = rng.randrange(256)
        if rng.random() < 0.2:
            body = body[:rng.randrange(len(body))]
        raw = RawConnection(port)
        try:
            assert not raw.open(lm.token).HasField("error")
            raw.send_bytes(bytes(body))
            reply = raw.reply()
            if reply is None:
                answers["closed"] += 1
            else:
                answers["replies"] += 1
                if reply.HasField("error"):
                    assert common_pb2.ErrorCode.Name(reply.error.code) != "INTERNAL", reply
        finally:
            raw.close()
    # verify: every frame was answered (never silently dropped), the counter kept its value or took
    # a valid one, and the backend serves on
    assert answers["replies"] == 300, answers
    assert client(cluster, """print(json.dumps(Counter.get_by_alias("fuzzed-frames").increment()))""") >= 1
    assert "SEVERE" not in cluster.logs()


def test_another_accounts_session_is_refused_on_the_call_port(cluster):
    object_id, address = counter_on(cluster, "not-for-mallory", 5)
    admin = admin_lm(cluster)
    admin.new_account("mallory-callport", "mallory-password")
    mallory = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    mallory.token = mallory.new_session("mallory-callport", "mallory-password", "").token
    raw = RawConnection(call_port_of(address, mallory.token))
    try:
        assert not raw.open(mallory.token).HasField("error")
        # refused as over gRPC (where another account's object is not even said to exist)
        over_grpc = DataServiceClient(address, mallory.token)
        with pytest.raises(DataClayException) as refused:
            over_grpc.call_method(object_id, "get", pickle.dumps(((), {})))
        over_grpc.close()
        assert refused.value.code in ("PERMISSION_DENIED", "OBJECT_NOT_HERE")
        raw.send(get_call(object_id, 2))
        assert error_code(raw.reply()) == refused.value.code
        raw.send(ds_pb2.CallFrame(id=3, set_field=ds_pb2.SetFieldRequest(object_id=object_id, field="value",
                                                                        value=pickle.dumps(666))))
        assert error_code(raw.reply()) == refused.value.code
        # the session ends: a connection opened in it stops serving at once
        mallory.close_session()
        raw.send(get_call(object_id, 4))
        assert error_code(raw.reply()) == "NOT_AUTHENTICATED"
    finally:
        raw.close()
    assert client(cluster, """print(json.dumps(Counter.get_by_alias("not-for-mallory").get()))""") == 5


def test_a_call_slower_than_the_silence_bound_is_kept_alive(make_cluster):
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_UNREACHABLE_MS": "1000"})
    made = client(cluster, """
        import time
        c = Counter(1); c.make_persistent()
        started = time.monotonic()
        value = c.get_after(3.0)
        print(json.dumps({"value": value, "seconds": time.monotonic() - started}))
    """)
    assert made["value"] == 1 and made["seconds"] >= 3.0


def test_with_the_call_port_off_clients_use_grpc(make_cluster):
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_CALL_PORT": "off"})
    lm = admin_lm(cluster)
    address = next(f"{b.host}:{b.port}" for b in lm.get_backends())
    assert call_port_of(address, lm.token) == 0
    made = client(cluster, """
        c = Counter(1); c.make_persistent()
        c.value = 5
        print(json.dumps([c.increment(), c.value]))
    """)
    assert made == [6, 6]


def test_an_event_loops_calls_share_one_call_port_connection(cluster):
    # 200 awaited method calls in flight at once from one event loop: one connection carries them
    # all, each answered under its own ID, and they change what they would over gRPC
    made = client(cluster, """
        import asyncio, os, subprocess
        from dataclay._internal.runtime import current
        counters = [Counter(0) for _ in range(50)]
        for c in counters:
            c.make_persistent()
        ds = current.get_runtime().router.data_service(counters[0].get_location())
        port = ds._calls.port(ds._ask_call_port).address[1]  # asked over gRPC: no connection made

        def connections():
            listed = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{port} )"],
                                    capture_output=True, text=True, check=True).stdout
            return sum(f"pid={os.getpid()}," in line for line in listed.splitlines())

        async def main():
            returned = await asyncio.gather(*(c.increment_later(1, 0.01 * (i % 3)) for i in range(4)
                                              for c in counters))
            return returned, connections()

        returned, during = asyncio.run(main())
        print(json.dumps({"returned": sorted(returned), "values": sorted({c.value for c in counters}),
                          "connections": during}))
    """)
    assert made["returned"] == sorted([1, 2, 3, 4] * 50)
    assert made["values"] == [4]
    assert made["connections"] == 1
