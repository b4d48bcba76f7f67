"""Conversions between the plain records of dataclay._internal.records and protocol messages: the
wrappers of rpc/ convert every answer here, so the runtimes see records only."""
from __future__ import annotations

from dataclay._internal.proto import common_pb2, logicmodule_pb2
from dataclay._internal.records import (
    AliasPage, AliasRecord, BackendRecord, Copies, DatasetPage, DatasetRecord, FieldRecord, ObjectInfoRecord,
    ObjectPage, ObjectRecord, SessionRecord, VersionRecord)

_ObjectData = common_pb2.ObjectData
_PYTHON = common_pb2.PYTHON


def language_name(value: int) -> str:
    """"python", "java" or "unspecified" for a Language enum value."""
    try:
        return common_pb2.Language.Name(value).lower()
    except ValueError:
        return "unspecified"


def language_value(name: str) -> int:
    """The Language enum value of "python" or "java" ("": LANGUAGE_UNSPECIFIED)."""
    try:
        return common_pb2.Language.Value(name.upper()) if name else common_pb2.LANGUAGE_UNSPECIFIED
    except (AttributeError, ValueError):
        raise ValueError(f"language must be 'python', 'java' or '', not {name!r}") from None


def add_object_data(target, records) -> None:
    """Appends the stored forms of `records` (ObjectRecords, or ObjectData taken as they are) to the
    repeated ObjectData field `target` (adding in place is the fastest way to build many messages)."""
    for record in records:
        if isinstance(record, _ObjectData):
            target.append(record)
            continue
        data = target.add(id=record.id)
        header = data.header
        header.class_name = record.class_name
        header.language = _PYTHON
        if record.dataset:
            header.dataset = record.dataset
        fields = data.fields
        for f in record.fields:
            fields.add(name=f.name, value=f.value, references=f.references)


def add_object_delta(target, deltas) -> None:
    """Appends the messages of `deltas` (DeltaRecords) to the repeated ObjectDelta field `target`."""
    for delta in deltas:
        message = target.add(id=delta.id, sequence=delta.sequence)
        if delta.removed:
            message.removed_fields.extend(delta.removed)
        changed = message.changed_fields
        for f in delta.changed:  # empty repeated fields left out: an empty keyword costs as much as a full one
            if f.references:
                changed.add(name=f.name, value=f.value, references=f.references)
            else:
                changed.add(name=f.name, value=f.value)


def object_record(data: common_pb2.ObjectData) -> ObjectRecord:
    """The record of a stored object."""
    return ObjectRecord(data.id, data.header.class_name,
                        tuple(FieldRecord(f.name, f.value, tuple(f.references)) for f in data.fields),
                        data.header.dataset)


def backend_record(info: common_pb2.BackendInfo) -> BackendRecord:
    """The record of a registered backend."""
    return BackendRecord(info.id, info.name, info.host, info.port,
                         tuple(language_name(x) for x in info.languages), info.alive, info.store_engine)


def object_info_record(info: common_pb2.ObjectInfo) -> ObjectInfoRecord:
    """The record of an object's metadata."""
    return ObjectInfoRecord(info.id, info.class_name, language_name(info.language), info.dataset,
                            info.master_backend_id, tuple(info.replica_backend_ids), tuple(info.aliases),
                            info.version_of)


_ACCESS = {logicmodule_pb2.DATASET_ACCESS_OWNER: "owner", logicmodule_pb2.DATASET_ACCESS_READ_WRITE: "read-write",
           logicmodule_pb2.DATASET_ACCESS_READ_ONLY: "read-only"}


def dataset_record(entry: logicmodule_pb2.DatasetEntry) -> DatasetRecord:
    """The record of a listed dataset (objects None when they were not counted)."""
    return DatasetRecord(entry.name, entry.owner, _ACCESS.get(entry.access, "none"), entry.contract_expires_at_ms,
                         entry.objects if entry.objects >= 0 else None)


def alias_record(entry: logicmodule_pb2.AliasEntry) -> AliasRecord:
    """The record of a listed alias."""
    return AliasRecord(entry.alias, entry.dataset, entry.object_id, entry.class_name, language_name(entry.language),
                       entry.master_backend_id)


def object_records(response) -> list:
    """The ObjectRecords of a GetObjects reply."""
    return [object_record(data) for data in response.objects]


def copies(response) -> Copies:
    """What a CopiesResponse (of a replica or a move) says was copied."""
    return Copies(tuple(response.object_ids), response.backend_id, response.bytes_sent)


def version_record(response) -> VersionRecord:
    """The version a NewVersionResponse says was made."""
    return VersionRecord(object_info_record(response.version), response.bytes_sent)


def session_record(info: logicmodule_pb2.SessionInfo) -> SessionRecord:
    """The record of an opened session."""
    return SessionRecord(info.token, info.username, info.dataset, tuple(info.datasets), info.expires_at_ms,
                         info.admin, info.backend, tuple(info.read_only_datasets))


def dataset_page(page: logicmodule_pb2.DatasetPage) -> DatasetPage:
    """A page of listed datasets as records."""
    return DatasetPage(tuple(map(dataset_record, page.datasets)), page.next_page_token)


def alias_page(page: logicmodule_pb2.AliasPage) -> AliasPage:
    """A page of listed aliases as records."""
    return AliasPage(tuple(map(alias_record, page.aliases)), page.next_page_token)


def object_page(page: logicmodule_pb2.ObjectPage) -> ObjectPage:
    """A page of listed objects as records."""
    return ObjectPage(tuple(map(object_info_record, page.objects)), page.next_page_token)
