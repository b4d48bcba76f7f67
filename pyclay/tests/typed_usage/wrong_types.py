"""Mistakes the annotations must let a type checker report: test_types.py runs mypy over this file
and expects exactly the errors marked `# expect: <mypy error code>`, no more, no fewer."""
from __future__ import annotations

from dataclay import DataClayObject
from WordCount.classes import Text, TextCollection


class Person(DataClayObject):
    name: str

    def __init__(self, name: str) -> None:
        self.name = name


not_a_text: Text = TextCollection.get_by_alias("Words")  # expect: assignment
not_an_int: int = Person.get_by_alias("ada").name  # expect: assignment
Person.get_by_alias(42)  # expect: arg-type
Person("Ada").make_persistent(alias=3)  # expect: arg-type
Person("Ada").new_version(backend_id=1.5)  # expect: arg-type
still_a_person: Text = Person("Ada").new_version()  # expect: assignment
Person.get_by_alias("ada").birthday()  # expect: attr-defined


async def awaited() -> None:
    not_a_text_either: Text = await Person.a_get_by_alias("ada")  # expect: assignment
