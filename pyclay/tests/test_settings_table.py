"""The settings table holds every DATACLAY_* key the code names, each entry is consistent, and the
Python readers take their keys, defaults and messages from it."""
from __future__ import annotations

import pathlib
import re
import tokenize

import pytest

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal import config, engines, settings_table as table
from dataclay._internal.cli.common import class_archives
from dataclay._internal.cli.common.settings import OWN_KEYS, ClusterSettings
from dataclay._internal.cli.slurm.slurm_job import SlurmSettings

REPO = pathlib.Path(__file__).resolve().parents[2]
NAME = re.compile(r"DATACLAY_[A-Z0-9_]+")
JAVA_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
PYTHON_ROOTS = ("pyclay/dataclay", "scripts", "benchmarks", "examples", "tests")
JAVA_MODULES = {table.JAVACLAY: "javaclay", table.LOGIC_MODULE: "logicmodule", table.DATA_SERVICE: "dataservice"}
# what both servers are built with (server/: the metrics endpoint's settings)
SHARED_BY_SERVERS = "server"

# Names in the code that are not keys of ours, each with why (keep this list tiny):
NOT_KEYS = {
    # dataClay 4's own keys: benchmarks/peers.py sets them for the dataClay 4 servers it compares against
    "DATACLAY_KV_HOST", "DATACLAY_KV_PORT", "DATACLAY_METADATA_HOST", "DATACLAY_METADATA_PORT",
    "DATACLAY_STORAGE_PATH", "DATACLAY_LOGLEVEL",
    # tests/test_slurm_compss.py: a misspelt key that storage_init.sh must refuse
    "DATACLAY_STOR",
    # tests/test_tls.py: a prefix, asserting no DATACLAY_TLS* key reaches an execution environment
    "DATACLAY_TLS",
}


def _python_names(path: pathlib.Path) -> set[str]:
    names = set()
    with open(path, "rb") as f:
        for token in tokenize.tokenize(f.readline):
            if token.type == tokenize.STRING:
                names.update(NAME.findall(token.string))
    return names


def _java_names(path: pathlib.Path) -> set[str]:
    text = path.read_text()
    return {n for literal in JAVA_STRING.findall(text) for n in NAME.findall(literal)}


def names_in_code() -> dict[str, set[str]]:
    """Every DATACLAY_* name in a string literal of our Python and Java sources, or in a shell
    script, mapped to the files that name it."""
    found: dict[str, set[str]] = {}

    def add(names, path):
        for name in names:
            found.setdefault(name, set()).add(str(path.relative_to(REPO)))

    for root in PYTHON_ROOTS:
        for path in (REPO / root).rglob("*.py"):
            # virtualenvs (benchmarks/.venv-dataclay4 holds dataClay 4's own package) are not our code
            if any(part.startswith(".") for part in path.relative_to(REPO).parts):
                continue
            if "_pb2" not in path.name and "/proto/" not in str(path):
                add(_python_names(path), path)
    for path in REPO.glob("*/src/main/java/**/*.java"):
        add(_java_names(path), path)
    for path in (REPO / "scripts").rglob("*.sh"):
        add(NAME.findall(path.read_text()), path)
    return found


def _known(name: str) -> bool:
    if name in table.SETTINGS or name in NOT_KEYS:
        return True
    # a prefix the code matches keys against (startswith), e.g. DATACLAY_EE_
    return name.endswith("_") and any(k.startswith(name) for k in table.SETTINGS)


def test_every_dataclay_name_in_the_code_is_a_key_of_the_table():
    # setup
    found = names_in_code()
    # verify
    assert len(found) > 60, "the scan found too few names: is it looking at the sources?"
    unknown = {name: sorted(files) for name, files in found.items() if not _known(name)}
    assert not unknown, f"DATACLAY_* names missing from settings_table.SETTINGS: {unknown}"


def test_every_key_of_the_table_is_named_by_some_code():
    # setup
    found = names_in_code()
    # verify
    stale = sorted(k for k in table.SETTINGS if k not in found)
    assert not stale, f"keys no code names any more; remove them from the table: {stale}"


def test_a_key_read_by_a_java_component_is_named_in_that_components_sources():
    # setup
    named_in = {}
    for component, module in JAVA_MODULES.items():
        named_in[component] = set()
        modules = [module] + ([SHARED_BY_SERVERS] if component != table.JAVACLAY else [])
        for path in (p for m in modules for p in (REPO / m / "src" / "main" / "java").rglob("*.java")):
            named_in[component] |= _java_names(path)
    # verify
    wrong = [(s.key, c) for s in table.SETTINGS.values() for c in s.readers
             if c in JAVA_MODULES and s.key not in named_in[c]]
    assert not wrong, f"the table says these Java components read keys their sources never name: {wrong}"


def test_each_entry_names_known_components_and_a_default_its_own_type_accepts():
    for s in table.SETTINGS.values():
        assert s.key.startswith("DATACLAY_") and s.meaning and s.readers, s.key
        assert set(s.readers) <= set(table.COMPONENTS), s.key
        assert s.setter in (table.USER, table.INTERNAL, table.TEST), s.key
        if s.default:
            assert s.kind.parse(s.default) is not None, f"{s.key}: default {s.default!r} is not {s.kind.what}"


def test_the_client_reads_exactly_its_keys_and_the_launcher_withholds_the_same_ones_as_before():
    # verify
    assert config.KEYS == {
        "DATACLAY_HOME", "DATACLAY_HOST", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD",
        "DATACLAY_NEW_PASSWORD", "DATACLAY_DATASET", "DATACLAY_PICKLE_ALLOW", "DATACLAY_TLS_CA",
        "DATACLAY_UNREACHABLE_MS"}
    assert OWN_KEYS == {
        "DATACLAY_HOME", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD", "DATACLAY_METADATA_URL",
        "DATACLAY_STORE", "DATACLAY_STORE_PATH", "DATACLAY_STORE_SIZE", "DATACLAY_STORE_KEY_FILE", "DATACLAY_JAVA",
        "DATACLAY_METRICS_PORT", "DATACLAY_CPUS", "DATACLAY_JAVA_OPTS", "DATACLAY_JARS", "DATACLAY_CLASS_ARCHIVES", "DATACLAY_WARMUP", "DATACLAY_HOST", "DATACLAY_DATASET",
        "DATACLAY_TLS_CA", "DATACLAY_TLS_CERT", "DATACLAY_TLS_KEY"}


def test_values_that_live_beside_the_table_agree_with_it():
    # the class-archive modes, the engines and the sandbox's uid base (which runs without importing dataclay)
    from dataclay._internal.sandbox.launcher import DEFAULT_UID_BASE
    assert table.setting("DATACLAY_CLASS_ARCHIVES").kind.options == class_archives.MODES
    assert table.setting("DATACLAY_EE_UID_BASE").default == str(DEFAULT_UID_BASE)
    assert table.setting("DATACLAY_STORE").default == engines.default_engine().name
    for engine in engines.ENGINES:
        assert all(k in table.SETTINGS for k in engine.setting_keys), engine.name


def test_the_default_port_is_defined_once_in_python():
    # setup: assignments of 11034 to a name, in every Python source
    assignment = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(?::[^=\n]+)?=\s*11034\b", re.MULTILINE)
    places = [str(p.relative_to(REPO)) for root in PYTHON_ROOTS for p in (REPO / root).rglob("*.py")
              if assignment.search(p.read_text())]
    # verify
    assert places == ["pyclay/dataclay/_internal/settings_table.py"]
    assert table.setting("DATACLAY_PORT").default == str(table.DEFAULT_PORT)
    assert config.Config.load(env={"DATACLAY_HOME": "/nonexistent"}).port == table.DEFAULT_PORT


@pytest.mark.parametrize("key, text, message", [
    ("DATACLAY_PORT", "x", "DATACLAY_PORT must be a port number (1-65535), not 'x'"),
    ("DATACLAY_STORE_SIZE", "lots", "DATACLAY_STORE_SIZE must be a size such as 512M or 4G, not 'lots'"),
    ("DATACLAY_CLASS_ARCHIVES", "maybe", "DATACLAY_CLASS_ARCHIVES must be one of use, off, record, not 'maybe'"),
    ("DATACLAY_EE_THREADS", "0", "DATACLAY_EE_THREADS must be a positive integer, not '0'"),
    ("DATACLAY_PICKLE_ALLOW", "numpy.dtype,os", "DATACLAY_PICKLE_ALLOW entries must be module.name (e.g. numpy.dtype), "
                                                "not 'os'"),
])
def test_a_bad_value_is_refused_naming_the_key_and_the_value(key, text, message):
    with pytest.raises(InvalidArgumentError) as raised:
        table.value(key, {key: text}, "(from here)")
    assert str(raised.value) == f"{message} (from here)"


def test_a_missing_key_takes_the_tables_default_typed():
    # verify
    assert table.value("DATACLAY_PORT", {}) == 11034
    assert table.value("DATACLAY_SLURM_POOLS", {}) == pathlib.Path("/dev/shm")
    assert table.value("DATACLAY_USER", {}) is None
    assert table.value("DATACLAY_PICKLE_ALLOW", {"DATACLAY_PICKLE_ALLOW": "a.b, c.d"}) == ("a.b", "c.d")
    with pytest.raises(KeyError):
        table.value("DATACLAY_NO_SUCH_KEY", {})


def test_the_launchers_read_their_keys_through_the_table():
    # run
    cluster = ClusterSettings.from_env({"DATACLAY_STORE_SIZE": "", "DATACLAY_JAVA_OPTS": "-Xmx1g -Xss2m",
                                        "DATACLAY_HOME": "/tmp/h", "DATACLAY_STORE_URL": "jdbc:x"})
    slurm = SlurmSettings.from_env({"DATACLAY_SLURM_POOLS": "/scratch"})
    # verify
    assert (cluster.store_size, cluster.java_opts, cluster.port) == ("1G", ("-Xmx1g", "-Xss2m"), 11034)
    assert cluster.passthrough == {"DATACLAY_STORE_URL": "jdbc:x"}
    assert slurm.pools_dir == pathlib.Path("/scratch") and slurm.jobs_dir == pathlib.Path.home() / ".dataclay/slurm"
    with pytest.raises(InvalidArgumentError, match="DATACLAY_STORE: unknown store engine 'tape'"):
        ClusterSettings.from_env({"DATACLAY_STORE": "tape"})
