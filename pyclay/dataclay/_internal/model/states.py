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


def _nothing(obj) -> None:
    """Outside a backend there is no call to record objects for."""


class ProcessHook:
    """A callback of this whole process, doing nothing until `install` replaces it: the execution
    environment installs its own."""

    __slots__ = ("call",)

    def __init__(self):
        self.call = _nothing

    def install(self, call) -> None:
        """Routes this hook's events of this process to `call(obj)`."""
        self.call = call


TRACKER = ProcessHook()   # told of every access to a RESIDENT object: the current call touched it
CREATION = ProcessHook()  # told of every dataClay object a constructor made
