"""Why a connection could not be secured, found with a TLS handshake of our own (no request is
sent): whether the server speaks TLS at all, and if so whether its certificate is signed by the
cluster CA, is within its validity period and names the host dialled. Used only after a call
failed to connect, so it costs nothing on the way of a call that works."""
from __future__ import annotations

import datetime
import socket
import ssl

from dataclay._internal.rpc.tls import ClusterCa

TIMEOUT = 3.0
# OpenSSL verification codes (X509_V_ERR_*) that mean "not signed by a CA we trust"
_UNKNOWN_ISSUER = {2, 18, 19, 20, 21}
_EXPIRED, _NOT_YET_VALID = 10, 9
_NAME_MISMATCH = {62, 64}  # host name, IP address


def explain(address: str, ca: ClusterCa | None, server_name: str | None = None) -> str | None:
    """Why a connection to `address` with `ca` (None: plaintext) cannot be secured, or None when
    TLS is not the problem (for instance nothing listens there)."""
    host, port = _split(address)
    where = f"the server at {address}"
    try:
        sock = socket.create_connection((host, port), timeout=TIMEOUT)
    except OSError:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies chain and host name; trusts nothing yet
    context.set_alpn_protocols(["h2"])
    if ca is not None:
        context.load_verify_locations(cadata=ca.pem.decode("ascii", "replace"))
    try:
        with context.wrap_socket(sock, server_hostname=server_name or host):
            pass
    except ssl.SSLCertVerificationError as e:
        if ca is None:
            return _requires_tls(where, _peer(host, port, server_name))
        return _refused(where, ca, e, _peer(host, port, server_name), server_name or host)
    except (ssl.SSLError, OSError):
        return (f"{where} does not speak TLS (a plaintext server?), but this client requires TLS ({ca})"
                if ca is not None else None)
    finally:
        sock.close()
    return None if ca is not None else _requires_tls(where, _peer(host, port, server_name))


def _refused(where: str, ca: ClusterCa, e: ssl.SSLCertVerificationError, cert, name: str) -> str:
    subject = _subject(cert)
    if e.verify_code in _UNKNOWN_ISSUER:
        issuer = f", issued by {cert.issuer.rfc4514_string()}" if cert is not None else ""
        return (f"{where} presents a certificate ({subject}{issuer}) that the cluster CA in {ca} did not sign: "
                f"unknown CA")
    if e.verify_code == _EXPIRED:
        when = f" on {_utc(cert.not_valid_after_utc)}" if cert is not None else ""
        return f"{where} presents a certificate ({subject}) that expired{when}: certificate expired"
    if e.verify_code == _NOT_YET_VALID:
        when = f" before {_utc(cert.not_valid_before_utc)}" if cert is not None else " yet"
        return f"{where} presents a certificate ({subject}) that is not valid{when}: certificate not yet valid"
    if e.verify_code in _NAME_MISMATCH:
        return f"{where} presents a certificate ({subject}) that does not name {name}: host name mismatch"
    return f"{where} presents a certificate ({subject}) that was refused: {e.verify_message}"


def _requires_tls(where: str, cert) -> str:
    return (f"{where} requires TLS (it presents the certificate of {_subject(cert)}), but this client connects "
            f"in plaintext: give it the cluster's CA certificate (DATACLAY_TLS_CA)")


def _peer(host: str, port: int, server_name: str | None):
    """The server's certificate, fetched without trusting it, only to name it in a message."""
    from cryptography import x509
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # read-only look at what the server presents; nothing is sent
    try:
        with socket.create_connection((host, port), timeout=TIMEOUT) as sock, \
                context.wrap_socket(sock, server_hostname=server_name or host) as tls:
            der = tls.getpeercert(binary_form=True)
        return x509.load_der_x509_certificate(der) if der else None
    except (OSError, ValueError):
        return None


def _subject(cert) -> str:
    return cert.subject.rfc4514_string() if cert is not None else "unknown subject"


def _utc(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)
