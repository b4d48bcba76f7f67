"""The cluster CA a pyclay process trusts: with one, every channel it opens uses TLS and accepts
only certificates that CA signed; without one, channels are plaintext. pyclay presents no
certificate of its own: clients and execution environments act in their users' sessions."""
from __future__ import annotations

import pathlib
from dataclasses import dataclass

from dataclay.exceptions import InvalidArgumentError


@dataclass(frozen=True)
class ClusterCa:
    """The CA certificate(s) read from `path` when the configuration was loaded."""

    path: str
    pem: bytes
    setting: str = "DATACLAY_TLS_CA"

    @classmethod
    def read(cls, path: str, setting: str = "DATACLAY_TLS_CA", where: str = "") -> "ClusterCa":
        """Reads and checks the CA file; a missing, unreadable or non-certificate file raises
        InvalidArgumentError naming `setting` and the path (never the contents)."""
        suffix = f" {where}" if where else ""
        try:
            pem = pathlib.Path(path).expanduser().read_bytes()
        except FileNotFoundError:
            raise InvalidArgumentError(f"{setting}={path}: no such file{suffix}") from None
        except PermissionError:
            raise InvalidArgumentError(f"{setting}={path}: cannot read it (permission denied){suffix}") from None
        except OSError as e:
            raise InvalidArgumentError(f"{setting}={path}: cannot read it ({e.strerror or e}){suffix}") from None
        from cryptography import x509  # only TLS users pay for the import
        try:
            x509.load_pem_x509_certificates(pem)
        except ValueError:
            raise InvalidArgumentError(f"{setting}={path}: not a PEM certificate "
                                       f"(expected -----BEGIN CERTIFICATE-----){suffix}") from None
        return cls(path=str(path), pem=pem, setting=setting)

    def __str__(self) -> str:
        return f"{self.setting}={self.path}"
