"""Which reads the execution environment vouches are answered by one stored field as it is
(ee/stored_reads.py): the Data Service then answers them without it, so a wrong "yes" would give a
client a value the model's code would not. Every shape of method that does more must get ""."""
from __future__ import annotations

import functools

from dataclay import DataClayObject, activemethod
from dataclay._internal.ee.stored_reads import field_read, getter_field


def _logged(func):
    @functools.wraps(func)
    def wrapper(self):
        print("read")
        return func(self)
    return wrapper


class Reading(DataClayObject):
    n: int
    m: int

    def __init__(self, n=0, m=0):
        self.n, self.m = n, m

    @activemethod
    def get(self) -> int:
        return self.n

    @activemethod
    def other(me) -> int:  # the instance need not be called self
        return me.m

    @activemethod
    def doubled(self) -> int:
        return self.n * 2

    @activemethod
    def with_arg(self, k: int = 0) -> int:
        return self.n

    @activemethod
    def variadic(self, *args) -> int:
        return self.n

    @activemethod
    async def later(self) -> int:
        return self.n

    @activemethod
    @_logged
    def logged(self) -> int:
        return self.n

    @activemethod
    def not_a_field(self) -> int:
        return self.volatile_thing

    def plain(self) -> int:
        return self.n

    @property
    def prop(self) -> int:
        return self.n


class OwnState(DataClayObject):
    n: int

    def __setstate__(self, state):
        self.n = state["n"] + 1

    @activemethod
    def get(self) -> int:
        return self.n


class Intercepting(DataClayObject):
    n: int

    def __getattribute__(self, name):
        return object.__getattribute__(self, name)

    @activemethod
    def get(self) -> int:
        return self.n


def test_a_method_returning_a_field_is_answered_by_that_field():
    assert getter_field(Reading, "get") == "n"
    assert getter_field(Reading, "other") == "m"


def test_methods_that_do_anything_else_are_not():
    for name in ("doubled", "with_arg", "variadic", "later", "logged", "not_a_field", "plain", "prop", "missing"):
        assert getter_field(Reading, name) == "", name


def test_classes_whose_state_or_attribute_reads_run_their_own_code_are_not():
    assert getter_field(OwnState, "get") == ""
    assert field_read(OwnState, "n") == ""
    assert getter_field(Intercepting, "get") == ""


def test_field_reads_are_answered_by_persistent_fields_only():
    assert field_read(Reading, "n") == "n"
    assert field_read(Reading, "prop") == ""
    assert field_read(Reading, "volatile_thing") == ""
