"""dataClay for Python: make objects persistent with one call, share them by alias, and run
their active methods next to the data, in the backend that stores them.

Two styles, one session per process: dataClay 2's `api.init()` / `api.finish()`, and dataClay 4's
`Client(...)` with `start()` / `stop()` (or `with`) and awaitable `a_` calls."""
from dataclay import api
from dataclay._internal.client import Client
from dataclay._internal.model.active import activemethod
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.runtime.current import get_runtime as getRuntime
from dataclay.alien import AlienDataClayObject
from dataclay.stub import StubDataClayObject

StorageObject = DataClayObject
"""dataClay 4's (and COMPSs') other name of DataClayObject."""

__all__ = ["AlienDataClayObject", "Client", "DataClayObject", "StorageObject", "StubDataClayObject", "activemethod",
           "api", "getRuntime"]
