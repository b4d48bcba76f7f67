"""`obj._dc_meta`: an object's metadata under dataClay 4's names. IDs are text, as everywhere in
this API (`getID()`, the keys of `get_backends()`), so that they compare equal.

Read-only, except `master_backend_id`, which dataClay 4 programs may assign: it points this
program's calls on the object at that backend (a hint, checked by the backend like any other: a
wrong one costs one redirected call), and reads back as assigned until a call finds the object
elsewhere."""
from __future__ import annotations

from dataclay._internal.model.checks import backend_text
from dataclay._internal.model.states import ALIAS_KEY, HINT_KEY, ID_KEY, PENDING_KEY, STATE_KEY

ASSIGNED_KEY = "_dc_assigned_master"
_FIELDS = ("id", "class_name", "dataset_name", "master_backend_id", "replica_backend_ids", "alias", "aliases",
           "is_read_only")


class ObjectMeta:
    """What the Logic Module knows of an object, as dataClay 4's ObjectMetadata names it (a volatile
    object has only its class). `alias` is one of its aliases (dataClay 4 keeps one); `is_read_only` is
    always False, since a read-only session is what makes an object read-only here."""

    __slots__ = _FIELDS + ("_obj",)

    def __init__(self, id, class_name, dataset_name, master_backend_id, replica_backend_ids, alias, aliases,
                 is_read_only=False, obj=None):
        values = (id, class_name, dataset_name, master_backend_id, replica_backend_ids, alias, aliases,
                  is_read_only, obj)
        for name, value in zip(self.__slots__, values):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        if name != "master_backend_id" or self._obj is None:
            raise AttributeError(f"_dc_meta.{name} is read-only")
        backend = backend_text(value)
        if backend is None:
            raise AttributeError("_dc_meta.master_backend_id takes a backend ID, not None")
        d = self._obj.__dict__
        d[HINT_KEY] = d[ASSIGNED_KEY] = backend
        object.__setattr__(self, name, backend)

    def __delattr__(self, name):
        raise AttributeError(f"_dc_meta.{name} is read-only")

    def __eq__(self, other):
        return isinstance(other, ObjectMeta) and all(getattr(self, f) == getattr(other, f) for f in _FIELDS)

    def __hash__(self):
        return hash(self.id)

    def __repr__(self) -> str:
        return "ObjectMeta(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"


def of_record(info, obj) -> ObjectMeta:
    """The ObjectMeta of an ObjectInfoRecord, for the persistent object `obj`."""
    replicas = frozenset(b for b in info.replica_backend_ids if b != info.master_backend_id)
    aliases = frozenset(info.aliases)
    master = info.master_backend_id or None
    d = obj.__dict__
    assigned = d.get(ASSIGNED_KEY)
    if assigned is not None:
        if d.get(HINT_KEY) == assigned:
            master = assigned  # no call has found the object elsewhere since it was assigned
        else:
            d.pop(ASSIGNED_KEY, None)
    return ObjectMeta(info.id, info.class_name, info.dataset or None, master, replicas,
                      min(aliases) if aliases else None, aliases, False, obj)


def made_here(object_id: str, class_name: str, backend_id: str) -> ObjectMeta:
    """The ObjectMeta of an object model code made during a call in this backend, not stored yet."""
    return ObjectMeta(object_id, class_name, None, backend_id, frozenset(), None, frozenset(), False)


def volatile(class_name: str) -> ObjectMeta:
    """The ObjectMeta of an object that is not persistent."""
    return ObjectMeta(None, class_name, None, None, frozenset(), None, frozenset(), False)


def remember_alias(obj, alias: str | None):
    """Notes on `obj` the alias this program stored or found it by (for its repr; no call is made); returns obj."""
    if alias and obj is not None and hasattr(obj, "__dict__"):
        obj.__dict__[ALIAS_KEY] = alias
    return obj


def describe(obj) -> str:
    """`<module.Class ID alias='a'>` for a persistent object, from what it already knows (no call is made);
    `<module.Class (volatile, not persistent) at 0x...>` otherwise."""
    d = obj.__dict__
    name = type(obj)._dc_class_name
    oid = d.get(ID_KEY) if d.get(STATE_KEY) is not None else d.get(PENDING_KEY)
    if oid is None:
        return f"<{name} (volatile, not persistent) at {id(obj):#x}>"
    alias = d.get(ALIAS_KEY)
    return f"<{name} {oid}{f' alias={alias!r}' if alias else ''}>"
