"""What happens to stored objects when their model changes, on a real cluster: a model is registered, objects
are stored, a changed version is registered over it (NewModel reports each change), and each kind of change
behaves as docs/models.md says: added fields (with and without a class-level default), removed and retyped
fields, added and removed methods, removed classes."""

import pytest

from conftest import started_cluster
from harness.models import run_with_model, write_model

pytestmark = pytest.mark.timeout(300)

V1 = """
from dataclay import DataClayObject, activemethod


class Box(DataClayObject):
    weight: int
    label: str
    colour: str

    def __init__(self, weight, label, colour):
        self.weight, self.label, self.colour = weight, label, colour

    @activemethod
    def paint(self, colour):
        self.colour = colour


class Crate(DataClayObject):
    size: int

    def __init__(self, size):
        self.size = size
"""

V2 = """
from dataclay import DataClayObject, activemethod


class Box(DataClayObject):
    weight: float
    label: str
    unit: str = "kg"
    owner: str

    def __init__(self, weight, label, owner):
        self.weight, self.label, self.owner = weight, label, owner

    @activemethod
    def describe(self) -> str:
        return f"{self.label}: {self.weight} {self.unit}"

    @activemethod
    def owner_or(self, default):
        return getattr(self, "owner", default), hasattr(self, "owner")

    @activemethod
    def owner_now(self):
        return self.owner

    @activemethod
    def relabel(self, label):
        self.label = label
"""


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    roots = {}
    for name, source in (("v1", V1), ("v2", V2)):
        roots[name] = write_model(tmp_path_factory.mktemp(name), "shop", source)
    return roots


def run(cluster, root, body: str) -> dict:
    return run_with_model(cluster, root, """
        import json
        from dataclay.exceptions import DataClayException
        from shop.model import *
    """, body)


def register(cluster, root) -> str:
    return cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "shop", str(root), "python").stdout


def test_stored_objects_follow_the_documented_rules_when_their_model_changes(versions):
    cluster = started_cluster(backends=1)
    try:
        # setup: version 1 and objects stored with it
        assert "changes since" not in register(cluster, versions["v1"])
        run(cluster, versions["v1"], """
            Box(5, "old", "red").make_persistent("box")
            Crate(3).make_persistent("crate")
            print(json.dumps({}))
        """)
        # run: version 2 over it
        report = register(cluster, versions["v2"])
        # verify: NewModel said what changed
        for line in ("class removed: shop.model.Crate", "shop.model.Box: field added: unit: str (objects stored "
                     "before read the class-level default)", "shop.model.Box: field added: owner: str (objects "
                     "stored before have no value for it", "shop.model.Box: field removed: colour",
                     "shop.model.Box: field retyped: weight: int -> float", "shop.model.Box: method added: describe",
                     "shop.model.Box: method removed: paint(self, colour)"):
            assert line in report, report
        out = run(cluster, versions["v2"], """
            box = Box.get_by_alias("box")
            try:
                box.owner
                missing = None
            except AttributeError as e:
                missing = [isinstance(e, DataClayException), type(e).__name__, str(e)]
            try:
                box.owner_now()
                in_model = None
            except AttributeError as e:
                in_model = type(e).__name__
            print(json.dumps({
                "unit": box.unit, "describe": box.describe(), "weight": [type(box.weight).__name__, box.weight],
                "hasattr": hasattr(box, "owner"), "getattr": getattr(box, "owner", "nobody"), "missing": missing,
                "in_model": in_model, "owner_or": box.owner_or("nobody"), "repr": repr(box),
            }))
            box.owner = "ann"
            box.relabel("new")
        """)
        assert out["unit"] == "kg" and out["describe"] == "old: 5 kg"
        assert out["weight"] == ["int", 5]  # stored values keep their type
        assert out["hasattr"] is False and out["getattr"] == "nobody"
        assert out["missing"][:2] == [True, "FieldNotSetError"] and "no value for field 'owner'" in out["missing"][2]
        assert out["in_model"] == "AttributeError" and out["owner_or"] == ["nobody", False]
        # the old program: its removed method is refused, the removed class's objects cannot be used
        old = run(cluster, versions["v1"], """
            box = Box.get_by_alias("box")
            outcome = {}
            try:
                box.paint("blue")
            except DataClayException as e:
                outcome["paint"] = type(e).__name__
            try:
                Crate.get_by_alias("crate").size
            except DataClayException as e:
                outcome["crate"] = type(e).__name__
            print(json.dumps(outcome))
        """)
        assert old == {"paint": "MethodDoesNotExistError", "crate": "ClassNotRegisteredError"}
        # version 1 again: the removed field's value was kept through version 2's changes
        assert "shop.model.Box: field added: colour" in register(cluster, versions["v1"])
        again = run(cluster, versions["v1"], """
            box = Box.get_by_alias("box")
            print(json.dumps({"colour": box.colour, "label": box.label, "crate": Crate.get_by_alias("crate").size}))
        """)
        assert again == {"colour": "red", "label": "new", "crate": 3}
    finally:
        cluster.stop()
