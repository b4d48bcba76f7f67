"""`obj._dc_meta`: an object's metadata under dataClay 4's names, read-only. IDs are text, as
everywhere in this API (`getID()`, the keys of `get_backends()`), so that they compare equal."""
from __future__ import annotations

from typing import NamedTuple


class ObjectMeta(NamedTuple):
    """What the Logic Module knows of an object, as dataClay 4's ObjectMetadata names it (a volatile
    object has only its class)."""

    id: str | None
    class_name: str
    dataset_name: str | None
    master_backend_id: str | None
    replica_backend_ids: frozenset
    alias: str | None              # one of its aliases (dataClay 4 keeps one), or None
    aliases: frozenset
    is_read_only: bool             # always False: a read-only session is what makes an object read-only here


def of_record(info) -> ObjectMeta:
    """The ObjectMeta of an ObjectInfoRecord."""
    replicas = frozenset(b for b in info.replica_backend_ids if b != info.master_backend_id)
    aliases = frozenset(info.aliases)
    return ObjectMeta(info.id, info.class_name, info.dataset or None, info.master_backend_id or None, replicas,
                      min(aliases) if aliases else None, aliases, False)


def volatile(class_name: str) -> ObjectMeta:
    """The ObjectMeta of an object that is not persistent."""
    return ObjectMeta(None, class_name, None, None, frozenset(), None, frozenset(), False)
