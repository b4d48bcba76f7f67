"""repr() of dataClay objects says what they are from what they already know: class, ID and the alias this
program stored or found them by, or that they are not persistent; it never calls a server."""
import uuid

from dataclay import DataClayObject
from dataclay._internal.model import metadata
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.runtime.current import peek_runtime


class Sensor(DataClayObject):
    name: str

    def __init__(self, name):
        self.name = name


class Labelled(DataClayObject):
    name: str

    def __repr__(self):
        return f"Labelled({self.name!r})"


def test_a_volatile_object_says_it_is_not_persistent():
    sensor = Sensor("t1")
    assert repr(sensor).startswith(f"<{__name__}.Sensor (volatile, not persistent) at 0x")
    assert str(sensor) == repr(sensor)


def test_a_proxy_shows_class_id_and_alias_without_a_runtime():
    # setup: a proxy, in a process with no session at all (any call would fail)
    assert peek_runtime() is None
    oid = str(uuid.uuid4())
    proxy = IDENTITY.proxy(Sensor, oid, "")
    try:
        # run / verify
        assert repr(proxy) == f"<{__name__}.Sensor {oid}>"
        metadata.remember_alias(proxy, "kitchen")
        assert repr(proxy) == f"<{__name__}.Sensor {oid} alias='kitchen'>"
    finally:
        IDENTITY.forget(oid, proxy)


def test_a_model_class_keeps_its_own_repr():
    labelled = Labelled()
    labelled.name = "x"
    assert repr(labelled) == "Labelled('x')"
