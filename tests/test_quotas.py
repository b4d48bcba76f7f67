"""Fair share beyond the execution environments (issue 21, requirement 8), tried as a greedy or
hostile account would against a real cluster: sessions per account and per second, objects and
bytes per dataset, one value's size, and the log a stranger can make a server write."""
import json
import socket
import time

import grpc
import pytest

from dataclay.exceptions import NotAuthenticatedError, QuotaExceededError
from dataclay._internal.rpc import LogicModuleClient
from test_core_acceptance import PRELUDE

SAM, SAM_PW = "sam", "sam-password-123"


def _as(cluster, user: str, password: str, body: str) -> dict:
    """Runs `body` in a client process of `user`; it prints one JSON line, which is returned."""
    saved = dict(cluster.env)
    cluster.env.update({"DATACLAY_USER": user, "DATACLAY_PASSWORD": password})
    try:
        result = cluster.run_client(PRELUDE + body)
    finally:
        cluster.env.clear()
        cluster.env.update(saved)
    return json.loads(result.stdout.strip().splitlines()[-1])


def _log_bytes(cluster) -> int:
    return sum(p.stat().st_size for p in (cluster.home / "logs").glob("*.log"))


def test_an_account_holds_a_bounded_number_of_sessions_and_opens_them_at_a_bounded_rate(make_cluster):
    # setup: at most 3 open sessions per account, 1 new one a second (bursts of 10)
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_MAX_SESSIONS_PER_ACCOUNT": "3",
                                                  "DATACLAY_SESSIONS_PER_SECOND": "1"})
    cluster.dataclaycmd("NewAccount", SAM, SAM_PW)
    address = f"127.0.0.1:{cluster.port}"
    clients = [LogicModuleClient(address) for _ in range(4)]
    try:
        for c in clients[:3]:
            c.token = c.new_session(SAM, SAM_PW, "").token
        # run: a fourth is refused; a wrong password is refused as before and costs sam nothing
        with pytest.raises(QuotaExceededError) as full:
            clients[3].new_session(SAM, SAM_PW, "")
        with pytest.raises(NotAuthenticatedError):
            clients[3].new_session(SAM, "wrong-password-1", "")
        other = LogicModuleClient(address)
        other.token = other.new_session(cluster.admin_user(), cluster.admin_password(), "").token
        clients[0].close_session(timeout=10)
        clients[3].token = clients[3].new_session(SAM, SAM_PW, "").token
        reopened = clients[3].get_backends(timeout=10)
        clients[3].close_session(timeout=10)
        # ... then open and close sessions quickly until the rate refuses one
        rate = None
        for _ in range(30):
            try:
                clients[0].token = clients[0].new_session(SAM, SAM_PW, "").token
            except QuotaExceededError as e:
                rate = e
                break
            clients[0].close_session(timeout=10)
        # verify
        assert "DATACLAY_MAX_SESSIONS_PER_ACCOUNT" in str(full.value) and "3 open sessions" in str(full.value)
        assert reopened, "a closed session gave its place back"
        assert other.get_backends(timeout=10), "another account is not held to sam's quota"
        assert rate is not None and "DATACLAY_SESSIONS_PER_SECOND" in str(rate), rate
        time.sleep(1.5)
        clients[0].token = clients[0].new_session(SAM, SAM_PW, "").token
        other.close()
    finally:
        for c in clients:
            c.close()


def test_a_dataset_over_its_object_or_byte_quota_is_refused_and_nothing_is_stored(make_cluster):
    # setup: 4 objects and 64 KiB of values per dataset on each backend
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_QUOTA_OBJECTS": "4", "DATACLAY_QUOTA_BYTES": "64K"})
    cluster.dataclaycmd("NewAccount", SAM, SAM_PW)
    # run: sam fills the dataset by make_persistent, then tries once more, by a method that grows a
    # value, and with an object too big for the byte quota
    seen = _as(cluster, SAM, SAM_PW, """
from dataclay.exceptions import QuotaExceededError
out = {}
for i in range(4):
    Counter(i).make_persistent(alias=f"c{i}")
try:
    Counter(9).make_persistent(alias="c9")
    out["fifth"] = "stored"
except QuotaExceededError as e:
    out["fifth"] = str(e)
c = Counter.get_by_alias("c0")
try:
    c.value = b"x" * (80 << 10)
    out["grow"] = "stored"
except QuotaExceededError as e:
    out["grow"] = str(e)
out["c0"] = Counter.get_by_alias("c0").get()
try:
    Counter.get_by_alias("c9")
    out["c9"] = "found"
except Exception as e:
    out["c9"] = type(e).__name__
print(json.dumps(out))
""")
    # ... while another account's dataset on the same backend is not charged for sam's
    theirs = _as(cluster, cluster.admin_user(), cluster.admin_password(), """
for i in range(4):
    Counter(i).make_persistent(alias=f"admin-c{i}")
print(json.dumps(Counter.get_by_alias("admin-c3").get()))
""")
    # verify
    assert "DATACLAY_QUOTA_OBJECTS" in seen["fifth"] and "holds 4 objects" in seen["fifth"], seen
    assert "DATACLAY_QUOTA_BYTES" in seen["grow"], seen
    assert seen["c0"] == 0 and seen["c9"] == "AliasDoesNotExistError", seen
    assert theirs == 3


def test_a_value_over_the_size_cap_is_refused_when_written_so_no_read_returns_one(make_cluster):
    # setup
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_MAX_VALUE_SIZE": "1M"})
    # run
    seen = _as(cluster, cluster.admin_user(), cluster.admin_password(), """
from dataclay.exceptions import InvalidArgumentError
out = {}
c = Counter(0)
c.value = b"x" * (2 << 20)
try:
    c.make_persistent(alias="big")
    out["new"] = "stored"
except InvalidArgumentError as e:
    out["new"] = str(e)
small = Counter(1)
small.make_persistent(alias="small")
try:
    small.value = b"y" * (2 << 20)
    out["set"] = "stored"
except InvalidArgumentError as e:
    out["set"] = str(e)
out["small"] = Counter.get_by_alias("small").get()
print(json.dumps(out))
""")
    # verify
    for key in ("new", "set"):
        assert "DATACLAY_MAX_VALUE_SIZE" in seen[key] and "field 'value'" in seen[key], seen
    assert seen["small"] == 1


def test_floods_of_malformed_requests_and_bad_tokens_write_a_bounded_log(make_cluster):
    # setup
    cluster = make_cluster(backends=1)
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    b = lm.get_backends(timeout=10)[0]
    backend = f"{b.host}:{b.port}"
    targets = [(f"127.0.0.1:{cluster.port}", "/dataclay.v1.LogicModule/NewSession",
                "/dataclay.v1.LogicModule/GetBackends"),
               (backend, "/dataclay.v1.DataService/CallMethod", "/dataclay.v1.DataService/GetStatus")]
    before = _log_bytes(cluster)
    # run: 2,000 malformed requests and 2,000 calls with a made-up token to each server
    started = time.monotonic()
    for address, malformed, guarded in targets:
        with grpc.insecure_channel(address) as channel:
            bad = channel.unary_unary(malformed, request_serializer=lambda x: x, response_deserializer=lambda x: x)
            tok = channel.unary_unary(guarded, request_serializer=lambda x: x, response_deserializer=lambda x: x)
            for i in range(2000):
                with pytest.raises(grpc.RpcError):
                    bad(b"\xff\xff\xff\xff\x0f\x01garbage", timeout=10)
                with pytest.raises(grpc.RpcError):
                    tok(b"", metadata=(("dataclay-session", f"made-up-{i}"),), timeout=10)
    # ... and 2,000 connections to each that send garbage instead of HTTP/2
    for address, _, _ in targets:
        host, port = address.rsplit(":", 1)
        for _ in range(2000):
            with socket.create_connection((host, int(port)), timeout=10) as s:
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(256)))
                s.settimeout(10)
                try:
                    s.recv(4096)
                except OSError:
                    pass
    time.sleep(1)  # the servers log a closed connection after answering it
    grown = _log_bytes(cluster) - before
    # ... and after the interval, one more: the count of what was left out is written
    time.sleep(max(0.0, 10.5 - (time.monotonic() - started)))
    with grpc.insecure_channel(targets[0][0]) as channel:
        with pytest.raises(grpc.RpcError):
            channel.unary_unary(targets[0][1], request_serializer=lambda x: x,
                                response_deserializer=lambda x: x)(b"\xff\xff\xff\xff\x0f\x01garbage", timeout=10)
    logs = "".join(p.read_text(errors="replace") for p in (cluster.home / "logs").glob("*.log"))
    # verify: at most ten lines of each kind per server per ten seconds, and the servers still serve
    # (unlimited, the connections alone wrote 10 MB: a stack trace of 2.6 KB each)
    assert grown < 96 << 10, f"{grown} bytes of log for 12,000 hostile calls and connections"
    assert "more 'malformed request' lines were left out" in logs
    assert lm.get_backends(timeout=10)
    lm.close()
