"""Signatures of snapshots (docs/internals.md "Snapshots"). `dataclay export` signs a snapshot's
manifest, which holds every data file's size and SHA-256, with an Ed25519 key; `dataclay import`
takes a snapshot only when a key it trusts signed it: its own, and the public keys given with
--trust. Nothing else in a snapshot is believed before that.

The signing key is `snapshot-signing.key` in DATACLAY_HOME (a Slurm job: in the DATACLAY_HOME
`dataclay slurm` was started with), or the file --signing-key names. It is made on first need,
mode 0600, with its public half beside it, `snapshot-signing.pub`, to hand to whoever should trust
your snapshots. The signature is `signature.json` in the snapshot: the signer's public key and the
signature of a fixed context string followed by manifest.json's exact bytes."""
from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
import os
import pathlib
import secrets
import stat

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.snapshot import snapshot_format as fmt

KEY_FILE = "snapshot-signing.key"
PUBLIC_FILE = "snapshot-signing.pub"
SIGNATURE = "signature.json"
_FORMAT = "dataclay-snapshot-signature"
_CONTEXT = b"dataclay-snapshot-manifest-v1\x00"
_KEY_BYTES = 32


class UntrustedSnapshotError(fmt.SnapshotError):
    """The snapshot is unsigned, signed by a key the import does not trust, or changed after signing."""


def default_key(home: pathlib.Path) -> pathlib.Path:
    """Where the signing key of DATACLAY_HOME `home` lives."""
    return pathlib.Path(home).expanduser().absolute() / KEY_FILE


def fingerprint(public: Ed25519PublicKey) -> str:
    """How a key is named to people: SHA256: and the unpadded base64 of the hash of its raw bytes."""
    digest = hashlib.sha256(_raw(public)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def signing_key(path: pathlib.Path) -> Ed25519PrivateKey:
    """The private key in `path`, made there (0600, with its .pub beside it) when there is none.
    Refuses a key file that is a link, not the caller's, or readable by anyone else."""
    path = pathlib.Path(path).expanduser().absolute()
    key = _load_private(path)
    if key is not None:
        if not public_key_file(path).exists():
            _write_public(path, key)
        return key
    _check_key_dir(path.parent)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    # written under a temporary name, then linked into place: nobody ever reads half a key, and
    # when two exports make one at once, the first link wins and the other uses that key
    temporary = path.parent / f".{path.name}.{secrets.token_hex(8)}"
    _write_private(temporary, pem)
    try:
        os.link(temporary, path)
    except FileExistsError:
        return _load_private(path)
    finally:
        temporary.unlink(missing_ok=True)
    _write_public(path, key)
    return key


def public_key_file(key: pathlib.Path) -> pathlib.Path:
    """Where the public half of the key in `key` is written: snapshot-signing.pub beside snapshot-signing.key."""
    return key.with_name(key.stem + ".pub") if key.suffix == ".key" else key.with_name(key.name + ".pub")


def own_public_key(path: pathlib.Path) -> Ed25519PublicKey | None:
    """The public half of the signing key in `path`, or None when there is no key there yet."""
    key = _load_private(pathlib.Path(path).expanduser().absolute())
    return None if key is None else key.public_key()


def public_pem(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def read_public_key(path: str) -> Ed25519PublicKey:
    """An Ed25519 public key from a file (PEM, as snapshot-signing.pub, or one OpenSSH line)."""
    where = pathlib.Path(path).expanduser()
    try:
        data = where.read_bytes()
    except OSError as e:
        raise InvalidArgumentError(f"--trust {path}: cannot read it ({e.strerror})") from None
    try:
        if data.lstrip().startswith(b"ssh-ed25519 "):
            public = serialization.load_ssh_public_key(data.strip())
        else:
            public = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise InvalidArgumentError(f"--trust {path}: not a public key (give the snapshot-signing.pub of the key "
                                   f"that signs the snapshots)") from None
    if not isinstance(public, Ed25519PublicKey):
        raise InvalidArgumentError(f"--trust {path}: not an Ed25519 key, which snapshots are signed with")
    return public


@dataclasses.dataclass
class TrustedKeys:
    """The keys an import trusts, each with where it came from (for messages)."""

    keys: dict = dataclasses.field(default_factory=dict)   # fingerprint -> description

    def add(self, public: Ed25519PublicKey, description: str) -> None:
        self.keys.setdefault(fingerprint(public), description)

    def describe(self) -> str:
        if not self.keys:
            return "no key at all"
        return "; ".join(f"{name} ({where})" for name, where in self.keys.items())


def trusted_keys(own_key: pathlib.Path, trust: list) -> TrustedKeys:
    """The import's own key's public half (when it has one yet) and the public keys of --trust."""
    keys = TrustedKeys()
    own = own_public_key(own_key)
    if own is not None:
        keys.add(own, f"your signing key {own_key}")
    for path in trust:
        keys.add(read_public_key(path), f"--trust {path}")
    return keys


def sign(directory: pathlib.Path, manifest_bytes: bytes, key: Ed25519PrivateKey) -> None:
    """Writes `directory`'s signature.json (0600, durably) for the manifest `manifest_bytes`."""
    document = {"format": _FORMAT, "version": 1, "algorithm": "ed25519", "key": fingerprint(key.public_key()),
                "public_key": base64.b64encode(_raw(key.public_key())).decode(),
                "signature": base64.b64encode(key.sign(_CONTEXT + manifest_bytes)).decode()}
    temporary = directory / (SIGNATURE + ".partial")
    with fmt.create_private_file(temporary) as out:
        out.write((json.dumps(document, indent=2) + "\n").encode())
        out.flush()
        os.fsync(out.fileno())
    os.rename(temporary, directory / SIGNATURE)
    fmt.sync_dir(directory)


def verify(name: str, manifest_bytes: bytes, signature_bytes: bytes | None, trusted: TrustedKeys) -> str:
    """Checks that a trusted key signed exactly `manifest_bytes`; who signed it, for people.
    UntrustedSnapshotError saying what is wrong and what to pass to trust it."""
    if signature_bytes is None:
        raise UntrustedSnapshotError(
            f"{name} is not signed (it has no {SIGNATURE}): it was written by hand or by a dataClay older than "
            f"snapshot signatures, and dataClay imports only snapshots signed by a key it trusts. If you vouch for "
            f"its whole content, export it again from a cluster that holds it")
    try:
        document = json.loads(signature_bytes)
        if not isinstance(document, dict) or document.get("format") != _FORMAT or document.get("version") != 1 \
                or document.get("algorithm") != "ed25519":
            raise ValueError("not a version 1 Ed25519 snapshot signature")
        raw = base64.b64decode(document["public_key"], validate=True)
        signature = base64.b64decode(document["signature"], validate=True)
        if len(raw) != _KEY_BYTES:
            raise ValueError("the public key is not 32 bytes")
        public = Ed25519PublicKey.from_public_bytes(raw)
    except (ValueError, KeyError, TypeError, binascii.Error) as e:
        raise UntrustedSnapshotError(f"{name}'s {SIGNATURE} is malformed ({e}): the snapshot cannot be "
                                     f"authenticated") from None
    try:
        public.verify(signature, _CONTEXT + manifest_bytes)
    except InvalidSignature:
        raise UntrustedSnapshotError(f"{name} was altered after it was signed: its {fmt.MANIFEST} does not match "
                                     f"its signature (by key {fingerprint(public)}); import it from an unaltered "
                                     f"copy") from None
    signer = fingerprint(public)
    if signer not in trusted.keys:
        raise UntrustedSnapshotError(
            f"{name} is signed by key {signer}, which this import does not trust (it trusts {trusted.describe()}). "
            f"If you trust whoever exported it, pass --trust FILE with their public key: the {PUBLIC_FILE} beside "
            f"the key that signed it (in the DATACLAY_HOME it was exported with), and check its fingerprint with them")
    return f"key {signer} (trusted: {trusted.keys[signer]})"


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _load_private(path: pathlib.Path) -> Ed25519PrivateKey | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InvalidArgumentError(f"snapshot signing key {path}: cannot open it ({e.strerror}; a symbolic link is "
                                   f"refused)") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InvalidArgumentError(f"snapshot signing key {path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise InvalidArgumentError(f"snapshot signing key {path} belongs to {fmt.user_name(info.st_uid)}, not "
                                       f"to you: whoever owns it can sign snapshots as you; remove it (a new one is "
                                       f"made) or name your own with --signing-key")
        if info.st_mode & 0o077:
            raise InvalidArgumentError(f"snapshot signing key {path} is readable or writable by others (mode "
                                       f"{stat.S_IMODE(info.st_mode):04o}): `chmod 600 {path}`, and make a new "
                                       f"one if anyone may have copied it")
        data = f.read()
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise InvalidArgumentError(f"snapshot signing key {path} is not an unencrypted PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidArgumentError(f"snapshot signing key {path} is not an Ed25519 key")
    return key


def _check_key_dir(directory: pathlib.Path) -> None:
    """Makes the key's directory (0700) when missing; refuses one that is not the caller's or that
    others may write (they could put their own key in its place)."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.stat(directory)
    if info.st_uid != os.geteuid():
        raise InvalidArgumentError(f"{directory} (where the snapshot signing key goes) belongs to "
                                   f"{fmt.user_name(info.st_uid)}, not to you: name a key in a directory of your own "
                                   f"with --signing-key")
    if info.st_mode & 0o022:
        raise InvalidArgumentError(f"{directory} (where the snapshot signing key goes) is writable by group or others "
                                   f"(mode {stat.S_IMODE(info.st_mode):04o}): `chmod go-w {directory}`")


def _write_private(path: pathlib.Path, data: bytes) -> None:
    with fmt.create_private_file(path) as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _write_public(path: pathlib.Path, key: Ed25519PrivateKey) -> None:
    """(Re)writes the public half beside the key, whole or not at all."""
    public = public_key_file(path)
    temporary = public.parent / f".{public.name}.{secrets.token_hex(8)}"
    _write_private(temporary, public_pem(key.public_key()))
    os.replace(temporary, public)
