"""What a finished call changed: for each resident object it touched, the fields whose pickle
differs from the bytes last sent to the store (deltas, numbered by one process-wide increasing
sequence), and the volatile dataClay objects now reachable from persistent state (new objects).

Ordering: the Data Service ignores a delta whose sequence is not above the last one it applied to
that object. So capturing a call's state (pickling), numbering it and writing its result frame form
one critical section under `commit_lock`: frames reach the Data Service in sequence order, and a
higher-numbered delta never carries older state than a lower-numbered one."""
from __future__ import annotations

import itertools
import threading
import time

from dataclay._internal.ee.residency import ResidentObjects, snapshot_of, unchanged
from dataclay._internal.model.state import stored_state
from dataclay._internal.model.states import RESIDENT, STATE_KEY
from dataclay._internal.records import DeltaRecord, FieldRecord
from dataclay._internal.serialization.encoder import dumps
from dataclay._internal.serialization.graph import GraphWriter


class ChangeCollector:
    """Turns the touched objects of calls into deltas and new objects; one per execution environment."""

    def __init__(self, residents: ResidentObjects, commit_lock: threading.RLock):
        self._residents = residents
        # Held from collect() until the call's result frame is written (see the module's doc), and
        # while objects are loaded in or unloaded. Re-entrant: a call failing inside the section
        # unloads what it touched.
        self.commit_lock = commit_lock
        # Starting from the clock keeps sequences increasing across restarts of this process too.
        self._sequence = itertools.count(time.time_ns())

    def collect(self, touched: dict, writer: GraphWriter) -> list:
        """Deltas of the `touched` objects (id -> object); volatile objects they now reach get IDs in `writer`.

        The caller holds `commit_lock` until the deltas are written. Snapshots are updated as the
        deltas are made: the caller must unload the touched objects if the call then fails, so that
        memory never holds state the store did not get."""
        deltas = []
        for oid, obj in list(touched.items()):
            d = obj.__dict__
            if d.get(STATE_KEY) is not RESIDENT:
                continue
            snapshot = self._residents.snapshots.setdefault(oid, {})
            changed, removed = [], []
            values = stored_state(obj)
            for name in [n for n in snapshot if n not in values]:
                removed.append(name)
                del snapshot[name]
            for name, value in values.items():
                previous = snapshot.get(name)
                if previous is not None and unchanged(previous, value):
                    continue
                data, references = dumps(value, writer.name, (type(obj).__name__, name))
                if previous is None or previous[0] is None or previous[0] != data:
                    changed.append(FieldRecord(name, data, references))
                snapshot[name] = snapshot_of(data, value)
            if changed or removed:
                deltas.append(DeltaRecord(oid, tuple(changed), tuple(removed), next(self._sequence)))
        return deltas

    def adopt_new(self, writer: GraphWriter, records: list) -> None:
        """Makes the objects `writer` named (stored as `records`) RESIDENT here."""
        by_id = {r.id: r for r in records}
        for obj, oid in writer.assigned.values():
            record = by_id[oid]
            values = stored_state(obj)
            self._residents.adopt(obj, oid, record.dataset, values, {f.name: f.value for f in record.fields},
                                  restore=False)
