"""Snapshot signatures and the directories snapshots are written to and read from, without a
cluster: a snapshot is taken only when a trusted key signed exactly its manifest, keys are private
files of their owner, and neither an export nor an import uses a directory someone else could change."""
import hashlib
import json
import os
import pathlib

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.snapshot import import_review, snapshot_format as fmt, snapshot_signing as signing
from dataclay._internal.cli.snapshot.snapshot_reader import read_snapshot
from dataclay._internal.proto import snapshot_pb2
from dataclay._internal.rpc import framing
from harness.snapshots import STRANGER, UnsafeTargets

SNAPSHOT_ID = "ab" * 16

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")


def _snapshot(directory: pathlib.Path, key=None) -> bytes:
    """A complete, tiny snapshot (a source record, no objects), signed by `key` when given; its manifest's bytes."""
    fmt.make_private_dir(directory)
    record = snapshot_pb2.MetadataRecord(source=snapshot_pb2.SnapshotSource(snapshot_id=SNAPSHOT_ID))
    data = framing.delimit(record.SerializeToString())
    with fmt.create_private_file(directory / fmt.METADATA_FILE) as out:
        out.write(data)
    entry = fmt.DataFile(name=fmt.METADATA_FILE, bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), records=1)
    manifest = fmt.Manifest(snapshot_id=SNAPSHOT_ID, created_at="now", cut_at_ms=1, dataset="", password_hashes=False,
                            source={}, counts={}, files=[entry])
    raw = manifest.to_json().encode()
    if key is not None:
        signing.sign(directory, raw, key)
    fmt.write_manifest(directory, raw)
    return raw


def _trusting(*keys) -> signing.TrustedKeys:
    trusted = signing.TrustedKeys()
    for key in keys:
        trusted.add(key.public_key(), "test")
    return trusted


def test_a_signing_key_is_made_once_private_with_its_public_half_beside_it(tmp_path):
    # run
    first = signing.signing_key(tmp_path / "home" / signing.KEY_FILE)
    again = signing.signing_key(tmp_path / "home" / signing.KEY_FILE)
    # verify
    key_file, public_file = tmp_path / "home" / signing.KEY_FILE, tmp_path / "home" / signing.PUBLIC_FILE
    assert signing.fingerprint(first.public_key()) == signing.fingerprint(again.public_key())
    assert key_file.stat().st_mode & 0o777 == 0o600 and public_file.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "home").stat().st_mode & 0o777 == 0o700
    assert signing.fingerprint(signing.read_public_key(str(public_file))) == signing.fingerprint(first.public_key())
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == [signing.KEY_FILE, signing.PUBLIC_FILE]
    # a public half gone missing is written again from the key
    public_file.unlink()
    signing.signing_key(key_file)
    assert signing.fingerprint(signing.read_public_key(str(public_file))) == signing.fingerprint(first.public_key())


def test_a_key_others_can_read_or_a_link_to_one_is_refused(tmp_path):
    path = tmp_path / signing.KEY_FILE
    signing.signing_key(path)
    path.chmod(0o640)
    with pytest.raises(InvalidArgumentError, match="readable or writable by others .*chmod 600"):
        signing.signing_key(path)
    path.chmod(0o600)
    (tmp_path / "link.key").symlink_to(path)
    with pytest.raises(InvalidArgumentError, match="symbolic link"):
        signing.signing_key(tmp_path / "link.key")


@root_only
def test_a_key_of_another_user_or_in_a_directory_others_write_is_refused(tmp_path):
    path = tmp_path / signing.KEY_FILE
    signing.signing_key(path)
    os.chown(path, STRANGER, STRANGER)
    with pytest.raises(InvalidArgumentError, match=r"belongs to .*\(uid 65534\), not to you"):
        signing.signing_key(path)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(InvalidArgumentError, match="writable by group or others"):
        signing.signing_key(shared / signing.KEY_FILE)
    assert not (shared / signing.KEY_FILE).exists()


def test_a_snapshot_signed_by_a_trusted_key_reads_and_one_changed_after_signing_does_not(tmp_path):
    # setup
    key = Ed25519PrivateKey.generate()
    _snapshot(tmp_path / "s", key)
    # run and verify: trusted, it reads
    index = read_snapshot(str(tmp_path / "s"), _trusting(key))
    assert index.manifest.snapshot_id == SNAPSHOT_ID and signing.fingerprint(key.public_key()) in index.signer
    index.close()
    # run: one field of the manifest changed and the SHA-256s still right
    manifest = tmp_path / "s" / fmt.MANIFEST
    manifest.write_text(manifest.read_text().replace('"dataset": ""', '"dataset": "x"'))
    # verify
    with pytest.raises(signing.UntrustedSnapshotError, match="was altered after it was signed"):
        read_snapshot(str(tmp_path / "s"), _trusting(key))


def test_an_unsigned_snapshot_or_one_signed_by_an_unknown_key_is_refused_saying_how_to_trust_it(tmp_path):
    ours, theirs = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    _snapshot(tmp_path / "unsigned")
    _snapshot(tmp_path / "theirs", theirs)
    with pytest.raises(signing.UntrustedSnapshotError, match="is not signed"):
        read_snapshot(str(tmp_path / "unsigned"), _trusting(ours))
    with pytest.raises(signing.UntrustedSnapshotError) as refused:
        read_snapshot(str(tmp_path / "theirs"), _trusting(ours))
    message = str(refused.value)
    assert signing.fingerprint(theirs.public_key()) in message and "--trust FILE" in message
    assert "snapshot-signing.pub" in message
    # their public key, given as --trust would give it, makes it readable
    public = tmp_path / "theirs.pub"
    public.write_bytes(signing.public_pem(theirs.public_key()))
    read_snapshot(str(tmp_path / "theirs"), signing.trusted_keys(tmp_path / "no-key-yet.key", [str(public)])).close()


def test_a_signature_file_that_is_garbage_or_of_another_manifest_is_refused(tmp_path):
    key = Ed25519PrivateKey.generate()
    _snapshot(tmp_path / "a", key)
    _snapshot(tmp_path / "b", key)
    (tmp_path / "b" / fmt.MANIFEST).write_bytes((tmp_path / "b" / fmt.MANIFEST).read_bytes().replace(b"now", b"then"))
    signature = tmp_path / "a" / signing.SIGNATURE
    document = json.loads(signature.read_text())
    # another manifest's signature (of the same key) does not fit this one
    (tmp_path / "b" / signing.SIGNATURE).write_text(json.dumps(document))
    with pytest.raises(signing.UntrustedSnapshotError, match="altered after it was signed"):
        read_snapshot(str(tmp_path / "b"), _trusting(key))
    signature.write_text(json.dumps({**document, "public_key": "!!"}))
    with pytest.raises(signing.UntrustedSnapshotError, match="malformed"):
        read_snapshot(str(tmp_path / "a"), _trusting(key))
    signature.write_text("[]")
    with pytest.raises(signing.UntrustedSnapshotError, match="malformed"):
        read_snapshot(str(tmp_path / "a"), _trusting(key))


def test_trusted_key_files_must_be_ed25519_public_keys(tmp_path):
    key = Ed25519PrivateKey.generate()
    ssh = tmp_path / "id.pub"
    ssh.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH))
    assert signing.fingerprint(signing.read_public_key(str(ssh))) == signing.fingerprint(key.public_key())
    private = tmp_path / "private.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    with pytest.raises(InvalidArgumentError, match="not a public key"):
        signing.read_public_key(str(private))
    other = tmp_path / "rsa.pub"
    other.write_bytes(rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    with pytest.raises(InvalidArgumentError, match="not an Ed25519 key"):
        signing.read_public_key(str(other))
    with pytest.raises(InvalidArgumentError, match="cannot read it"):
        signing.read_public_key(str(tmp_path / "missing.pub"))


@root_only
def test_an_export_refuses_a_directory_of_another_user_or_one_others_can_write(tmp_path):
    # setup: an empty directory of someone else's, a group-writable one, a link, a directory under one others write
    unsafe = UnsafeTargets.make(tmp_path)
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    cases = [(unsafe.theirs, r"belongs to .*\(uid 65534\)"),
             (unsafe.shared, r"can be written by group or others \(mode 0770\)"),
             (unsafe.link, "is a symbolic link"), (unsafe.open_parent / "snap", "without the sticky bit")]
    for path, message in cases:
        # run and verify: refused, naming the path, and nothing was changed
        with pytest.raises(InvalidArgumentError, match=message) as refused:
            fmt.make_private_dir(path)
        assert str(path.parent) in str(refused.value)
    assert unsafe.theirs.stat().st_uid == STRANGER and unsafe.theirs.stat().st_mode & 0o777 == 0o755
    assert unsafe.shared.stat().st_mode & 0o777 == 0o770
    assert not unsafe.link_target.exists() and not (unsafe.open_parent / "snap").exists()
    # a sticky directory others write (as /tmp) is fine: they cannot rename what is not theirs
    assert fmt.make_private_dir(sticky / "snap") == (sticky / "snap", True)
    # under a directory of another user: refused
    os.chown(unsafe.open_parent, STRANGER, STRANGER)
    unsafe.open_parent.chmod(0o755)
    with pytest.raises(InvalidArgumentError, match=r"belongs to .*\(uid 65534\), who could replace"):
        fmt.make_private_dir(unsafe.open_parent / "snap")


@root_only
def test_an_import_refuses_a_snapshot_another_user_or_the_group_could_change(tmp_path):
    key = Ed25519PrivateKey.generate()
    _snapshot(tmp_path / "s", key)
    metadata = tmp_path / "s" / fmt.METADATA_FILE
    metadata.chmod(0o620)
    with pytest.raises(fmt.SnapshotError, match=f"{fmt.METADATA_FILE} can be written by group or others"):
        read_snapshot(str(tmp_path / "s"), _trusting(key))
    metadata.chmod(0o600)
    os.chown(metadata, STRANGER, STRANGER)
    with pytest.raises(fmt.SnapshotError, match=r"belongs to .*\(uid 65534\).*copy the snapshot"):
        read_snapshot(str(tmp_path / "s"), _trusting(key))
    os.chown(metadata, 0, 0)
    os.chown(tmp_path / "s", STRANGER, STRANGER)
    with pytest.raises(fmt.SnapshotError, match=r"belongs to .*\(uid 65534\)"):
        read_snapshot(str(tmp_path / "s"), _trusting(key))
    os.chown(tmp_path / "s", 0, 0)
    metadata.rename(tmp_path / "elsewhere.dcs")
    metadata.symlink_to(tmp_path / "elsewhere.dcs")
    with pytest.raises(fmt.SnapshotError, match="symbolic link is refused"):
        read_snapshot(str(tmp_path / "s"), _trusting(key))


def test_allowances_are_named_and_unknown_names_refused():
    allowed = import_review.parse_allow(["accounts,admins", " models "])
    assert allowed == {"accounts", "admins", "models"}
    message = import_review.allowed_message(allowed)
    assert message.accounts and message.admins and message.models and not message.password_hashes
    with pytest.raises(InvalidArgumentError, match="unknown 'admin'; the names are accounts, admins"):
        import_review.parse_allow(["admin"])
    assert set(import_review.ALLOWANCES) == {f.name.replace("_", "-") for f in message.DESCRIPTOR.fields}
