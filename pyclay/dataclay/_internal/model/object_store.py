"""dataClay 4's object-store calls on every DataClayObject: whole-state reads (get_properties), local
copies of persistent objects (dc_clone) and whole-state updates from local ones (dc_update), by
object or by alias, and dc_put (make_persistent under a required alias)."""
from __future__ import annotations

import typing
import uuid

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.model.checks import alias_text, backend_text, check_recursive
from dataclay._internal.model import state
from dataclay._internal.model.states import STATE_KEY
from dataclay._internal.runtime.current import get_runtime

_T = typing.TypeVar("_T", bound="ObjectStoreMethods")  # the class (or object) a call is made on


class ObjectStoreMethods:
    """Mixed into DataClayObject."""

    def get_properties(self) -> dict[str, typing.Any]:
        """The persistent fields that have a value, and their values (read in one call when persistent)."""
        if self.__dict__.get(STATE_KEY) is None:
            return local_fields(self)
        return get_runtime().get_properties(self)

    def dc_clone(self: _T, recursive: bool = False) -> _T:
        """A volatile copy of this persistent object: same class, same field values. Objects it references stay
        references to the persistent ones, unless `recursive`, which copies them too (transitively, each once)."""
        check_recursive(recursive)
        self._persistent_id("dc_clone")
        return get_runtime().clone(self, recursive)

    @classmethod
    def dc_clone_by_alias(cls: type[_T], alias: str, recursive: bool = False) -> _T:
        """dc_clone() of the object with `alias` (in the session's dataset)."""
        alias = alias_text(alias, "dc_clone_by_alias")
        check_recursive(recursive)
        return cls.get_by_alias(alias).dc_clone(recursive)

    def dc_update(self: _T, from_object: _T) -> None:
        """Gives this persistent object the field values of `from_object` (a local or persistent object of the
        same class) in one atomic update: every copy gets all of them or none. Fields `from_object` has no
        value for keep theirs."""
        self._persistent_id("dc_update")
        get_runtime().replace_fields(self, fields_to_copy(self, from_object))

    @classmethod
    def dc_update_by_alias(cls: type[_T], alias: str, from_object: _T) -> None:
        """dc_update(from_object) of the object with `alias` (in the session's dataset)."""
        alias = alias_text(alias, "dc_update_by_alias")
        if not isinstance(from_object, cls):
            raise InvalidArgumentError(f"dc_update_by_alias(): from_object must be a {cls._dc_class_name}, "
                                       f"not a {type(from_object).__module__}.{type(from_object).__qualname__}")
        cls.get_by_alias(alias).dc_update(from_object)

    def dc_put(self, alias: str, backend_id: str | uuid.UUID | None = None) -> None:
        """make_persistent() under `alias`, which is required (AliasAlreadyExistsError if it is taken)."""
        alias = alias_text(alias, "dc_put")
        self.make_persistent(alias=alias, backend_id=backend_text(backend_id))


def local_fields(obj) -> dict:
    """The persistent fields an in-memory object has a value for, and their values."""
    return state.stored_state(obj)


def fields_to_copy(target, from_object) -> dict:
    """The field values dc_update gives `target`: those `from_object` (of the same class) has."""
    if type(from_object) is not type(target):
        raise InvalidArgumentError(f"dc_update(): from_object must be a {type(target)._dc_class_name} like the "
                                   f"object updated, not a {type(from_object).__module__}."
                                   f"{type(from_object).__qualname__}")
    return from_object.get_properties()
