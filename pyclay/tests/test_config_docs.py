"""The configuration tables of README.md and docs/configuration.md are the ones scripts/config_table.py
makes from the settings table, and no page names a key the table lacks."""
import importlib.util
import pathlib
import re

from dataclay._internal import settings_table as table

REPO = pathlib.Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("config_table", REPO / "scripts" / "config_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_configuration_tables_are_those_the_settings_table_makes():
    # run
    outputs = _generator().outputs()
    # verify
    stale = [str(p.relative_to(REPO)) for p, text in outputs.items() if p.read_text() != text]
    assert not stale, f"{stale} differ from the settings table: run scripts/config_table.py"


def test_every_key_a_user_sets_is_in_the_full_table_and_no_other():
    # run
    generated = _generator().full_table()
    # verify
    listed = set(re.findall(r"^\| `(DATACLAY_[A-Z0-9_]+)`", generated, re.MULTILINE))
    assert listed == {k for k, s in table.SETTINGS.items() if s.setter == table.USER}


def test_no_page_names_a_key_the_table_lacks():
    # setup
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    # verify
    unknown = {(p.name, n) for p in pages for n in re.findall(r"DATACLAY_[A-Z0-9_]+", p.read_text())
               if n not in table.SETTINGS and not (n.endswith("_") and any(k.startswith(n) for k in table.SETTINGS))}
    assert not unknown, f"pages name keys the settings table does not have: {sorted(unknown)}"
