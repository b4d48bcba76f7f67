"""Plain records of stored objects and their changes (what the serialiser produces and the execution
environment works with), and of what the servers answer: the rpc wrappers convert them to and from
messages (rpc/convert.py), so nothing outside rpc reads a generated message. Object and backend IDs
are their canonical text, the form the runtime's identity map and caches are keyed by."""
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


class DatasetPage(NamedTuple):
    """A page of listed datasets; `next_page_token` empty when the listing is complete."""

    datasets: tuple
    next_page_token: str


class AliasPage(NamedTuple):
    """A page of listed aliases (by dataset, then alias); `next_page_token` empty when complete."""

    aliases: tuple
    next_page_token: str


class ObjectPage(NamedTuple):
    """A page of listed objects (ObjectInfoRecords); `next_page_token` empty when complete."""

    objects: tuple
    next_page_token: str


class Copies(NamedTuple):
    """What a replica or a move did: the objects copied, the backend they went to, the bytes sent."""

    object_ids: tuple
    backend_id: str
    bytes_sent: int


class VersionRecord(NamedTuple):
    """A version just made: its metadata (its own ID; `version_of` the original's) and the bytes sent for it."""

    version: ObjectInfoRecord
    bytes_sent: int


class SessionRecord(NamedTuple):
    """An open session: its token, account, dataset for new objects, the datasets it may read (those of
    `read_only_datasets` only read), when it expires (epoch milliseconds), and what the account is."""

    token: str
    username: str
    dataset: str
    datasets: tuple
    expires_at_ms: int
    admin: bool
    backend: bool
    read_only_datasets: tuple
