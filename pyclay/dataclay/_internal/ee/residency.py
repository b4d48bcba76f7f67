"""ResidentObjects: the objects of this backend held in memory with their fields, the bytes last
sent to the store for each field, and their datasets. Misses are loaded from the Data Service
with the caller's session; evicted objects fall back to PROXY and are reloaded on next access."""
from __future__ import annotations

import threading

from dataclay.exceptions import (
    NotAuthenticatedError, ObjectDoesNotExistError, ObjectNotHereError, PermissionDeniedError)
from dataclay._internal.ee.calls import current_call
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.model.states import HINT_KEY, ID_KEY, PROXY, RESIDENT, STATE_KEY
from dataclay._internal.rpc import DataServiceClient
from dataclay._internal.rpc.convert import object_record
from dataclay._internal.serialization.decoder import loads

_LOCK_STRIPES = 64

MUTABLE = object()
"""Snapshot marker: the field's value may change in place, so it must be re-pickled to compare."""

_IMMUTABLE_TYPES = frozenset({int, float, str, bytes, bool, type(None), complex})


def snapshot_value(value):
    """What a snapshot keeps of a value: the value itself if identity implies equal bytes, else MUTABLE."""
    if type(value) in _IMMUTABLE_TYPES or isinstance(value, DataClayObject):
        return value
    return MUTABLE


class ResidentObjects:
    """This backend's objects in memory; `store` is the Data Service they are loaded from."""

    def __init__(self, backend_id: str, store: DataServiceClient, policy):
        self.backend_id = backend_id
        self._store = store
        self._policy = policy
        self._objects: dict[str, object] = {}
        self.snapshots: dict[str, dict] = {}
        self._datasets: dict[str, str] = {}
        # Striped locks: one object is loaded once, while loads of different objects run in parallel.
        self._locks = tuple(threading.Lock() for _ in range(_LOCK_STRIPES))

    def __len__(self) -> int:
        return len(self._objects)

    def track(self, obj) -> None:
        """Records that the current call touched resident `obj`, after checking the caller may use it."""
        call = current_call()
        if call is None:
            return
        oid = obj.__dict__[ID_KEY]
        if oid in call.touched:
            return
        dataset = self._datasets.get(oid, "")
        if dataset and dataset not in call.datasets:
            raise PermissionDeniedError(f"session of {call.username!r} may not use object {oid} "
                                        f"(dataset {dataset!r})")
        call.touched[oid] = obj

    def target(self, object_id: str, class_name: str):
        """The resident object a request names (loaded if needed); ObjectNotHereError if not stored here."""
        obj = self._objects.get(object_id)
        if obj is not None:
            return obj
        obj = IDENTITY.get(object_id)
        if obj is None:
            obj = IDENTITY.proxy(self._policy.dataclay_class(class_name), object_id, self.backend_id)
        if not self.load(obj, force=True):
            raise ObjectNotHereError(f"object {object_id} is not stored in backend {self.backend_id}")
        return obj

    def load(self, obj, force: bool = False) -> bool:
        """True once `obj` is RESIDENT here; False if it lives elsewhere (its hint or the store says so)."""
        d = obj.__dict__
        if d.get(STATE_KEY) is RESIDENT:
            return True
        if not force and d.get(HINT_KEY) not in ("", self.backend_id):
            return False
        oid = d[ID_KEY]
        with self._lock_for(oid):
            if d.get(STATE_KEY) is RESIDENT:
                return True
            call = current_call()
            if call is None:
                raise NotAuthenticatedError(f"cannot load object {oid} outside a call (no caller session)")
            try:
                found = self._store.with_token(call.token).get_objects([oid])
            except (ObjectNotHereError, ObjectDoesNotExistError):
                found = []
            data = next((o for o in found if o.id == oid), None)
            if data is None:
                if d.get(HINT_KEY) == self.backend_id:
                    d[HINT_KEY] = ""
                return False
            self.install(obj, object_record(data))
            return True

    def install(self, obj, record) -> None:
        """Makes `obj` RESIDENT with the stored fields of `record` (decoded first: a refused field changes nothing)."""
        name = type(obj).__name__
        values = {f.name: loads(f.value, self._policy, f"field {name}.{f.name}") for f in record.fields}
        self.adopt(obj, record.id, record.dataset, values, {f.name: f.value for f in record.fields})

    def adopt(self, obj, oid: str, dataset: str, values: dict, stored: dict) -> None:
        """Makes `obj` the RESIDENT instance of `oid` with field `values`, whose stored bytes are `stored`."""
        d = obj.__dict__
        fields = type(obj)._dc_field_set
        for field, value in values.items():
            if field in fields:
                d[field] = value
        self.snapshots[oid] = {f: (stored[f], snapshot_value(values[f])) for f in stored if f in values}
        self._datasets[oid] = dataset
        d[ID_KEY] = oid
        d[HINT_KEY] = self.backend_id
        d[STATE_KEY] = RESIDENT
        IDENTITY.adopt(obj, oid)
        self._objects[oid] = obj

    def unload(self, obj) -> None:
        """Drops `obj`'s state from memory: it becomes a PROXY that reloads the stored state when used."""
        d = obj.__dict__
        oid = d[ID_KEY]
        with self._lock_for(oid):
            for field in type(obj)._dc_fields:
                d.pop(field, None)
            d[STATE_KEY] = PROXY
            d[HINT_KEY] = self.backend_id
            self._objects.pop(oid, None)
            self.snapshots.pop(oid, None)

    def _lock_for(self, oid: str) -> threading.Lock:
        return self._locks[hash(oid) % _LOCK_STRIPES]

    def evict(self, ids) -> int:
        """Unloads the resident objects among `ids`; returns how many were resident."""
        count = 0
        for oid in ids:
            obj = self._objects.get(oid)
            if obj is not None:
                self.unload(obj)
                count += 1
        return count
