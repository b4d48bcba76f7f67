"""Local copies of persistent objects (dc_clone, get_properties): an object's stored form, fetched in
one call from a backend that holds it, decoded into plain values; references to other persistent
objects stay proxies, or, for a recursive clone, become copies too (each object copied once, so
shared objects and cycles keep their shape)."""
from __future__ import annotations

from collections.abc import Callable

from dataclay.exceptions import ObjectNotHereError
from dataclay._internal.model.object import rebuild_volatile
from dataclay._internal.model.state import loadable_names, restore_state
from dataclay._internal.model.states import ID_KEY
from dataclay._internal.serialization.decoder import loads, reference_for


def only_object(found: list, object_id: str):
    """The ObjectRecord of `object_id` among what a GetObjects call returned; ObjectNotHereError if absent."""
    for data in found:
        if data.id == object_id:
            return data
    raise ObjectNotHereError(f"object {object_id} is not stored on the backend asked")


def decode_fields(data, policy, resolve: Callable | None = None) -> dict:
    """Field name -> value of a stored object (references resolved by `resolve(pid)`, default: their proxies)."""
    cls = policy.dataclay_class(data.class_name)
    names = set(loadable_names(cls, [field.name for field in data.fields]))
    return {field.name: loads(field.value, policy, f"field {cls.__name__}.{field.name}", resolve)
            for field in data.fields if field.name in names}


def clone(obj, recursive: bool, stored_form: Callable, policy):
    """A volatile copy of the persistent `obj`; `stored_form(proxy)` fetches an object's ObjectRecord."""
    copies: dict[str, object] = {}
    pending: list[tuple] = []

    def copy_of(proxy):
        oid = proxy.__dict__[ID_KEY]
        made = copies.get(oid)
        if made is None:
            made = copies[oid] = rebuild_volatile(type(proxy))
            pending.append((made, proxy))
        return made

    def resolve(pid):
        return copy_of(reference_for(pid, policy))

    root = copy_of(obj)
    while pending:
        made, proxy = pending.pop()
        restore_state(made, decode_fields(stored_form(proxy), policy, resolve if recursive else None))
    return root
