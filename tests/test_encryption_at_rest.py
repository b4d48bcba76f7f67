"""Data at rest on a real cluster: values stored with a store key never reach the pool in clear, a
backend restarted without its key or with another one is refused and changes nothing, and
`dataclay stop --erase` leaves neither pool nor state behind."""
import hashlib
import os
import pathlib
import re
import secrets
import tempfile
import uuid

import pytest

from conftest import engine_options
from harness.cluster import Cluster
from test_core_acceptance import client


def _key_file(directory: pathlib.Path) -> pathlib.Path:
    path = directory / f"store-{uuid.uuid4().hex[:8]}.key"
    path.write_text(secrets.token_hex(32) + "\n")
    path.chmod(0o600)
    return path


def _pool_files(cluster: Cluster) -> list[pathlib.Path]:
    return sorted(p for p in cluster.pools.rglob("*") if p.is_file())


def _pools_contain(cluster: Cluster, needle: bytes) -> bool:
    return any(needle in p.read_bytes() for p in _pool_files(cluster))


def _digest(cluster: Cluster) -> dict[str, str]:
    return {str(p.relative_to(cluster.pools)): hashlib.sha256(p.read_bytes()).hexdigest() for p in _pool_files(cluster)}


def _store(cluster: Cluster, name: str) -> None:
    client(cluster, """
        Person(sys.argv[1], 7).make_persistent(alias="marked")
        print(json.dumps({}))
    """, name)


def _name_of_marked(cluster: Cluster) -> str:
    return client(cluster, """
        print(json.dumps({"name": Person.get_by_alias("marked").name}))
    """)["name"]


@pytest.mark.parametrize("engine,encrypted", [("kv", True), ("heap", True), ("2lm", True), ("kv", False)])
def test_a_value_stored_with_a_key_is_not_in_the_pool_and_is_without_one(engine, encrypted, make_cluster, tmp_path):
    # setup
    extra = {"DATACLAY_STORE_KEY_FILE": str(_key_file(tmp_path))} if encrypted else {}
    cluster = make_cluster(backends=1, store=engine, extra_env=extra)
    marker = f"marker-{uuid.uuid4().hex}"
    # run
    _store(cluster, marker)
    status = cluster.status()
    cluster.stop_processes()  # 2lm writes its cache back; every pool is closed
    # verify: in clear exactly when not encrypted, and the object comes back whole either way
    assert _pools_contain(cluster, marker.encode()) is not encrypted
    assert ("encrypted at rest" in status) is encrypted and ("not encrypted" in status) is not encrypted, status
    cluster.start()
    assert _name_of_marked(cluster) == marker


def test_a_backend_restarted_with_another_key_or_none_is_refused_and_its_pool_is_unchanged(make_cluster, tmp_path):
    # setup: an encrypted kv cluster with an object, stopped
    key = _key_file(tmp_path)
    cluster = make_cluster(backends=1, store="kv", extra_env={"DATACLAY_STORE_KEY_FILE": str(key)})
    _store(cluster, "pat")
    cluster.stop_processes()
    before = _digest(cluster)
    assert before
    # run: another key, then none
    cluster.env["DATACLAY_STORE_KEY_FILE"] = str(_key_file(tmp_path))
    wrong = cluster.dataclay("start")
    del cluster.env["DATACLAY_STORE_KEY_FILE"]
    missing = cluster.dataclay("start")
    # verify: both refused, saying why; not a byte of the pool changed
    assert wrong.returncode != 0 and missing.returncode != 0
    assert "not the key" in wrong.stderr and "was encrypted with" in wrong.stderr, wrong.stderr
    assert "is encrypted and no key was given" in missing.stderr, missing.stderr
    assert _digest(cluster) == before
    # verify: the right key opens it with the object intact
    cluster.env["DATACLAY_STORE_KEY_FILE"] = str(key)
    cluster.start()
    assert _name_of_marked(cluster) == "pat"


def test_stop_erase_overwrites_and_removes_the_pools_and_the_state(make_cluster, tmp_path):
    # setup: a two-backend encrypted cluster, and a hard link keeping a pool file reachable
    cluster = make_cluster(backends=2, store="heap", store_size="64M",
                           extra_env={"DATACLAY_STORE_KEY_FILE": str(_key_file(tmp_path))})
    _store(cluster, "pat")
    links = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-erase-test-", dir="/dev/shm"))
    try:
        pool_file = cluster.pools / "backend-1" / "heap.pool"
        link = links / "heap.pool"
        os.link(pool_file, link)
        size = pool_file.stat().st_size
        # run
        result = cluster.dataclay("stop", "--erase")
        # verify: nothing left of pools or state, and the pool's bytes were zeroed before the unlink
        assert result.returncode == 0, result.stderr
        assert "stopped" in result.stdout
        assert re.search(r"erased backend-1: pool directory \S+backend-1: \d file\(s\), \d+ bytes overwritten", result.stdout), \
            result.stdout
        assert f"erased {cluster.home}: client.properties" in result.stdout, result.stdout
        assert not cluster.pools.exists()
        assert not cluster.home.exists()
        data = link.read_bytes()
        assert len(data) == size and data.count(0) == size, "the pool file was unlinked without being overwritten"
    finally:
        for p in links.iterdir():
            p.unlink()
        links.rmdir()


def test_stop_erase_of_a_postgres_cluster_deletes_its_backends_rows(make_cluster, request):
    # setup
    options = engine_options(request, "postgres")
    url = options["extra_env"]["DATACLAY_STORE_URL"]
    database = url.rsplit("/", 1)[1].split("?")[0]
    server = request.getfixturevalue("postgres")
    cluster = make_cluster(backends=1, **options)
    _store(cluster, "pat")
    rows = "SELECT count(*) FROM dataclay_objects"
    assert int(server.query(database, rows)) > 0
    # run
    result = cluster.dataclay("stop", "--erase")
    # verify
    assert result.returncode == 0, result.stderr
    assert re.search(r"erased backend-1: \S+ \(backend backend-1\): [1-9]\d* object row\(s\) deleted, table vacuumed",
                     result.stdout), result.stdout
    assert server.query(database, rows) == "0"
    assert not cluster.home.exists()

