"""The snapshot directory format and import placement, without a cluster: manifests are checked
field by field, files by size and SHA-256, records by their lengths; objects spread by bytes."""
import hashlib
import json
import pathlib
import types

import pytest

from dataclay.exceptions import BackendUnavailableError, InvalidArgumentError
from dataclay._internal.cli.snapshot import snapshot_format as fmt
from dataclay._internal.cli.snapshot.import_placement import place
from dataclay._internal.rpc import framing

BACKEND = "8407e78d-5a4c-452f-8a14-e77239c510a8"


def _snapshot(directory: pathlib.Path, objects: bytes = b"", metadata: bytes = b"") -> fmt.Manifest:
    fmt.make_private_dir(directory)
    files = []
    for name, data, backend in (("metadata.dcs", metadata, None), (f"objects-{BACKEND}.dcs", objects, BACKEND)):
        with fmt.create_private_file(directory / name) as out:
            out.write(data)
        files.append(fmt.DataFile(name=name, bytes=len(data), sha256=hashlib.sha256(data).hexdigest(), records=0,
                                  backend_id=backend))
    manifest = fmt.Manifest(snapshot_id="ab" * 16, created_at="now", cut_at_ms=1, dataset="", password_hashes=False,
                            source={}, counts={}, files=files)
    fmt.write_manifest(directory, manifest.to_json().encode())
    return manifest


def _edit_manifest(directory: pathlib.Path, change) -> None:
    data = json.loads((directory / fmt.MANIFEST).read_text())
    change(data)
    (directory / fmt.MANIFEST).write_text(json.dumps(data))


def test_a_written_manifest_reads_back_and_its_directory_is_private(tmp_path):
    written = _snapshot(tmp_path / "s", b"objects", b"meta")
    read = fmt.read_manifest(tmp_path / "s")
    assert read == written
    assert (tmp_path / "s").stat().st_mode & 0o777 == 0o700
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in (tmp_path / "s").iterdir())
    with fmt.SnapshotDirectory(tmp_path / "s") as folder:
        for entry in read.files:
            fmt.verify_file(folder, entry)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(format="zip"), "is not a dataClay snapshot: its manifest.json names format 'zip'"),
    (lambda d: d.update(version=2), "snapshot format version 2, newer than the version 1"),
    (lambda d: d.update(version=0), "is corrupted: version 0"),
    (lambda d: d.update(version=True), "is corrupted: version True"),
    (lambda d: d.pop("snapshot_id"), "is corrupted"),
    (lambda d: d.update(cut_at_ms="1"), "is corrupted: field 'cut_at_ms'"),
    (lambda d: d["files"].append(dict(d["files"][0])), "repeats a file"),
    (lambda d: d["files"][1].update(name="../escape.dcs"), "is malformed"),
    (lambda d: d["files"][1].update(backend_id="8407e78d-0000-452f-8a14-e77239c510a8"), "do not match"),
    (lambda d: d["files"][0].update(sha256="xyz"), "is malformed"),
    (lambda d: d["files"][0].update(extra=1), "unknown fields"),
])
def test_a_manifest_that_is_foreign_newer_or_malformed_is_refused_naming_the_problem(tmp_path, change, message):
    _snapshot(tmp_path / "s")
    _edit_manifest(tmp_path / "s", change)
    with pytest.raises(fmt.SnapshotError) as refused:
        fmt.read_manifest(tmp_path / "s")
    assert message in str(refused.value)


def test_directories_without_a_manifest_or_with_garbage_in_it_are_not_snapshots(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(fmt.SnapshotError, match="has no manifest.json"):
        fmt.read_manifest(tmp_path / "empty")
    with pytest.raises(fmt.SnapshotError, match="is not a directory"):
        fmt.read_manifest(tmp_path / "nothing")
    _snapshot(tmp_path / "s")
    (tmp_path / "s" / fmt.MANIFEST).write_bytes(b"\x00{not json")
    with pytest.raises(fmt.SnapshotError, match="not valid JSON"):
        fmt.read_manifest(tmp_path / "s")


def test_a_data_file_missing_truncated_grown_or_changed_is_named(tmp_path):
    manifest = _snapshot(tmp_path / "s", b"0123456789" * 10)
    entry = manifest.files[1]
    path = tmp_path / "s" / entry.name
    folder = fmt.SnapshotDirectory(tmp_path / "s")
    path.write_bytes(b"0123456789" * 9)
    with pytest.raises(fmt.SnapshotError, match=f"is truncated: {entry.name} has 90 bytes, the manifest says 100"):
        fmt.verify_file(folder, entry)
    path.write_bytes(b"0123456789" * 11)
    with pytest.raises(fmt.SnapshotError, match="more than the 100"):
        fmt.verify_file(folder, entry)
    path.write_bytes(b"0123456789" * 9 + b"0123456788")
    with pytest.raises(fmt.SnapshotError, match="does not match its SHA-256"):
        fmt.verify_file(folder, entry)
    path.unlink()
    with pytest.raises(fmt.SnapshotError, match=f"{entry.name} is missing"):
        fmt.verify_file(folder, entry)
    folder.close()


def test_delimited_records_round_trip_and_bad_lengths_are_caught():
    records = [b"", b"x", b"y" * 200, b"z" * 70000]
    stream = b"".join(framing.delimit(r) for r in records)
    assert [stream[a:b] for a, b in fmt.delimited(stream, "f")] == records
    with pytest.raises(fmt.SnapshotError, match="record 3 at byte .* runs past its end"):
        list(fmt.delimited(stream[:-1], "f"))
    with pytest.raises(fmt.SnapshotError, match="malformed length"):
        list(fmt.delimited(b"\xff" * 11, "f"))


def test_an_existing_file_or_non_empty_directory_is_never_exported_into(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("mine")
    with pytest.raises(InvalidArgumentError, match="is not empty"):
        fmt.make_private_dir(tmp_path / "full")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidArgumentError, match="not a directory"):
        fmt.make_private_dir(tmp_path / "file")
    assert fmt.make_private_dir(tmp_path / "new") == (tmp_path / "new", True)
    assert fmt.make_private_dir(tmp_path / "new") == (tmp_path / "new", False)


PY, JAVA = 1, 2
BOTH = {PY, JAVA}


def _index(sizes, replicas, languages=None):
    ids = [f"o{i}" for i in range(len(sizes))]
    return types.SimpleNamespace(
        chosen={oid: i for i, oid in enumerate(ids)},
        record_bytes=lambda i: sizes[i],
        replicas_of=lambda oid: replicas.get(oid, 0),
        language_of=lambda i: (languages or {}).get(i, PY),
        language_name=lambda language: "Python" if language == PY else "Java")


def test_objects_spread_over_the_backends_by_bytes_and_replicas_go_to_other_backends():
    sizes = [100] * 30 + [1000] * 3
    placement = place(_index(sizes, {"o0": 2, "o1": 1}), {"b": BOTH, "a": BOTH, "c": BOTH})
    loads = sorted(t.bytes - sum(sizes[r] for r, _ in t.replicas) for t in placement.targets.values())
    assert loads[-1] - loads[0] <= 1000
    assert sum(len(t.masters) for t in placement.targets.values()) == 33
    for target in placement.targets.values():
        for record, master in target.replicas:
            assert master != target.backend_id and record in placement.targets[master].masters
    assert sum(len(t.replicas) for t in placement.targets.values()) == 3
    assert placement.short_of_replicas == 0


def test_replicas_beyond_the_backends_there_are_are_counted_as_missing():
    placement = place(_index([10, 10], {"o0": 2, "o1": 1}), {"only": BOTH})
    assert placement.short_of_replicas == 2 and placement.wanted_replicas == 2
    assert placement.targets["only"].replicas == []


def test_a_master_copy_is_wrapped_with_its_replicas_without_being_decoded():
    from dataclay._internal.cli.snapshot.snapshot_import import _copied
    from dataclay._internal.proto import common_pb2, dataservice_pb2
    data = common_pb2.ObjectData(id="x", header=common_pb2.ObjectHeader(class_name="m.C", dataset="d"),
                                 fields=[common_pb2.Field(name="f", value=b"v" * 300)])
    record = b"".join(_copied(memoryview(data.SerializeToString()), [BACKEND, "b2"]))
    [(start, end)] = list(fmt.delimited(record, "test"))
    wrapped = dataservice_pb2.CopiedObject.FromString(record[start:end])
    assert wrapped.object == data and list(wrapped.replica_backend_ids) == [BACKEND, "b2"]
    placement = place(_index([10, 10], {"o0": 1}), {"a": BOTH, "b": BOTH})
    holders = {t.backend_id: t.replica_holders for t in placement.targets.values()}
    master = next(t for t, h in holders.items() if h)
    assert holders[master] == {0: ["b" if master == "a" else "a"]}


def test_objects_go_only_where_their_language_runs():
    languages = {i: JAVA for i in range(0, 20, 2)}
    placement = place(_index([10] * 20, {"o0": 1}, languages), {"py": {PY}, "both": BOTH, "java": {JAVA}})
    assert all(r % 2 == 1 for r in placement.targets["py"].masters)
    assert all(r % 2 == 0 for r in placement.targets["java"].masters)
    holders = [name for name, t in placement.targets.items() for record, _ in t.replicas if record == 0]
    assert len(holders) == 1 and holders[0] in ("both", "java")
    with pytest.raises(BackendUnavailableError, match="runs Java objects"):
        place(_index([10], {}, {0: JAVA}), {"py": {PY}})
