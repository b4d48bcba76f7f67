"""What dataClay 4's `Client.get_backends()` maps each backend ID to: its BackendRecord's fields
(`name`, `host`, `port`, `languages`, `alive`, ...), plus the awaitable calls of dataClay 4's backend
clients that its programs use, each made in this program's session (so checked like any other call):

- `flush_all()`: this account's objects that no call is using leave the backend's memory; they are
  reloaded from the store (always current) when next used;
- `new_object_version(object_id)`: a version of an object (COMPSs' entry point); returns its metadata as
  JSON, which `storage.api.getByID` takes;
- `consolidate_object_version(version_id)`: the version's state becomes the original's."""
from __future__ import annotations

import json

from dataclay.event_loop import dc_to_thread_io
from dataclay._internal.runtime.base import canonical_id


class BackendClient:
    """One backend, as dataClay 4's get_backends() values offer it."""

    def __init__(self, record, runtime):
        self._record = record
        self._runtime = runtime

    def __getattr__(self, name):
        return getattr(self._record, name)

    def __eq__(self, other):
        return isinstance(other, BackendClient) and other._record == self._record

    def __hash__(self):
        return hash(self._record)

    def __repr__(self) -> str:
        return f"BackendClient({self._record!r})"

    async def flush_all(self) -> None:
        ds = self._runtime.router.data_service(self._record.id)
        await dc_to_thread_io(ds.flush_all)

    async def new_object_version(self, object_id) -> str:
        def make() -> str:
            original = self._runtime.get_by_id(canonical_id(object_id))
            version = original.new_version(backend_id=self._record.id)
            return json.dumps({"id": version.getID(), "class_name": type(version)._dc_class_name,
                               "master_backend_id": self._record.id})
        return await dc_to_thread_io(make)

    async def consolidate_object_version(self, object_id) -> None:
        def consolidate() -> None:
            self._runtime.get_by_id(canonical_id(object_id)).consolidate_version()
        await dc_to_thread_io(consolidate)


def backend_clients(records: dict, runtime) -> dict:
    """Backend ID -> BackendClient of each BackendRecord."""
    return {backend_id: BackendClient(record, runtime) for backend_id, record in records.items()}
