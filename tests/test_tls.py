"""TLS on real local clusters (`dataclay start --tls`), with Python clients: the whole flow over
TLS (client -> Logic Module and backends, backend <-> backend, Logic Module -> backend, execution
environment -> Data Service), refusals that name their cause, private keys that reach only the
servers they belong to, servers listening on loopback only, and TLS kept on by a later start."""
import contextlib
import json
import os
import pathlib
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from conftest import started_cluster
from harness.cluster import REPO
from dataclay._internal.cli.local.certificates import issue, key_pem, make_ca
from dataclay._internal.cli.common.settings import ClusterSettings

pytestmark = pytest.mark.timeout(600)

PRELUDE = textwrap.dedent("""
    import json, sys
    from dataclay import api, getRuntime
    from dataclay.exceptions import DataClayException
""")
LOOPBACK = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}


@pytest.fixture(scope="module")
def tls_cluster():
    """A two-backend kv cluster started with --tls, test models registered."""
    shared = started_cluster(tls=True)
    yield shared
    shared.stop()


def run(cluster, body: str, **env: str) -> dict:
    """Runs `body` in a fresh Python process with the cluster's environment plus `env`; returns
    the JSON of its last output line."""
    result = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], env={**cluster.env, **env},
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"client failed:\n{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return json.loads(result.stdout.strip().splitlines()[-1])


INIT_OUTCOME = """
    try:
        api.init()
        print(json.dumps({"error": None}))
    except DataClayException as e:
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""


def test_a_tls_cluster_serves_persistence_methods_aliases_and_replicas(tls_cluster):
    # setup: objects on both backends; the method reads a friend stored on the other backend
    made = run(tls_cluster, """
        api.init()
        from people.model import Person
        b = sorted(api.get_backends())
        bob = Person("bob", 40)
        bob.make_persistent(backend_id=b[1])
        alice = Person("alice", 30)
        alice.make_persistent(alias="tls-alice", backend_id=b[0])
        alice.add_friend(bob)
        print(json.dumps({"age": alice.birthday(), "friends": alice.friend_names(), "id": alice.getID(),
                          "location": alice.get_location(), "backends": b}))
    """)
    # run: a second client finds it by alias, calls it, and replicates it to the other backend
    seen = run(tls_cluster, """
        api.init()
        from people.model import Person
        from dataclay._internal.rpc import DataServiceClient
        from dataclay._internal.serialization.decoder import loads
        b = sorted(api.get_backends())
        p = Person.get_by_alias("tls-alice")
        age = p.birthday()
        p.new_replica(b[1])
        after = p.birthday()
        runtime = getRuntime()
        replica = DataServiceClient(api.get_backends()[b[1]].address, runtime.session.token, tls=runtime.config.tls)
        on_replica = loads(replica.get_field(p.getID(), "age"), runtime.policy, "age")
        replica.close()
        print(json.dumps({"id": p.getID(), "age": age, "after": after, "on_replica": on_replica,
                          "locations": sorted(p.get_all_locations())}))
    """)
    # verify
    assert (made["age"], made["friends"]) == (31, ["bob"])
    assert made["location"] == made["backends"][0]
    assert seen["id"] == made["id"] and seen["age"] == 32
    assert seen["locations"] == made["backends"]
    assert seen["after"] == seen["on_replica"] == 33
    status = tls_cluster.status()
    assert f"TLS: on for every connection (clients trust DATACLAY_TLS_CA={tls_cluster.home / 'tls' / 'ca.pem'}" \
        in status
    assert status.count("python up") == 2


def test_every_server_and_environment_listens_on_loopback_only(tls_cluster):
    # setup
    pids = tls_cluster.pids()
    processes = [*pids.values(), *(tls_cluster.ee_pid(name) for name in pids if name.startswith("backend-"))]
    state = tls_cluster.state()
    ports = {state["lm"]["port"], *(b["port"] for b in state["backends"])}
    call_ports = set(_call_ports(tls_cluster).values())
    # run
    listening = _listening(processes)
    # verify: each backend's gRPC port and call port, nothing else
    assert len(call_ports) == 2 and not call_ports & ports
    assert {port for _, port in listening} == ports | call_ports
    assert {address for address, _ in listening} <= LOOPBACK, listening


def test_private_keys_reach_only_the_server_they_belong_to(tls_cluster):
    # setup
    tls = tls_cluster.home / "tls"
    pids = tls_cluster.pids()
    ca_key = ca_key_file(tls_cluster)
    # verify: keys readable by their owner only, the CA's outside the home
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in tls.glob("*.key")} == {
        name: "0o600" for name in ("logicmodule.key", "backend-1.key", "backend-2.key")}
    assert oct(ca_key.stat().st_mode & 0o777) == "0o600" and oct(ca_key.parent.stat().st_mode & 0o777) == "0o700"
    assert not ca_key.is_relative_to(tls_cluster.home)
    for name, pid in pids.items():
        env = _environ(pid)
        assert str(ca_key.parent).encode() not in pathlib.Path(f"/proc/{pid}/environ").read_bytes()
        assert env["DATACLAY_TLS_KEY"] == str(tls / f"{name}.key")
        assert env["DATACLAY_TLS_CERT"] == str(tls / f"{name}.pem")
        assert b".key" not in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    for name in (n for n in pids if n.startswith("backend-")):
        # an execution environment has no network: its backend relays its calls, so it gets no TLS file at all
        ee = _environ(tls_cluster.ee_pid(name))
        assert not any(key.startswith("DATACLAY_TLS") for key in ee)
        assert b".key" not in pathlib.Path(f"/proc/{tls_cluster.ee_pid(name)}/cmdline").read_bytes()
    logs = "\n".join(p.read_text(errors="replace") for p in (tls_cluster.home / "logs").glob("*.log"))
    assert "PRIVATE KEY" not in logs and ".key" not in logs


def test_the_call_port_serves_tls_only_and_clients_use_it(tls_cluster):
    # setup
    import ssl
    from dataclay._internal.proto import dataservice_pb2 as ds_pb2
    port = next(iter(_call_ports(tls_cluster).values()))
    # run: frames in plaintext, then a TLS handshake from a client that does not trust the cluster's CA
    with socket.create_connection(("127.0.0.1", port), timeout=30) as plain:
        frame = ds_pb2.CallFrame(id=1, open=ds_pb2.OpenCalls(session="x")).SerializeToString()
        plain.sendall(len(frame).to_bytes(4, "big") + frame)
        answered = plain.recv(65536)
    untrusting = ssl.create_default_context()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            untrusting.wrap_socket(raw, server_hostname="127.0.0.1")
    made = run(tls_cluster, """
        api.init()
        from people.model import Counter
        from dataclay._internal.runtime import current
        c = Counter(1); c.make_persistent()
        values = [c.increment(), c.get(), c.value]
        ds = current.get_runtime().router.data_service(c.get_location())
        port = ds._calls.port(ds._ask_call_port)
        print(json.dumps({"values": values, "connections": len(port._connections) if port else 0}))
    """)
    # verify: the plaintext frames got no reply of the protocol (only TLS's alert, or nothing)
    assert not answered.startswith(b"\0\0")
    assert made == {"values": [2, 2, 2], "connections": 1}


def _call_ports(cluster) -> dict[str, int]:
    """Backend address -> the call port it names (GetCallPort, in an administrator's session)."""
    from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
    from dataclay._internal.proto import common_pb2
    from dataclay._internal.rpc.tls import ClusterCa
    ca = ClusterCa.read(str(cluster.home / "tls" / "ca.pem"))
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}", tls=ca)
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    ports = {}
    for b in lm.get_backends():
        ds = DataServiceClient(f"{b.host}:{b.port}", lm.token, tls=ca)
        ports[f"{b.host}:{b.port}"] = ds._call(ds._stub.GetCallPort, common_pb2.Empty()).port
        ds.close()
    lm.close_session()
    lm.close()
    return ports


def test_a_stolen_backend_token_is_refused_without_a_cluster_server_certificate(tls_cluster):
    # setup: an attacker who read the cluster secret opens a backend session, over TLS but with no
    # certificate of the cluster (it trusts the CA, as any client does)
    import hashlib
    import hmac
    import uuid
    from dataclay._internal.rpc import LogicModuleClient
    from dataclay._internal.proto import common_pb2, logicmodule_pb2, logicmodule_pb2_grpc
    secret = (tls_cluster.home / "cluster.secret").read_text().strip().encode()
    backend, now, nonce = str(uuid.uuid4()), int(time.time() * 1000), uuid.uuid4().hex
    proof = hmac.new(secret, f"dataclay-backend-session\n{backend}\n{now}\n{nonce}".encode(), hashlib.sha256).digest()
    import grpc
    ca = (tls_cluster.home / "tls" / "ca.pem").read_bytes()
    channel = grpc.secure_channel(f"127.0.0.1:{tls_cluster.port}", grpc.ssl_channel_credentials(ca))
    stub = logicmodule_pb2_grpc.LogicModuleStub(channel)
    token = stub.NewBackendSession(logicmodule_pb2.NewBackendSessionRequest(
        backend_id=backend, issued_at_ms=now, nonce=nonce, proof=proof)).token
    # run: a backend-only call with it
    with pytest.raises(grpc.RpcError) as refused:
        stub.GetBackends(common_pb2.Empty(), metadata=(("dataclay-session", token),))
    channel.close()
    # verify
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "certificate" in refused.value.details()


def test_a_plaintext_client_is_told_the_cluster_requires_tls(tls_cluster, tmp_path):
    # setup: the cluster's client file without its CA line
    lines = (tls_cluster.home / "client.properties").read_text().splitlines()
    (tmp_path / "client.properties").write_text("\n".join(l for l in lines if "TLS" not in l) + "\n")
    # run
    outcome = run(tls_cluster, INIT_OUTCOME, DATACLAY_HOME=str(tmp_path))
    cmd = subprocess.run([str(pathlib.Path(sys.executable).parent / "dataclaycmd"), "GetBackends", "admin", "-"],
                         env={**tls_cluster.env, "DATACLAY_HOME": str(tmp_path)}, capture_output=True, text=True,
                         timeout=120)
    # verify
    assert outcome["error"] == "BackendUnavailableError"
    assert f"127.0.0.1:{tls_cluster.port} requires TLS" in outcome["message"], outcome
    assert "DATACLAY_TLS_CA" in outcome["message"]
    assert cmd.returncode == 1 and "requires TLS" in cmd.stderr, cmd.stderr


def test_a_client_trusting_another_ca_is_told_the_ca_is_unknown(tls_cluster, tmp_path):
    # setup
    other, _ = make_ca("not the cluster's CA")
    (tmp_path / "other-ca.pem").write_bytes(other.public_bytes(serialization.Encoding.PEM))
    # run
    outcome = run(tls_cluster, INIT_OUTCOME, DATACLAY_TLS_CA=str(tmp_path / "other-ca.pem"))
    # verify
    assert outcome["error"] == "BackendUnavailableError"
    assert "unknown CA" in outcome["message"] and str(tmp_path / "other-ca.pem") in outcome["message"], outcome
    assert "CN=logicmodule" in outcome["message"]


def test_a_missing_ca_file_is_refused_at_start_naming_the_key_and_path(tls_cluster, tmp_path):
    # setup
    missing = tmp_path / "gone" / "ca.pem"
    # run
    outcome = run(tls_cluster, INIT_OUTCOME, DATACLAY_TLS_CA=str(missing))
    cmd = subprocess.run([str(pathlib.Path(sys.executable).parent / "dataclaycmd"), "WaitForDataClayToBeAlive", "1",
                          "1"], env={**tls_cluster.env, "DATACLAY_TLS_CA": str(missing)}, capture_output=True,
                         text=True, timeout=120)
    # verify
    assert outcome == {"error": "InvalidArgumentError",
                       "message": f"DATACLAY_TLS_CA={missing}: no such file (from {tls_cluster.home}/client.properties "
                                  f"or the environment)"}
    assert cmd.returncode != 0 and f"DATACLAY_TLS_CA={missing}: no such file" in cmd.stderr, cmd.stderr


def test_an_expired_server_certificate_is_named_with_its_date(tls_cluster, tmp_path):
    with expired_logic_module(tls_cluster, tmp_path) as port:
        # run
        outcome = run(tls_cluster, INIT_OUTCOME, DATACLAY_PORT=str(port))
    # verify
    assert outcome["error"] == "BackendUnavailableError"
    assert f"127.0.0.1:{port} presents a certificate (CN=expired-lm,O=dataClay) that expired on " \
           f"2001-01-31T00:00:00Z: certificate expired" in outcome["message"], outcome


def test_a_later_start_keeps_tls_and_its_ca(make_cluster):
    # setup
    cluster = make_cluster(backends=1, tls=True)
    ca = (cluster.home / "tls" / "ca.pem").read_bytes()
    cluster.stop_processes()
    # run: started again without --tls
    restarted = cluster.dataclay("start")
    outcome = run(cluster, """
        api.init()
        from people.model import Counter
        c = Counter(4)
        c.make_persistent()
        print(json.dumps({"value": c.increment(), "tls": getRuntime().config.tls is not None}))
    """)
    # verify
    assert restarted.returncode == 0, restarted.stderr
    assert "TLS on every connection" in restarted.stdout
    assert cluster.state()["tls"] is True
    assert (cluster.home / "tls" / "ca.pem").read_bytes() == ca
    assert outcome == {"value": 5, "tls": True}
    assert "TLS: on for every connection" in cluster.status()


def ca_key_file(cluster) -> pathlib.Path:
    """Where `dataclay start --tls` keeps the cluster CA's key (outside the cluster home)."""
    return ClusterSettings.from_env(cluster.env).ca_key_dir / "ca.key"


@contextlib.contextmanager
def expired_logic_module(cluster, tmp_path: pathlib.Path):
    """A Logic Module of its own (no backends) serving a certificate the cluster's CA signed that
    expired on 2001-01-31; yields its port."""
    tls = cluster.home / "tls"
    tmp_path.mkdir(parents=True, exist_ok=True)
    ca = x509.load_pem_x509_certificate((tls / "ca.pem").read_bytes())
    ca_key = serialization.load_pem_private_key(ca_key_file(cluster).read_bytes(), password=None)
    cert, key = issue(ca, ca_key, "expired-lm", ("127.0.0.1", "localhost"),
                      not_before=_utc(2001, 1, 1), days=30)
    (tmp_path / "expired.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "expired.key").write_bytes(key_pem(key))
    os.chmod(tmp_path / "expired.key", 0o600)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    secret = tmp_path / "cluster.secret"
    secret.write_text("expired-certificate-test-secret-0123456789\n")
    os.chmod(secret, 0o600)
    env.update({"DATACLAY_HOME": str(tmp_path / "home"), "DATACLAY_PORT": str(port),
                "DATACLAY_TLS_CA": str(tls / "ca.pem"), "DATACLAY_TLS_CERT": str(tmp_path / "expired.pem"),
                "DATACLAY_TLS_KEY": str(tmp_path / "expired.key"), "DATACLAY_CLUSTER_SECRET_FILE": str(secret)})
    log = tmp_path / "lm.log"
    with open(log, "wb") as out:
        lm = subprocess.Popen(["java", "-jar", str(REPO / "pyclay/dataclay/_internal/jars/logicmodule.jar")], env=env,
                              stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "listening on port" not in log.read_text(errors="replace"):
            assert lm.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        yield port
    finally:
        lm.kill()
        lm.wait(timeout=30)


def _utc(year: int, month: int, day: int):
    import datetime
    return datetime.datetime(year, month, day, tzinfo=datetime.timezone.utc)


def _environ(pid: int) -> dict[str, str]:
    raw = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def _listening(pids) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state that one of `pids` holds."""
    inodes = set()
    for pid in pids:
        for fd in pathlib.Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in pathlib.Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                address, port = fields[1].split(":")
                found.add((_address(address), int(port, 16)))
    return found


def _address(hex_address: str) -> str:
    """An address as /proc/net/tcp{,6} writes it (32-bit words in host order) as text."""
    raw = b"".join(bytes.fromhex(hex_address[i:i + 8])[::-1] for i in range(0, len(hex_address), 8))
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)
