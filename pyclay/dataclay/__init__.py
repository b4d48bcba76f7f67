"""dataClay for Python: make objects persistent with one call, share them by alias, and run
their active methods next to the data, in the backend that stores them."""
from dataclay import api
from dataclay._internal.model.active import activemethod
from dataclay._internal.model.object import DataClayObject
from dataclay._internal.runtime.current import get_runtime as getRuntime

__all__ = ["DataClayObject", "activemethod", "api", "getRuntime"]
