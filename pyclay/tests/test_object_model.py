"""The object model: persistent fields as descriptors, volatile behaviour, the identity map and
active-method dispatch in each state (volatile, proxy, resident)."""
import copy
import gc
import pickle
import typing
import uuid

import pytest

from dataclay import DataClayObject, activemethod
from dataclay.exceptions import InvalidArgumentError, NotAuthenticatedError
from dataclay._internal.ee.call_context import CallContext, enter_call, leave_call
from dataclay._internal.model.fields import PersistentField
from dataclay._internal.model.identity import IDENTITY, IdentityMap
from dataclay._internal.model.states import PROXY, RESIDENT, STATE_KEY, TRACKER
from unitmodels.shop import Item


class Animal(DataClayObject):
    name: str
    legs: int = 4
    kind: typing.ClassVar[str] = "animal"
    population = 0

    def __init__(self, name):
        self.name = name
        self.scratch = "local"

    @activemethod
    def speak(self):
        return f"{self.name} speaks"

    @activemethod
    def shout(self):
        return self.speak().upper()


class Bird(Animal):
    wings: int
    legs = 2

    def speak(self):
        return "tweet"


def make_proxy(cls):
    return IDENTITY.proxy(cls, str(uuid.uuid4()), "backend")


def test_persistent_fields_are_the_annotations_over_the_mro():
    assert Animal._dc_fields == ("name", "legs") and Bird._dc_fields == ("name", "legs", "wings")
    assert isinstance(Animal.__dict__["name"], PersistentField) and Animal.population == 0
    assert Bird.legs.default == 2 and Animal.legs.default == 4


def test_active_methods_follow_overrides():
    assert Animal._dc_active_methods == {"speak", "shout"}
    assert Bird._dc_active_methods == {"shout"}


def test_volatile_object_keeps_fields_and_other_attributes_in_memory():
    dog = Animal("rex")
    dog.legs = 3
    assert (dog.name, dog.legs, dog.scratch, dog.is_persistent) == ("rex", 3, "local", False)
    assert Bird("tweety").legs == 2
    del dog.legs
    assert dog.legs == 4
    with pytest.raises(AttributeError, match="wings"):
        Bird("x").wings


def test_volatile_active_method_runs_locally_without_any_runtime():
    assert Animal("rex").shout() == "REX SPEAKS"


def test_proxy_needs_the_runtime_for_fields_and_active_methods_but_not_for_other_attributes():
    proxy = make_proxy(Animal)
    proxy.scratch = "stays here"
    assert proxy.scratch == "stays here"
    for access in (lambda: proxy.name, lambda: proxy.speak(), lambda: setattr(proxy, "legs", 5)):
        with pytest.raises(NotAuthenticatedError, match="api.init"):
            access()
    with pytest.raises(InvalidArgumentError, match="cannot delete"):
        del proxy.name


def test_resident_object_runs_locally_and_reports_every_access():
    touched = []
    TRACKER.install(touched.append)
    try:
        resident = make_proxy(Animal)
        resident.__dict__.update({STATE_KEY: RESIDENT, "name": "rex"})
        assert resident.shout() == "REX SPEAKS" and resident.legs == 4
        resident.legs = 1
    finally:
        TRACKER.install(lambda obj: None)
    assert touched == [resident] * 5


def test_identity_map_gives_one_instance_per_id_and_holds_it_weakly():
    identities = IdentityMap()
    oid = str(uuid.uuid4())
    first = identities.proxy(Animal, oid)
    assert identities.proxy(Animal, oid) is first and identities.get(oid) is first
    assert first.__dict__[STATE_KEY] is PROXY and first.getID() == oid and first.get_id() == uuid.UUID(oid)
    del first
    gc.collect()
    assert identities.get(oid) is None


def test_plain_pickle_and_copy_of_a_proxy_give_back_the_same_instance():
    proxy = make_proxy(Animal)
    assert pickle.loads(pickle.dumps(proxy)) is proxy and copy.copy(proxy) is proxy


def test_copy_of_a_volatile_object_copies_its_fields():
    dog = Animal("rex")
    twin = copy.deepcopy(dog)
    assert twin is not dog and twin.name == "rex" and not twin.is_persistent


def test_activemethod_refuses_what_is_not_a_plain_method():
    with pytest.raises(TypeError, match="staticmethod"):
        activemethod(staticmethod(lambda: 1))


def test_tracker_sees_nothing_outside_a_call(models_dir):
    import threading
    from dataclay._internal.ee.residency import ResidentObjects
    residents = ResidentObjects("b", None, None, threading.RLock())
    item = make_proxy(Item)
    residents.track(item)
    call = CallContext(1, "alice", "alice", frozenset({"alice"}))
    enter_call(call)
    try:
        residents.track(item)
    finally:
        leave_call()
    assert call.touched == {item.getID(): item}
