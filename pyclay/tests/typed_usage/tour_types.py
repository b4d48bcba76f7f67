"""What a type checker (and so an IDE) must infer from pmclay's annotations: test_types.py runs mypy
over this file, which is never executed. Each assert_type fails the check when the inferred type
differs."""
from __future__ import annotations

import uuid

from typing_extensions import assert_type

from dataclay import Client, DataClayObject, StorageObject, api
from dataclay.exceptions import AliasDoesNotExistError, DataClayException
from tour.people import Person
from WordCount.classes import Text, TextCollection, TextStats


def dataclay2_style() -> None:
    api.init()
    ada = Person("Ada", 36)
    ada.make_persistent(alias="ada", backend_id=next(iter(api.get_backends())))
    assert_type(Person.get_by_alias("ada"), Person)
    assert_type(Person.get_by_alias("ada", dataset="shared"), Person)
    assert_type(Person.get_by_id(uuid.uuid4()), Person)
    assert_type(Person.get_by_alias("ada").birthday(), int)
    assert_type(Person.get_by_alias("ada").name, str)
    assert_type(ada.new_version(), Person)
    assert_type(ada.getID(), str | None)
    assert_type(ada.get_id(), uuid.UUID | None)
    assert_type(ada.get_location(), str)
    assert_type(ada.get_all_locations(), list[str])
    assert_type(ada.new_replica(), str)
    assert_type(ada.get_aliases(), set[str])
    assert_type(api.get_by_id("6c5e43b5-2f7a-4f5e-9c55-9b7c0f3f3c1e"), DataClayObject)
    assert_type(api.get_backends()["id"].name, str)
    assert_type(TextCollection.get_by_alias("Words"), TextCollection)
    assert_type(Text("to be").word_count(), dict)
    assert_type(TextStats.get_by_alias("stats").top_words(3), list)
    api.finish()


def dataclay4_style() -> None:
    with Client(host="127.0.0.1", port=11034, username="ada", password="secret", dataset="ada") as client:
        assert_type(client, Client)
        ada = Person("Ada", 36)
        ada.dc_put("ada")
        assert_type(ada.dc_clone(), Person)
        assert_type(Person.dc_clone_by_alias("ada"), Person)
        assert_type(StorageObject.get_by_alias("ada"), DataClayObject)
        try:
            Person.get_by_alias("nobody")
        except AliasDoesNotExistError as e:
            assert_type(e, AliasDoesNotExistError)
            assert isinstance(e, DataClayException)


async def asyncio_style() -> None:
    assert_type(await Person.a_get_by_alias("ada"), Person)
    assert_type(await Person.a_get_by_id(uuid.uuid4()), Person)
    ada = Person("Ada", 36)
    await ada.a_make_persistent(alias="ada")
    assert_type(await ada.a_new_version(), Person)
    assert_type(await ada.a_new_replica(), str)
    assert_type(await ada.a_get_aliases(), set[str])
