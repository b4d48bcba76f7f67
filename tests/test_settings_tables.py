"""The Java servers' own tables agree with pyclay's: every key `logicmodule.jar settings --json`
and `dataservice.jar settings --json` print is in the settings table with the same default, every
key the table says a server reads is in that server's list, and the engine view equals the Data
Service's engine registry (`dataservice.jar engines --json`): names, order, durability, settings.

Each command prints a JSON list: settings as [{"key", "default" (a string, "" for none), "meaning"}],
engines as [{"name", "durability", "description", "settings": [{"key", "default", "meaning"}]}]."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from harness.cluster import REPO
from dataclay._internal import engines, settings_table as table

JARS = REPO / "pyclay" / "dataclay" / "_internal" / "jars"
SIZE = re.compile(r"^(\d+)([KMGT]?)$", re.IGNORECASE)
SERVERS = {table.LOGIC_MODULE: "logicmodule.jar", table.DATA_SERVICE: "dataservice.jar"}


def _printed(jar: str, *command: str) -> list[dict]:
    """What `java -jar JAR COMMAND... --json` prints, parsed; run with no DATACLAY_* key set, so
    the defaults printed are the jar's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DATACLAY_")}
    result = subprocess.run(["java", "-jar", str(JARS / jar), *command, "--json"], env=env, capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"{jar} {' '.join(command)} --json failed:\n{result.stdout}\n{result.stderr}"
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as e:
        raise AssertionError(f"{jar} {' '.join(command)} --json printed no JSON ({e}):\n{result.stdout}") from None


def _same_default(python: str, java: str) -> bool:
    """Whether two spellings of a default mean the same: equal, the same size (16M and 16777216)
    or the same path once ~ is expanded (a jar may print the home it found)."""
    if python == java:
        return True
    a, b = SIZE.match(python), SIZE.match(java)
    if a and b:
        shift = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
        return int(a[1]) << shift[a[2].upper()] == int(b[1]) << shift[b[2].upper()]
    return bool(python) and os.path.expanduser(python) == java


def _disagreements(printed: list[dict], where: str) -> list[str]:
    """Keys `printed` lists that the table lacks or gives another default."""
    problems = []
    for entry in printed:
        key, default = entry["key"], entry["default"]
        if key not in table.SETTINGS:
            problems.append(f"{where}: {key} is not in settings_table.SETTINGS")
        elif not _same_default(table.setting(key).default, default):
            problems.append(f"{where}: {key} defaults to {default!r}, the table says {table.setting(key).default!r}")
    return problems


@pytest.mark.parametrize("component", sorted(SERVERS))
def test_a_servers_settings_are_the_tables_with_the_same_defaults(component):
    # run
    printed = _printed(SERVERS[component], "settings")
    # verify: every key it prints is in the table, with its default and a meaning
    assert printed and all(e.get("meaning") for e in printed), f"{SERVERS[component]} printed {printed!r}"
    problems = _disagreements(printed, SERVERS[component])
    # and every key a user sets that the table says this server reads, it lists
    listed = {e["key"] for e in printed}
    problems += [f"{SERVERS[component]} does not list {k}, which the table says it reads"
                 for k in sorted(table.keys_read_by(component))
                 if table.setting(k).setter == table.USER and k not in listed]
    assert not problems, "\n".join(problems)


def test_the_engine_view_is_the_data_services_engine_registry():
    # run
    registry = _printed("dataservice.jar", "engines")
    # verify: names in the same order, the same durability promise, the same settings and defaults
    assert [e["name"] for e in registry] == list(engines.ENGINE_NAMES)
    problems = []
    for printed, engine in zip(registry, engines.ENGINES):
        if printed["durability"] != engine.durability:
            problems.append(f"{engine.name}: the registry promises {printed['durability']!r}, "
                            f"engines.py {engine.durability!r}")
        keys = [s["key"] for s in printed["settings"]]
        if sorted(keys) != sorted(engine.setting_keys):
            problems.append(f"{engine.name}: the registry's settings are {keys}, engines.py's {list(engine.setting_keys)}")
        problems += _disagreements(printed["settings"], f"engine {engine.name}")
    assert not problems, "\n".join(problems)
