"""dataclaycmd NewModel's reading of a Python model: classes are told apart by what their bases name
through each module's imports, and modules in the client library's own packages are refused, except
dataClay 4's dataclay.contrib.<name> packages."""
import textwrap

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.cli.admin.model_files import read_python_model


def write(root, files: dict) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))


def test_a_class_named_like_a_model_class_is_not_one_unless_its_bases_make_it_one(tmp_path):
    write(tmp_path, {
        "shop/__init__.py": "",
        "shop/family.py": """
            from dataclay import DataClayObject
            class Person(DataClayObject):
                name: str
        """,
        "shop/alien.py": """
            from pydantic import BaseModel
            class Person(BaseModel):
                name: str
        """,
        "shop/more.py": """
            import dataclay
            from . import family
            from .family import Person as Base
            from storage.api import StorageObject
            class Child(Base):
                pass
            class Cousin(family.Person):
                pass
            class Legacy(StorageObject):
                pass
            class Direct(dataclay.DataClayObject):
                pass
            class Unrelated(object):
                pass
        """,
    })
    model = read_python_model("shop", str(tmp_path))
    assert sorted(c.name for c in model.classes) == [
        "shop.family.Person", "shop.more.Child", "shop.more.Cousin", "shop.more.Direct", "shop.more.Legacy"]


@pytest.mark.parametrize("path", ["dataclay/mine.py", "dataclay/contrib/__init__.py", "dataclay/__init__.py",
                                  "storage/api.py", "dataclay.py"])
def test_modules_in_the_client_librarys_packages_are_refused_with_the_reason(tmp_path, path):
    write(tmp_path, {path: "from dataclay import DataClayObject\nclass Mine(DataClayObject):\n    x: int\n"})
    with pytest.raises(InvalidArgumentError, match="client library's own package.*dataclay/contrib/<name>"):
        read_python_model("mine", str(tmp_path))


def test_dataclay_4_contributed_models_are_accepted(tmp_path):
    write(tmp_path, {"dataclay/contrib/shapes/__init__.py": "",
                     "dataclay/contrib/shapes/model.py": "from dataclay import DataClayObject\n"
                                                         "class Square(DataClayObject):\n    side: int\n"})
    model = read_python_model("shapes", str(tmp_path))
    assert [c.name for c in model.classes] == ["dataclay.contrib.shapes.model.Square"]
