"""Reads and checks a whole snapshot before `dataclay import` touches the cluster: its signature
(a key the import trusts signed the manifest), then the manifest, every file's size and SHA-256,
every record. Nothing is kept in memory but an index of the objects' records (where each one is,
its size, how many replicas it had); the records are read again, through the same directory
descriptor, when they are sent.

Snapshots are hostile input: records are decoded as protobuf messages only, and object state is
never decoded at all (it is sent on as the snapshot holds it)."""
from __future__ import annotations

import array
import mmap
import pathlib
import re

from google.protobuf.message import DecodeError

from dataclay._internal.cli.snapshot import snapshot_format as fmt
from dataclay._internal.cli.snapshot import snapshot_signing as signing
from dataclay._internal.cli.common.progress import Progress
from dataclay._internal.proto import common_pb2, snapshot_pb2

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_LANGUAGES = (common_pb2.PYTHON, common_pb2.JAVA)


class SnapshotIndex:
    """What a checked snapshot holds: its metadata, and where each object's record is."""

    def __init__(self, folder: fmt.SnapshotDirectory, manifest: fmt.Manifest, signer: str):
        self.folder = folder            # held open until close()
        self.directory = folder.path
        self.manifest = manifest
        self.signer = signer            # the key that signed it, and why it is trusted
        self.source = None
        self.models, self.accounts, self.datasets, self.contracts, self.aliases = [], [], [], [], []
        self.locations = {}             # registered object ID -> (master backend, replica count)
        self.files = []                 # objects files: (name, backend ID)
        self.ids = []                   # per record: object ID
        self.file_of = array.array("H")
        self.start = array.array("Q")
        self.end = array.array("Q")
        self.dataset_of = array.array("H")  # per record: index into dataset_names
        self.languages = array.array("B")   # per record: its Language value
        self.dataset_names = []
        self.dataset_numbers = {}
        self.chosen = {}                # object ID -> record index (one per object)
        self.warnings = []

    def close(self) -> None:
        self.folder.close()

    def record_bytes(self, index: int) -> int:
        return self.end[index] - self.start[index]

    def replicas_of(self, object_id: str) -> int:
        return self.locations.get(object_id, ("", 0))[1]

    def language_of(self, index: int) -> int:
        return self.languages[index]

    @staticmethod
    def language_name(language: int) -> str:
        return common_pb2.Language.Name(language).capitalize()


def read_snapshot(directory: str, trusted: signing.TrustedKeys, progress: bool | None = None) -> SnapshotIndex:
    """Checks the snapshot in `directory` completely, its signature by a `trusted` key first;
    SnapshotError naming the first problem. close() the index when done with it."""
    path = pathlib.Path(directory).expanduser().resolve()
    folder = fmt.SnapshotDirectory(path)
    try:
        raw = fmt.manifest_bytes(folder)
        signature = folder.read(signing.SIGNATURE) if folder.exists(signing.SIGNATURE) else None
        signer = signing.verify(str(path), raw, signature, trusted)
        manifest = fmt.parse_manifest(path, raw)
        index = SnapshotIndex(folder, manifest, signer)
        total = sum(f.bytes for f in manifest.files) + sum(f.bytes for f in manifest.objects_files())
        meter = Progress("check ", total_bytes=total or None, enabled=progress)
        for entry in manifest.files:
            fmt.verify_file(folder, entry, meter)
        _read_metadata(index, next(f for f in manifest.files if f.name == fmt.METADATA_FILE))
        datasets = {d.name for d in index.datasets}
        referenced, originals = set(), set()
        for entry in manifest.objects_files():
            _read_objects(index, entry, datasets, referenced, originals, meter)
        meter.done()
        _cross_check(index, referenced, originals)
        return index
    except BaseException:
        folder.close()
        raise


def _read_metadata(index: SnapshotIndex, entry: fmt.DataFile) -> None:
    name = entry.name
    data = index.folder.read(name)
    count = 0
    for start, end in fmt.delimited(data, name):
        try:
            record = snapshot_pb2.MetadataRecord.FromString(data[start:end])
        except DecodeError as e:
            raise fmt.SnapshotError(f"{name} is corrupted: record {count} does not decode ({e})") from None
        kind = record.WhichOneof("record")
        if count == 0 and kind != "source":
            raise fmt.SnapshotError(f"{name} is corrupted: it does not begin with the snapshot's source")
        if kind == "source":
            if count:
                raise fmt.SnapshotError(f"{name} is corrupted: a second source record")
            if record.source.snapshot_id != index.manifest.snapshot_id:
                raise fmt.SnapshotError(f"{name} belongs to snapshot {record.source.snapshot_id}, the manifest to "
                                        f"{index.manifest.snapshot_id}: files of two snapshots are mixed")
            index.source = record.source
        elif kind == "model":
            index.models.append(record.model)
        elif kind == "account":
            index.accounts.append(record.account)
        elif kind == "dataset":
            index.datasets.append(record.dataset)
        elif kind == "contract":
            index.contracts.append(record.contract)
        elif kind == "objects":
            for o in record.objects.objects:
                _require_uuid(o.id, name, "an object")
                index.locations[o.id] = (o.master_backend_id, len(o.replica_backend_ids))
        elif kind == "aliases":
            index.aliases.extend(record.aliases.aliases)
        else:
            raise fmt.SnapshotError(f"{name} is corrupted: record {count} is of no known kind")
        count += 1
    if count != entry.records:
        raise fmt.SnapshotError(f"{name} is corrupted: it holds {count} records, the manifest says {entry.records}")
    if index.source is None:
        raise fmt.SnapshotError(f"{name} is corrupted: it holds no source record")


def _read_objects(index, entry, datasets, referenced, originals, meter) -> None:
    name = entry.name
    known = {b.id for b in index.source.backends}
    if entry.backend_id not in known:
        raise fmt.SnapshotError(f"{name} is corrupted: backend {entry.backend_id} is not one of the snapshot's")
    file_number = len(index.files)
    index.files.append((name, entry.backend_id))
    count = 0
    with index.folder.open(name) as f:
        if entry.bytes == 0:
            spans, view = iter(()), b""
        else:
            view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            spans = fmt.delimited(view, name)
        try:
            for start, end in spans:
                _check_object(index, view[start:end], name, count, datasets, referenced, originals)
                index.file_of.append(file_number)
                index.start.append(start)
                index.end.append(end)
                count += 1
                meter.add(end - start, 1)
        finally:
            if entry.bytes:
                view.close()
    if count != entry.records:
        raise fmt.SnapshotError(f"{name} is corrupted: it holds {count} records, the manifest says {entry.records}")


def _check_object(index, raw: bytes, name: str, number: int, datasets, referenced, originals) -> None:
    at = f"{name} record {number}"
    try:
        o = common_pb2.ObjectData.FromString(raw)
    except DecodeError as e:
        raise fmt.SnapshotError(f"{at} is corrupted: it does not decode ({e})") from None
    _require_uuid(o.id, at, "its ID")
    h = o.header
    if h.language not in _LANGUAGES or not h.class_name or h.master_backend_id:
        raise fmt.SnapshotError(f"{at} is corrupted: object {o.id} has an invalid header")
    if h.dataset not in datasets:
        raise fmt.SnapshotError(f"{at}: object {o.id} belongs to dataset {h.dataset!r}, which the snapshot does "
                                f"not describe")
    if h.version_of:
        _require_uuid(h.version_of, at, "its version_of")
        originals.add(h.version_of)
    for field in o.fields:
        referenced.update(field.references)
    record = len(index.ids)
    index.ids.append(o.id)
    if h.dataset not in index.dataset_numbers:
        index.dataset_numbers[h.dataset] = len(index.dataset_names)
        index.dataset_names.append(h.dataset)
    index.dataset_of.append(index.dataset_numbers[h.dataset])
    index.languages.append(h.language)
    previous = index.chosen.get(o.id)
    if previous is None:
        index.chosen[o.id] = record
        return
    # the same object in two backends' files: a move was under way at the cut; the metadata names the master
    master = index.locations.get(o.id, ("", 0))[0]
    if index.files[-1][1] == master:
        index.chosen[o.id] = record


def _cross_check(index: SnapshotIndex, referenced: set, originals: set) -> None:
    present = index.chosen
    dangling = sum(1 for r in referenced if r not in present)
    if dangling:
        where = "other datasets, or objects being collected" if index.manifest.dataset else "objects being collected"
        index.warnings.append(f"{dangling:,} referenced objects are not in the snapshot ({where}): references to "
                              f"them stay unresolved")
    missing = sum(1 for r in originals if r not in present)
    if missing:
        index.warnings.append(f"{missing:,} versions' original objects are not in the snapshot: consolidating "
                              f"those versions will fail")
    kept = []
    for a in index.aliases:
        record = present.get(a.object_id)
        if record is None:
            continue
        if index.dataset_names[index.dataset_of[record]] != a.dataset:
            raise fmt.SnapshotError(f"{fmt.METADATA_FILE} is corrupted: alias {a.alias!r} of dataset {a.dataset!r} "
                                    f"names an object of another dataset")
        kept.append(a)
    dropped = len(index.aliases) - len(kept)
    if dropped:
        index.warnings.append(f"{dropped:,} aliases name objects no backend stored at the cut (being collected): "
                              f"left out")
    index.aliases = kept
    stored_nowhere = sum(1 for oid in index.locations if oid not in present)
    if stored_nowhere:
        index.warnings.append(f"{stored_nowhere:,} registered objects were stored nowhere at the cut (being "
                              f"collected): left out")


def _require_uuid(value: str, at: str, what: str) -> None:
    if not _UUID.match(value):
        raise fmt.SnapshotError(f"{at} is corrupted: {what} is not an object ID")
