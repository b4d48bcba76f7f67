"""The identity map: at most one Python instance per object ID in this process (held weakly, so
proxies nobody uses are collected)."""
from __future__ import annotations

import threading
import weakref

from dataclay._internal.model.states import HINT_KEY, ID_KEY, PROXY, STATE_KEY


class IdentityMap:
    """Object ID (canonical UUID text) -> the one instance that stands for it here."""

    def __init__(self):
        self._objects: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def get(self, object_id: str):
        """The instance for `object_id`, or None."""
        return self._objects.get(object_id)

    def proxy(self, cls: type, object_id: str, hint: str = ""):
        """The instance for `object_id`; a new PROXY of `cls` (no __init__ run) if there is none."""
        obj = self._objects.get(object_id)
        if obj is not None:
            return obj
        with self._lock:
            obj = self._objects.get(object_id)
            if obj is None:
                obj = object.__new__(cls)
                obj.__dict__.update({STATE_KEY: PROXY, ID_KEY: object_id, HINT_KEY: hint})
                self._objects[object_id] = obj
            return obj

    def adopt(self, obj, object_id: str) -> None:
        """Registers `obj` (just made persistent) as the instance for `object_id`."""
        with self._lock:
            self._objects[object_id] = obj

    def forget(self, object_id: str, obj) -> None:
        """Drops `object_id`'s entry if it is `obj` (an ID that no longer exists, whose instance stands for
        another object now)."""
        with self._lock:
            if self._objects.get(object_id) is obj:
                del self._objects[object_id]

    def __len__(self) -> int:
        return len(self._objects)


IDENTITY = IdentityMap()
"""This process's identity map."""
