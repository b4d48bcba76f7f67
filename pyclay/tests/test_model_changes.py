"""NewModel's report of what re-registering a model changes, computed from the same model descriptions the
Logic Module keeps (read from real model directories by NewModel's own reader)."""
import textwrap

from dataclay._internal.cli.admin.model_changes import describe_changes, report
from dataclay._internal.cli.admin.model_files import read_python_model

V1 = """
from dataclay import DataClayObject, activemethod

class Box(DataClayObject):
    weight: int
    label: str
    colour: str

    @activemethod
    def heavier(self, amount: int) -> int:
        return self.weight + amount

    @activemethod
    def paint(self, colour):
        self.colour = colour

class Crate(DataClayObject):
    size: int
"""

V2 = """
from dataclay import DataClayObject, activemethod

class Box(DataClayObject):
    weight: float
    label: str
    unit: str = "kg"
    owner: str

    @activemethod
    def heavier(self, amount: float, times: int = 1) -> float:
        return self.weight + amount * times

    @activemethod
    def describe(self) -> str:
        return f"{self.weight} {self.unit}"

class Pallet(DataClayObject):
    boxes: list
"""


def model(tmp_path, name, source):
    root = tmp_path / name
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "model.py").write_text(textwrap.dedent(source))
    return read_python_model("shop", str(root))


def test_every_kind_of_change_is_reported_with_what_it_means_for_stored_objects(tmp_path):
    # setup
    old, new = model(tmp_path, "v1", V1), model(tmp_path, "v2", V2)
    old.version = 3
    # run
    lines = describe_changes(old, new)
    text = report(old, new)
    # verify
    assert lines[0] == "class added: shop.model.Pallet"
    assert lines[1].startswith("class removed: shop.model.Crate (its stored objects stay")
    box = [line.removeprefix("shop.model.Box: ") for line in lines if line.startswith("shop.model.Box: ")]
    assert box == [
        "field added: unit: str (objects stored before read the class-level default)",
        "field added: owner: str (objects stored before have no value for it: reading it raises AttributeError "
        "until it is assigned; a class-level default (owner: str = ...) would give them one)",
        "field removed: colour (objects stored before keep its value, unread by the new code)",
        "field retyped: weight: int -> float (stored values are not converted: objects stored before still hold "
        "the old type)",
        "method added: describe(self)",
        "method removed: paint(self, colour) (calls to it now fail with MethodDoesNotExistError)",
        "method changed: heavier(self, amount: int) -> heavier(self, amount: float, times: int=1)",
    ]
    assert text.startswith("\nchanges since version 3:\n  class added: shop.model.Pallet\n")


def test_an_unchanged_model_says_so_and_a_new_namespace_says_nothing(tmp_path):
    old, new = model(tmp_path, "a", V1), model(tmp_path, "b", V1)
    old.version = 2
    assert report(old, new) == "\nno class, field or active method changed since version 2"
    assert report(None, new) == ""


def test_java_models_are_compared_by_their_descriptions_too():
    from dataclay._internal.proto import common_pb2, logicmodule_pb2

    def java(fields, methods):
        model = logicmodule_pb2.Model(namespace="shop", language=common_pb2.JAVA, version=1)
        cls = model.classes.add(name="shop.Box")
        for name, kind in fields:
            cls.fields.add(name=name, type=kind)
        for name, signature in methods:
            cls.methods.add(name=name, signature=signature)
        return model

    old = java([("weight", "int")], [("heavier", "heavier(int)")])
    new = java([("weight", "double"), ("unit", "java.lang.String")], [])
    assert describe_changes(old, new) == [
        "shop.Box: field added: unit: java.lang.String (objects stored before have no stored value for it)",
        "shop.Box: field retyped: weight: int -> double (stored values are not converted: objects stored before "
        "still hold the old type)",
        "shop.Box: method removed: heavier(int) (calls to it now fail with MethodDoesNotExistError)",
    ]
