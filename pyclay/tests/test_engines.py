"""The engine view: every engine's properties hang together, and the settings table and the
commands that take an engine name agree with it."""
import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import engines, settings_table as table


def test_each_engines_properties_and_settings_agree():
    for engine in engines.ENGINES:
        keys = set(engine.setting_keys)
        assert engine.durability and engine.description, engine.name
        assert not engine.pmem_pool or engine.pool_directory, engine.name
        # the keys every engine reads are the Data Service's, never one engine's
        assert not keys & {"DATACLAY_STORE", "DATACLAY_STORE_PATH", "DATACLAY_STORE_SIZE", "DATACLAY_STORE_KEY_FILE"}
        assert engine.database == ("DATACLAY_STORE_URL" in keys), engine.name
        assert engine.durable or not keys, f"{engine.name} keeps nothing, so nothing configures it"
        assert all(table.DATA_SERVICE in s.readers for s in engine.settings()), engine.name


def test_the_engine_names_are_unique_and_the_store_setting_lists_them_in_order():
    names = engines.ENGINE_NAMES
    meaning = table.setting("DATACLAY_STORE").meaning
    assert len(set(names)) == len(names)
    assert [meaning.index(f"`{n}`") for n in names] == sorted(meaning.index(f"`{n}`") for n in names)
    assert table.value("DATACLAY_STORE", {}) == engines.default_engine().name


def test_an_unknown_engine_is_refused_naming_where_it_came_from_and_the_choices():
    with pytest.raises(InvalidArgumentError) as raised:
        engines.engine("tape", "--store")
    assert str(raised.value) == f"--store: unknown store engine 'tape'; choose one of {', '.join(engines.ENGINE_NAMES)}"
