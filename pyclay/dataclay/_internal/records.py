"""Plain records of stored objects and their changes: what the serialiser produces and the
execution environment works with. The protocol wrappers convert them to and from messages."""
from __future__ import annotations

from typing import NamedTuple


class FieldRecord(NamedTuple):
    """One serialised field: its pickle and the IDs of the dataClay objects it references."""

    name: str
    value: bytes
    references: tuple = ()


class ObjectRecord(NamedTuple):
    """An object's whole stored form ("module.Class" and its fields)."""

    id: str
    class_name: str
    fields: tuple
    dataset: str = ""


class DeltaRecord(NamedTuple):
    """The fields of a stored object that changed (or were removed); `sequence` orders writers' deltas."""

    id: str
    changed: tuple
    removed: tuple
    sequence: int


class BackendRecord(NamedTuple):
    """A backend as the Logic Module lists it (`languages` as lower-case names)."""

    id: str
    name: str
    host: str
    port: int
    languages: tuple
    alive: bool
    store_engine: str = ""

    @property
    def address(self) -> str:
        """host:port of its Data Service."""
        return f"{self.host}:{self.port}"


class ObjectInfoRecord(NamedTuple):
    """Where an object lives and what it is, as the Logic Module knows it."""

    id: str
    class_name: str
    language: str
    dataset: str
    master_backend_id: str
    replica_backend_ids: tuple
    aliases: tuple
    version_of: str = ""           # the versioned (original) object's ID when this one is a version


class DatasetRecord(NamedTuple):
    """A dataset as listed: its owner; what this session may do with its objects: "owner", "read-write" or
    "read-only" (a data contract), or "none" (an administrator sees every dataset); when that contract ends
    (epoch milliseconds; 0: never, or no contract); and how many objects it holds (None: not counted)."""

    name: str
    owner: str
    access: str
    contract_expires_at_ms: int = 0
    objects: int | None = None


class AliasRecord(NamedTuple):
    """An alias as listed, with the object it names: its ID, class ("module.Class" or a Java binary name),
    language, and the backend holding its master copy."""

    alias: str
    dataset: str
    object_id: str
    class_name: str
    language: str
    backend_id: str
