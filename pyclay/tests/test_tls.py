"""TLS channels over real handshakes with a gRPC server in this process: what a client is told
when the connection cannot be secured, the certificate name a client checks, and the CA file
read at start. The certificates are made for each test by the local cluster's certificate code."""
import datetime
from concurrent import futures

import grpc
import pytest
from cryptography.hazmat.primitives import serialization

from dataclay.exceptions import BackendUnavailableError, InvalidArgumentError
from dataclay._internal.cli.local.certificates import issue, key_pem, make_ca
from dataclay._internal.proto import logicmodule_pb2, logicmodule_pb2_grpc
from dataclay._internal.rpc import LogicModuleClient
from dataclay._internal.rpc.tls import ClusterCa

LOCAL = ("127.0.0.1", "localhost")


class _Health(logicmodule_pb2_grpc.LogicModuleServicer):
    def Health(self, request, context):
        return logicmodule_pb2.HealthResponse(version="tls-test")


def _pem(cert) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture
def pki(tmp_path):
    """A cluster CA (ca.pem) and another one (other-ca.pem) in tmp_path; `issue(...)` signs with the first."""
    ca, ca_key = make_ca("test cluster CA")
    other, _ = make_ca("some other CA")
    (tmp_path / "ca.pem").write_bytes(_pem(ca))
    (tmp_path / "other-ca.pem").write_bytes(_pem(other))

    def server_pair(hosts=LOCAL, **validity):
        cert, key = issue(ca, ca_key, "server", hosts, **validity)
        return key_pem(key), _pem(cert)

    return tmp_path, server_pair


@pytest.fixture
def serve():
    """Starts Health servers on 127.0.0.1 (TLS with the given key and certificate, or plaintext)."""
    started = []

    def start(pair=None) -> int:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        logicmodule_pb2_grpc.add_LogicModuleServicer_to_server(_Health(), server)
        if pair is None:
            port = server.add_insecure_port("127.0.0.1:0")
        else:
            port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([pair]))
        server.start()
        started.append(server)
        return port

    yield start
    for server in started:
        server.stop(0)


def _health(port: int, tls=None, server_name=None) -> str:
    client = LogicModuleClient(f"127.0.0.1:{port}", tls=tls, server_name=server_name)
    try:
        return client.health(timeout=10)
    finally:
        client.close()


def _refusal(port: int, tls=None, server_name=None) -> str:
    with pytest.raises(BackendUnavailableError) as caught:
        _health(port, tls, server_name)
    return str(caught.value)


def test_a_client_with_the_cluster_ca_is_served(pki, serve):
    home, server_pair = pki
    port = serve(server_pair())
    assert _health(port, ClusterCa.read(str(home / "ca.pem"))) == "tls-test"


def test_a_plaintext_client_is_told_the_server_requires_tls(pki, serve):
    _, server_pair = pki
    port = serve(server_pair())
    message = _refusal(port)
    assert f"127.0.0.1:{port} requires TLS" in message and "DATACLAY_TLS_CA" in message


def test_a_client_trusting_another_ca_is_told_the_ca_is_unknown(pki, serve):
    home, server_pair = pki
    port = serve(server_pair())
    message = _refusal(port, ClusterCa.read(str(home / "other-ca.pem")))
    assert "unknown CA" in message and f"DATACLAY_TLS_CA={home / 'other-ca.pem'}" in message


def test_a_client_is_told_the_server_certificate_expired(pki, serve):
    home, server_pair = pki
    port = serve(server_pair(not_before=datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc), days=30))
    message = _refusal(port, ClusterCa.read(str(home / "ca.pem")))
    assert "expired on 2001-01-31T00:00:00Z" in message


def test_a_tls_client_is_told_the_server_speaks_plaintext(pki, serve):
    home, _ = pki
    port = serve()
    assert "does not speak TLS" in _refusal(port, ClusterCa.read(str(home / "ca.pem")))


def test_the_certificate_is_checked_against_the_server_name_when_one_is_given(pki, serve):
    home, server_pair = pki
    port = serve(server_pair(hosts=("dc-node.example",)))
    ca = ClusterCa.read(str(home / "ca.pem"))
    assert _health(port, ca, server_name="dc-node.example") == "tls-test"
    assert "does not name 127.0.0.1: host name mismatch" in _refusal(port, ca)


def test_a_missing_or_malformed_ca_file_is_refused_naming_the_key(tmp_path):
    (tmp_path / "bad.pem").write_text("not a certificate\n")
    with pytest.raises(InvalidArgumentError, match=f"DATACLAY_TLS_CA={tmp_path / 'none.pem'}: no such file"):
        ClusterCa.read(str(tmp_path / "none.pem"))
    with pytest.raises(InvalidArgumentError, match="not a PEM certificate"):
        ClusterCa.read(str(tmp_path / "bad.pem"))
