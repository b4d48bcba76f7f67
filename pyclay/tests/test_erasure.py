"""`dataclay stop --erase` on this side: DATACLAY_HOME's state overwritten then removed, nothing else
touched; and the store key file's path reaching the backends only."""
import os
import pathlib

from dataclay._internal.cli.common import erasure
from dataclay._internal.cli.common.cluster_state import ClusterState, ProcessRecord
from dataclay._internal.cli.local.launcher import LocalCluster
from dataclay._internal.cli.common.settings import ClusterSettings


def _home_of_a_cluster(home: pathlib.Path) -> None:
    for name, text in {"client.properties": "DATACLAY_PASSWORD=secret\n", "cluster.json": "{}\n",
                       "logs/backend-1.log": "started\n", "lm/metadata.db": "alias alice -> 1234\n",
                       "backends/backend-1/models/python/people/model.py": "class Person: ...\n",
                       ".cluster.json.abc123": "{}"}.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)


def test_erasing_a_home_overwrites_its_files_before_removing_them(tmp_path):
    # setup: a cluster's home, and hard links that keep the files' bytes reachable after the unlink
    home = tmp_path / "home"
    _home_of_a_cluster(home)
    kept = tmp_path / "links"
    kept.mkdir()
    os.link(home / "lm" / "metadata.db", kept / "metadata.db")
    os.link(home / "client.properties", kept / "client.properties")
    # run
    erased, left = erasure.erase_home(home)
    # verify: gone, and what the links still reach is zeros of the same length
    assert not home.exists()
    assert left == []
    assert erased[:2] == [".cluster.json.abc123 (2 bytes)", "client.properties (25 bytes)"]
    assert "lm/ (1 files, 20 bytes)" in erased and erased[-1] == "cluster.json (3 bytes)"
    assert (kept / "metadata.db").read_bytes() == bytes(20)
    assert (kept / "client.properties").read_bytes() == bytes(25)


def test_erasing_a_home_leaves_what_the_cluster_did_not_make_and_follows_no_link(tmp_path):
    # setup: a file of the user's in the home, and a log that is a link to a file elsewhere
    home = tmp_path / "home"
    _home_of_a_cluster(home)
    (home / "stubs").mkdir()
    (home / "stubs" / "people.py").write_text("mine")
    elsewhere = tmp_path / "thesis.tex"
    elsewhere.write_text("chapter 1")
    (home / "logs" / "link.log").symlink_to(elsewhere)
    # run
    erased, left = erasure.erase_home(home)
    # verify
    assert left == ["stubs"]
    assert (home / "stubs" / "people.py").read_text() == "mine"
    assert elsewhere.read_text() == "chapter 1"
    assert sorted(p.name for p in home.iterdir()) == ["stubs"]
    assert any(e.startswith("logs/") for e in erased)


def test_erasing_a_home_without_a_cluster_says_so_and_touches_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "notes.txt").write_text("mine")

    lines = LocalCluster(ClusterSettings.from_env({"DATACLAY_HOME": str(home)})).erase()

    assert lines == [f"nothing to erase: no cluster was started with DATACLAY_HOME={home}"]
    assert (home / "notes.txt").read_text() == "mine"


def test_the_store_key_file_reaches_the_backends_as_a_path_and_never_the_logic_module(tmp_path, monkeypatch):
    # setup: a launcher whose spawns are recorded instead of run
    monkeypatch.chdir(tmp_path)
    settings = ClusterSettings.from_env({"DATACLAY_HOME": str(tmp_path / "home"), "DATACLAY_STORE_KEY_FILE": "k.key"})
    cluster = LocalCluster(settings)
    spawned = {}

    def record_spawn(jar, env, log, stdin_line=None):
        spawned[jar] = env
        return 0

    monkeypatch.setattr(cluster, "_spawn", record_spawn)
    state = ClusterState(store="kv", store_root=str(tmp_path / "pools"), store_size="64M", metadata_url=None,
                         lm=ProcessRecord(name="logicmodule", port=1, jar="logicmodule.jar"))
    monkeypatch.setattr(ClusterState, "save", lambda self, home: None)
    # run
    cluster._secret_file = tmp_path / "cluster.secret"
    state.backends.append(ProcessRecord(name="backend-1", port=0, jar="dataservice.jar"))
    cluster._start_backend(state, state.backends[0])
    lm_env = settings.server_env({"DATACLAY_PORT": "1"})
    # verify
    assert spawned["dataservice.jar"]["DATACLAY_STORE_KEY_FILE"] == str(tmp_path / "k.key")
    assert "DATACLAY_STORE_KEY_FILE" not in lm_env
    assert "DATACLAY_STORE_KEY_FILE" not in settings.passthrough


def test_urls_are_shown_without_their_password():
    assert erasure.redact_url("jdbc:postgresql://h/db?user=u&password=hunter2") == "jdbc:postgresql://h/db?user=u&password=***"
    assert erasure.redact_url("jdbc:postgresql://u:hunter2@h/db") == "jdbc:postgresql://u:***@h/db"
