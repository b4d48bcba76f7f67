"""ResidentObjects: the objects of this backend held in memory with their fields, the bytes last
sent to the store for each field, and their datasets. Misses are loaded over the link: the Data
Service reads them in the session of the call that asks (`load`). Evicted objects fall back to
PROXY and are reloaded on next access.

A budget bounds what stays resident (DATACLAY_EE_RESIDENT_MB, counted in stored bytes): past it,
the objects used least recently that no call in flight has touched are unloaded, so a backend can
serve more data than its environment's memory, as a store should, with each object reloaded from
the store when it is used again.

Eviction generations: every eviction of an object bumps its generation. A load whose object was
evicted while the answer was on its way is made again (the answer may predate the change that
caused the eviction), and a call that touched an object evicted before the call ended is refused
(its change would overwrite another writer's; the Data Service refuses it as well)."""
from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from dataclay.exceptions import NotAuthenticatedError, ObjectNotHereError, PermissionDeniedError
from dataclay._internal.ee.call_context import current_call, touched_by_calls
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.model.state import forget_state, loadable_names, restore_state
from dataclay._internal.model.states import HINT_KEY, ID_KEY, PENDING_KEY, PROXY, RESIDENT, STATE_KEY
from dataclay._internal.serialization.decoder import loads

_LOCK_STRIPES = 64

_log = logging.getLogger("dataclay.ee")

MUTABLE = object()
"""Snapshot marker: the field's value may change in place, so it must be re-pickled to compare."""

_IMMUTABLE_TYPES = frozenset({int, float, str, bytes, bool, type(None), complex})


# Values whose equality, within one type, implies equal stored bytes: a snapshot compares them by
# value and keeps no stored bytes for them (a 32 MiB text is then held once, not twice).
_EQUAL_MEANS_SAME_BYTES = frozenset({int, str, bytes, bool, type(None)})


def snapshot_value(value):
    """What a snapshot keeps of a value: the value itself if identity implies equal bytes, else MUTABLE."""
    if type(value) in _IMMUTABLE_TYPES or isinstance(value, DataClayObject):
        return value
    return MUTABLE


def snapshot_of(data: bytes, value) -> tuple:
    """A snapshot entry, (stored bytes, snapshot_value): no stored bytes (None) where the value alone tells
    whether a later value stores the same bytes."""
    return (None if type(value) in _EQUAL_MEANS_SAME_BYTES else data), snapshot_value(value)


def unchanged(previous: tuple, value) -> bool:
    """Whether `value` stores the same bytes as the snapshot entry `previous`, known without pickling it."""
    kept = previous[1]
    return kept is value or (previous[0] is None and type(kept) is type(value) and kept == value)


class ResidentObjects:
    """This backend's objects in memory; `source.load(call_id, ids)` answers with their stored state (ObjectRecords),
    and `state_lock` (re-entrant) orders installs against evictions."""

    def __init__(self, backend_id: str, source, policy, state_lock: threading.RLock, budget_bytes: int = 0):
        self.backend_id = backend_id
        self._budget = budget_bytes  # 0: no bound
        self._sizes: OrderedDict[str, int] = OrderedDict()  # resident ID -> stored bytes, least recently used first
        self._resident_bytes = 0
        self._source = source
        self._policy = policy
        self._state_lock = state_lock
        self._objects: dict[str, object] = {}
        self.snapshots: dict[str, dict] = {}
        self._datasets: dict[str, str] = {}
        self._generations: dict[str, int] = {}
        # Striped locks: one object is loaded once, while loads of different objects run in parallel.
        # Held while waiting for the Data Service, so nothing that serves the link may take them.
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
        self._used(oid)
        dataset = self._datasets.get(oid, "")
        if dataset and dataset not in call.datasets:
            raise PermissionDeniedError(f"session of {call.username!r} may not use object {oid} "
                                        f"(dataset {dataset!r})")
        call.touched[oid] = obj
        call.generations.setdefault(oid, self._generations.get(oid, 0))

    def changed_since(self, generations: dict) -> str | None:
        """The ID of an object evicted since the generation `generations` recorded for it, or None."""
        for oid, generation in generations.items():
            if self._generations.get(oid, 0) != generation:
                return oid
        return None

    def target(self, object_id: str, class_name: str):
        """The resident object a request names (loaded if needed); ObjectNotHereError if not stored here."""
        obj = self._objects.get(object_id)
        if obj is not None:
            self._used(object_id)
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
            call = current_call()
            while d.get(STATE_KEY) is not RESIDENT:
                if call is None:
                    raise NotAuthenticatedError(f"cannot load object {oid} outside a call (no caller session)")
                generation = self._generations.get(oid, 0)
                record = next((r for r in self._source.load(call.call_id, [oid]) if r.id == oid), None)
                if record is None:
                    if d.get(HINT_KEY) == self.backend_id:
                        d[HINT_KEY] = ""
                    return False
                values = self._decode(obj, record)
                with self._state_lock:
                    if self._generations.get(oid, 0) == generation:
                        self.adopt(obj, record.id, record.dataset, values, {f.name: f.value for f in record.fields})
            return True

    def install(self, obj, record) -> None:
        """Makes `obj` RESIDENT with the stored fields of `record` (decoded first: a refused field changes nothing)."""
        values = self._decode(obj, record)
        self.adopt(obj, record.id, record.dataset, values, {f.name: f.value for f in record.fields})

    def _decode(self, obj, record) -> dict:
        cls = type(obj)
        names = set(loadable_names(cls, [f.name for f in record.fields]))
        return {f.name: loads(f.value, self._policy, f"field {cls.__name__}.{f.name}") for f in record.fields
                if f.name in names}

    def adopt(self, obj, oid: str, dataset: str, values: dict, stored: dict, restore: bool = True) -> None:
        """Makes `obj` the RESIDENT instance of `oid` with stored `values`, whose stored bytes are `stored`
        (`restore`: give `obj` those values, through its class's __setstate__ if it has one; else it has them)."""
        d = obj.__dict__
        self.snapshots[oid] = {f: snapshot_of(stored[f], values[f]) for f in stored if f in values}
        self._datasets[oid] = dataset
        d.pop(PENDING_KEY, None)
        d[ID_KEY] = oid
        d[HINT_KEY] = self.backend_id
        d[STATE_KEY] = RESIDENT
        if restore:
            restore_state(obj, values)
        IDENTITY.adopt(obj, oid)
        self._objects[oid] = obj
        size = sum(len(data) for data in stored.values())
        with self._state_lock:
            self._resident_bytes += size - self._sizes.pop(oid, 0)
            self._sizes[oid] = size
            if self._budget and self._resident_bytes > self._budget:
                self._shed(keep=oid)

    def unload(self, obj) -> None:
        """Drops `obj`'s state from memory: it becomes a PROXY that reloads the stored state when used.
        The caller holds the state lock."""
        d = obj.__dict__
        oid = d[ID_KEY]
        forget_state(obj)
        d[STATE_KEY] = PROXY
        d[HINT_KEY] = self.backend_id
        self._objects.pop(oid, None)
        self.snapshots.pop(oid, None)
        self._resident_bytes -= self._sizes.pop(oid, 0)

    def _used(self, oid: str) -> None:
        """Marks a resident object as the one used most recently (the last the budget unloads)."""
        if self._budget:
            with self._state_lock:
                if oid in self._sizes:
                    self._sizes.move_to_end(oid)

    def _shed(self, keep: str) -> None:
        """Unloads the objects used least recently, except `keep` and what calls in flight touched, until
        the resident bytes are within the budget. The caller holds the state lock."""
        busy = touched_by_calls()
        excess, victims = self._resident_bytes - self._budget, []
        for oid, size in self._sizes.items():
            if excess <= 0:
                break
            if oid != keep and oid not in busy:
                victims.append(oid)
                excess -= size
        if victims:
            before = self._resident_bytes
            self.evict(victims)
            _log.debug("unloaded %d objects (%d bytes stored) to stay within DATACLAY_EE_RESIDENT_MB",
                       len(victims), before - self._resident_bytes)

    def _lock_for(self, oid: str) -> threading.Lock:
        return self._locks[hash(oid) % _LOCK_STRIPES]

    def evict_idle(self) -> int:
        """Unloads every resident object no call in flight has touched (dataClay 4's flush_all); returns how
        many. A call that touches one of them meanwhile is refused at its end, as after any eviction."""
        with self._state_lock:
            busy = touched_by_calls()
            return self.evict([oid for oid in list(self._objects) if oid not in busy])

    def evict(self, ids) -> int:
        """Unloads the resident objects among `ids` and bumps every one's generation; returns how many
        were resident. Never waits on a load (the thread serving the link calls it)."""
        count = 0
        with self._state_lock:
            for oid in ids:
                self._generations[oid] = self._generations.get(oid, 0) + 1
                obj = self._objects.get(oid)
                if obj is not None:
                    self.unload(obj)
                    count += 1
        return count
