"""The states of a dataClay object, kept in its __dict__ under STATE_KEY.

No STATE_KEY: volatile (an ordinary in-memory object). PROXY: persistent, its fields live in a
backend (or, in an execution environment, are not loaded yet). RESIDENT: persistent and its
fields are in memory (execution environment only); accesses are tracked for the current call."""
from __future__ import annotations

STATE_KEY = "_dc_state"
ID_KEY = "_dc_id"
HINT_KEY = "_dc_hint"
PENDING_KEY = "_dc_pending"    # made by model code during a call in a backend: the ID it is stored under
ALIAS_KEY = "_dc_alias"        # the alias this program last stored or found the object by (repr shows it)
VERSIONS_KEY = "_dc_versions"  # a version made here: the IDs of the versions it was made through


class _State:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


PROXY = _State("PROXY")
RESIDENT = _State("RESIDENT")


class ResidentTracker:
    """Where accesses to RESIDENT objects are reported; the execution environment installs its own."""

    @staticmethod
    def track(obj) -> None:
        """Records that the current call touched `obj` (no call: nothing to record)."""


TRACKER = ResidentTracker()


def install_tracker(track) -> None:
    """Routes RESIDENT accesses of this process to `track(obj)`."""
    TRACKER.track = track


class CreationHook:
    """Told of every dataClay object made by a constructor; the execution environment installs its own."""

    @staticmethod
    def created(obj) -> None:
        """`obj` was just made (outside a backend: nothing to do)."""


CREATION = CreationHook()


def install_creation_hook(created) -> None:
    """Routes the objects this process's code makes to `created(obj)`."""
    CREATION.created = created
