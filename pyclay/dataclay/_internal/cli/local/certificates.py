"""The private CA and server certificates of a local cluster started with `dataclay start --tls`.

They live in $DATACLAY_HOME/tls (mode 0700): `ca.pem` (all a client needs), and `<server>.pem` /
`<server>.key` for the Logic Module and each backend. The CA's key, `ca.key`, is kept out of the
cluster home, in a directory of its own (mode 0700) under the user's configuration directory
(settings.py, `ca_key_dir`): the servers and whatever runs in them are told nothing of it, a copy
of the home does not carry it, and a later start still issues the certificates it needs. Only the
launcher reads it. Keys are ECDSA P-256 in PKCS#8 PEM; every file is mode 0600. Each server is
told the paths of its own pair only. A server certificate serves and also identifies its server
when it calls another one (mutual TLS), so it carries both the serverAuth and clientAuth usages."""
from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
import pathlib
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.common import erasure
from dataclay._internal.cli.common.cluster_state import write_private
from dataclay._internal.private_paths import ensure_private_dir

CA_DAYS = 3650
SERVER_DAYS = 825
RENEW_WITHIN = datetime.timedelta(days=30)
LOCAL_NAMES = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class CertificatePair:
    """A certificate file and the file of its private key."""

    cert: pathlib.Path
    key: pathlib.Path


def new_key() -> ec.EllipticCurvePrivateKey:
    """A fresh ECDSA P-256 key (fast handshakes in both grpc-java and grpc-core)."""
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key) -> bytes:
    """`key` as unencrypted PKCS#8 PEM, the form both gRPC stacks read."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def make_ca(common_name: str, not_before: datetime.datetime | None = None,
            days: int = CA_DAYS) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A self-signed CA certificate that may sign server certificates only (path length 0)."""
    key = new_key()
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "dataClay"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    start = not_before or _now() - datetime.timedelta(minutes=5)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return cert, key


def issue(ca: x509.Certificate, ca_key, common_name: str, hosts, not_before: datetime.datetime | None = None,
          days: int = SERVER_DAYS) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A certificate for `hosts` (names or IP addresses, its subject alternative names), signed by `ca`."""
    key = new_key()
    start = not_before or _now() - datetime.timedelta(minutes=5)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "dataClay"),
                                     x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName([_general_name(h) for h in hosts]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


class ClusterCertificates:
    """The certificates of the local cluster whose TLS directory is `directory`; the CA's key is
    in `key_dir`."""

    def __init__(self, directory: pathlib.Path, key_dir: pathlib.Path):
        self.directory = directory
        self.key_dir = key_dir

    @property
    def ca_file(self) -> pathlib.Path:
        """The CA certificate: the one file clients need (DATACLAY_TLS_CA)."""
        return self.directory / "ca.pem"

    @property
    def ca_key_file(self) -> pathlib.Path:
        """The CA's private key, outside the cluster home."""
        return self.key_dir / "ca.key"

    @property
    def _old_ca_key_file(self) -> pathlib.Path:
        return self.directory / "ca.key"  # where releases before 21 kept it

    def ensure_ca(self) -> None:
        """Creates the cluster CA unless it exists; an existing CA is kept (clients trust it). A CA
        key an earlier release left in the TLS directory is moved out of it."""
        ensure_private_dir(self.directory, "the TLS directory")
        ensure_private_dir(self.key_dir, "the CA key's directory")
        note = self.key_dir / "cluster"
        if not note.exists():  # for whoever finds the directory: which cluster's CA this is
            write_private(note, f"the CA key of the dataClay cluster in {self.directory.parent}\n")
        self._move_old_key()
        if self.ca_file.exists() or self.ca_key_file.exists():
            self._load_ca()
            return
        # a common name holds at most 64 characters: the home is named by a digest of its path
        digest = hashlib.sha256(str(self.directory.parent.resolve()).encode()).hexdigest()[:12]
        cert, key = make_ca(f"dataClay local cluster CA {digest}")
        write_private(self.ca_key_file, key_pem(key).decode())
        write_private(self.ca_file, cert.public_bytes(serialization.Encoding.PEM).decode())

    def erase_ca_key(self) -> list[str]:
        """Overwrites and removes the CA's key and its directory (`dataclay stop --erase`)."""
        if not self.key_dir.is_dir():
            return []
        files, size = erasure.erase_tree(self.key_dir)
        return [f"{self.key_dir} (the CA key: {files} files, {size} bytes)"]

    def _move_old_key(self) -> None:
        old = self._old_ca_key_file
        if old == self.ca_key_file or not os.path.lexists(old):
            return
        text = old.read_text()
        if not self.ca_key_file.exists():
            write_private(self.ca_key_file, text)
        elif self.ca_key_file.read_text() != text:
            raise InvalidArgumentError(
                f"there are two different CA keys, {old} and {self.ca_key_file}: keep the one that signed "
                f"{self.ca_file} and remove the other, then start again")
        erasure.erase_tree(old)

    def server(self, name: str, hosts=LOCAL_NAMES) -> CertificatePair:
        """The certificate of server `name` for `hosts`: the existing one while it is signed by this
        CA, names every host and has more than 30 days left; otherwise a new one."""
        pair = CertificatePair(self.directory / f"{name}.pem", self.directory / f"{name}.key")
        ca, ca_key = self._load_ca()
        if not _usable(pair, ca, hosts):
            cert, key = issue(ca, ca_key, name, hosts, days=SERVER_DAYS)
            write_private(pair.key, key_pem(key).decode())
            write_private(pair.cert, cert.public_bytes(serialization.Encoding.PEM).decode())
        return pair

    def _load_ca(self):
        try:
            cert = x509.load_pem_x509_certificate(self.ca_file.read_bytes())
            key = serialization.load_pem_private_key(self.ca_key_file.read_bytes(), password=None)
        except (OSError, ValueError) as e:
            raise InvalidArgumentError(
                f"the cluster CA ({self.ca_file}, its key {self.ca_key_file}) is unusable ({e}); clients trust "
                f"it, so it is not replaced: restore both files, or remove both to make a new CA (and give "
                f"clients the new ca.pem)") from None
        return cert, key


def _usable(pair: CertificatePair, ca: x509.Certificate, hosts) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(pair.cert.read_bytes())
        serialization.load_pem_private_key(pair.key.read_bytes(), password=None)
    except (OSError, ValueError):
        return False
    try:
        cert.verify_directly_issued_by(ca)
        named = set(cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    return cert.not_valid_after_utc - _now() > RENEW_WITHIN and {_general_name(h) for h in hosts} <= named


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)
