"""`dataclay export` and `dataclay import` on real clusters (issue 16, part 5): a snapshot restores
objects, aliases, replicas, versions, models, accounts and contracts into a cluster of another size
and engine; one taken while writers run restores a state that existed; and a damaged, foreign or
newer snapshot, a full pool or a backend killed midway leave the target exactly as it was."""
import json
import os
import pickle
import pathlib
import shutil
import signal
import subprocess
import sys

import grpc
import pytest

from conftest import engine_options
from dataclay.exceptions import (BackendUnavailableError, DatasetDoesNotExistError, InvalidArgumentError,
                                 PermissionDeniedError)
from dataclay._internal.proto import dataservice_pb2 as ds_pb2, dataservice_pb2_grpc, logicmodule_pb2 as lm_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from dataclay._internal.rpc.errors import error_from_rpc
from dataclay._internal.cli.snapshot import snapshot_signing as signing
from harness.snapshots import (PAIR_WRITER, TRANSFER_WRITER, StoreCounter, client, holdings, manifest, trust,
                               wait_for_backends, wait_until)
from test_java_cluster import CLASSES, java, java_client  # noqa: F401 (java_client is a fixture)

CAROL_PASSWORD = "carols-own-password-1"
# a whole cluster into a new one: the administrator's account and dataset exist there already
RESTORE = ["--allow", "existing-accounts,objects-in-existing-datasets"]


def _tool(name: str) -> str:
    return str(pathlib.Path(sys.executable).parent / name)


def _populate(cluster, classpath) -> dict:
    """A graph with an alias, a replicated object, an aliased version, carol's dataset (with a contract to
    the administrator) and a Java object."""
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(CLASSES), "java")
    made = client(cluster, """
        b1, b2 = sorted(api.get_backends())
        alice, bob = Person("alice", 30), Person("bob", 31)
        alice.friends.append(bob)
        alice.make_persistent(alias="alice", backend_id=b1)
        shared = Counter(5)
        shared.make_persistent(alias="shared", backend_id=b1)
        shared.new_replica(b2)
        v = alice.new_version()
        v.birthday()
        v.add_alias("alice-next")
        print(json.dumps({"replicas": len(shared.get_all_locations())}))
    """)
    assert made["replicas"] == 2
    subprocess.run([_tool("dataclaycmd"), "NewAccount", "carol", "-"], env={**cluster.env, "DATACLAY_NEW_PASSWORD":
                   CAROL_PASSWORD}, check=True, capture_output=True, timeout=60)
    client(cluster, """
        Person("carol's", 40).make_persistent(alias="carol-item")
        print("{}")
    """, env={"DATACLAY_USER": "carol", "DATACLAY_PASSWORD": CAROL_PASSWORD})
    subprocess.run([_tool("dataclaycmd"), "NewDataContract", "carol", "-", "carol", cluster.admin_user(), "--read-only"],
                   env={**cluster.env, "DATACLAY_PASSWORD": CAROL_PASSWORD}, check=True, capture_output=True,
                   timeout=60)
    java(cluster, classpath, "persist", "jtext", "a b a c a")
    return made


def _check_restored(cluster, classpath, carol_password: str) -> dict:
    seen = client(cluster, """
        alice = Person.get_by_alias("alice")
        version = Person.get_by_alias("alice-next")
        before = (alice.age, version.age, [f.name for f in alice.friends])
        version.consolidate_version()
        shared = Counter.get_by_alias("shared")
        print(json.dumps({"before": before, "after": alice.birthday(), "shared": shared.get(),
                          "copies": len(shared.get_all_locations()),
                          "carol": Person.get_by_alias("carol-item", dataset="carol").name}))
    """)
    as_carol = client(cluster, """
        print(json.dumps({"name": Person.get_by_alias("carol-item").name}))
    """, env={"DATACLAY_USER": "carol", "DATACLAY_PASSWORD": carol_password})
    assert as_carol["name"] == "carol's"
    seen["java"] = java(cluster, classpath, "count", "jtext")["a"]
    return seen


def test_snapshot_of_kv_restores_into_heap_and_postgres_clusters_of_other_sizes(make_cluster, request, tmp_path,
                                                                                 java_client):  # noqa: F811
    # setup: a two-backend kv cluster with every kind of thing a snapshot carries
    source = make_cluster(backends=2, store="kv")
    _populate(source, java_client)
    everything, carols = tmp_path / "all", tmp_path / "carol"
    # run: a full export with password hashes, and one of carol's dataset without
    full = source.dataclay("export", str(everything), "--password-hashes")
    part = source.dataclay("export", str(carols), "--dataset", "carol")
    # verify: private files, the counts in the manifest
    assert full.returncode == 0 and part.returncode == 0, full.stderr + part.stderr
    assert "password hashes" in full.stdout and "signed with key" in full.stdout
    assert everything.stat().st_mode & 0o777 == 0o700
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in everything.iterdir())
    assert (everything / signing.SIGNATURE).exists()
    counts = manifest(everything)["counts"]
    assert counts["objects"] == 6 and counts["replicas"] == 1 and counts["aliases"] == 5, counts
    assert counts["models"] == 2 and counts["contracts"] == 1, counts
    assert manifest(carols)["counts"]["objects"] == 1 and manifest(carols)["counts"]["aliases"] == 1

    # run: carol's dataset into a one-backend postgres cluster where carol does not exist
    pg = make_cluster(backends=1, **engine_options(request, "postgres"))
    before = holdings(pg)
    untrusted = pg.dataclay("import", str(carols))
    refused = pg.dataclay("import", str(carols), *trust(source))
    # verify: refused before anything was stored, saying how to go on: trust the source's key, then
    # give carol a password
    assert untrusted.returncode != 0 and "does not trust" in untrusted.stderr and "--trust" in untrusted.stderr
    assert refused.returncode != 0 and "carol" in refused.stderr and "--passwords-file" in refused.stderr
    assert holdings(pg) == before
    # run: again with new passwords for the missing accounts, allowing what the snapshot needs: carol's
    # account, her contract to the administrator (who exists), and the Java model
    passwords = tmp_path / "passwords"
    loaded = pg.dataclay("import", str(carols), *trust(source), "--passwords-file", str(passwords),
                         "--allow", "accounts,existing-accounts,models")
    assert loaded.returncode == 0, loaded.stderr + pg.logs()
    assert "carol: plain account; password: new" in loaded.stdout, loaded.stdout
    user, new_password = passwords.read_text().split()
    assert user == "carol" and passwords.stat().st_mode & 0o777 == 0o600
    assert client(pg, """print(json.dumps({"name": Person.get_by_alias("carol-item").name}))""",
                  env={"DATACLAY_USER": "carol", "DATACLAY_PASSWORD": new_password})["name"] == "carol's"
    # run: the full snapshot into the same cluster: carol's object is there already
    again = pg.dataclay("import", str(everything), *trust(source))
    middle = holdings(pg)
    assert again.returncode != 0 and "already registered" in again.stderr, again.stderr
    assert holdings(pg) == middle

    # run: the full snapshot into a three-backend heap cluster
    heap = make_cluster(backends=3, store="heap")
    restored = heap.dataclay("import", str(everything), *trust(source), *RESTORE,
                             "--allow", "accounts,password-hashes,models")
    # verify: everything is back, methods run (Python and Java), carol logs in with her own password,
    # the version consolidates into its original, and the replica is made again and kept up to date
    assert restored.returncode == 0, restored.stderr + heap.logs()
    seen = _check_restored(heap, java_client, CAROL_PASSWORD)
    assert seen["before"] == [30, 31, ["bob"]] and seen["after"] == 32, seen
    assert seen["shared"] == 5 and seen["copies"] == 2 and seen["carol"] == "carol's" and seen["java"] == 3, seen
    client(heap, """Counter.get_by_alias("shared").increment(10); print("{}")""")
    assert _replica_value(heap, "shared") == 15


def _replica_value(cluster, alias: str) -> int:
    """The `value` field of an aliased object as its replica's backend stores it."""
    admin = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    try:
        admin.token = admin.new_session(cluster.admin_user(), cluster.admin_password()).token
        info = admin.get_object_by_alias(alias)
        backend = next(b for b in admin.get_backends() if b.id == info.replica_backend_ids[0])
        stored = DataServiceClient(f"{backend.host}:{backend.port}", admin.token).get_objects([info.id])[0]
        return pickle.loads(next(f.value for f in stored.fields if f.name == "value"))
    finally:
        admin.close()


def test_snapshot_taken_while_writers_run_restores_a_state_that_existed(make_cluster, tmp_path):
    # setup: counter pairs and two accounts spread over two backends, ballast to make the export last;
    # every connection uses TLS (the Logic Module's freezes, the CLI's streams)
    source = make_cluster(backends=2, store="kv", tls=True)
    ids = client(source, """
        b1, b2 = sorted(api.get_backends())
        pairs = []
        for i in range(4):
            a, b = Counter(0), Counter(0)
            a.make_persistent(alias=f"pair-{i}-a", backend_id=b1)
            b.make_persistent(alias=f"pair-{i}-b", backend_id=b2)
            pairs.append((a.getID(), b.getID()))
        x, y = Account("x", 1000), Account("y", 1000)
        x.make_persistent(alias="x", backend_id=b1)
        y.make_persistent(alias="y", backend_id=b2)
        x.new_replica(b2)  # its changes pass through to the replica while the export runs
        for i in range(60):
            Blob(bytes(512 * 1024)).make_persistent(alias=f"ballast-{i}", backend_id=(b1, b2)[i % 2])
        print(json.dumps({"pairs": pairs, "accounts": [x.getID(), y.getID()]}))
    """)
    stop = tmp_path / "stop"
    writers = [source.popen_client(PAIR_WRITER, a, b, str(stop)) for a, b in ids["pairs"]]
    writers.append(source.popen_client(TRANSFER_WRITER, *ids["accounts"], str(stop)))
    try:
        wait_until(lambda: client(source, """
            print(json.dumps({"n": Counter.get_by_alias("pair-0-b").get()}))""")["n"] > 20, 60, "writers to run")
        # run: export while they write
        export = source.dataclay("export", str(tmp_path / "snap"))
    finally:
        stop.touch()
        finals = [w.communicate(timeout=60) for w in writers]
    assert export.returncode == 0, export.stderr + source.logs()
    assert all(w.returncode == 0 for w in writers), finals
    target = make_cluster(backends=1, store="memory")
    loaded = target.dataclay("import", str(tmp_path / "snap"), *trust(source), *RESTORE)
    assert loaded.returncode == 0, loaded.stderr + target.logs()
    assert "had up to 1 replicas; this cluster has 1 backend(s), so they got 0" in loaded.stdout, loaded.stdout
    # verify: every invariant holds in the imported state, which is an earlier one than the end
    cut = client(target, """
        pairs = [(Counter.get_by_alias(f"pair-{i}-a").get(), Counter.get_by_alias(f"pair-{i}-b").get()) for i in range(4)]
        x, y = Account.get_by_alias("x"), Account.get_by_alias("y")
        whole = all(a.balance - 1000 == sum(a.history) for a in (x, y))  # each account's fields agree
        print(json.dumps({"pairs": pairs, "total": x.balance + y.balance, "whole": whole}))
    """)
    ends = [json.loads(out.strip().splitlines()[-1]) for out, _ in finals]
    for (a, b), end in zip(cut["pairs"], ends):
        assert 0 <= a - b <= 1, cut["pairs"]
        assert a <= end["a"]
    assert cut["total"] in (1999, 2000) and cut["whole"], cut
    assert any(a < end["a"] for (a, _), end in zip(cut["pairs"], ends)), "the writers did not run after the cut"
    assert manifest(tmp_path / "snap")["source"]["barrier_ms"] < 2000


def test_damaged_foreign_and_newer_snapshots_are_refused_and_change_nothing(make_cluster, tmp_path):
    # setup: a snapshot, and a target that already holds something
    source = make_cluster(backends=1, store="memory")
    client(source, """
        for i in range(20):
            Person(f"p{i}", i).make_persistent(alias=f"p{i}")
        print("{}")
    """)
    good = tmp_path / "good"
    assert source.dataclay("export", str(good)).returncode == 0
    target = make_cluster(backends=2, store="kv")
    client(target, """Person("resident", 1).make_persistent(alias="resident"); print("{}")""")
    before = holdings(target)
    objects = next(good.glob("objects-*.dcs")).name

    def damaged(name, damage):
        copy = tmp_path / name
        shutil.copytree(good, copy)
        damage(copy)
        return copy

    def truncate(d):
        with open(d / objects, "r+b") as f:
            f.truncate(os.path.getsize(d / objects) - 7)

    def flip(d):
        data = bytearray((d / objects).read_bytes())
        data[len(data) // 2] ^= 0x40
        (d / objects).write_bytes(bytes(data))

    def rewrite(key, value):
        def change(d):
            text = (d / "manifest.json").read_text().replace(f'"{key}": ', f'"{key}": {value}, "was": ', 1)
            (d / "manifest.json").write_text(text)
        return change

    def foreign(d):
        (d / "manifest.json").unlink()

    def signed(change):
        def sign_again(d):  # as the source's administrator, who holds its key, would
            change(d)
            signing.sign(d, (d / "manifest.json").read_bytes(), signing.signing_key(source.home / signing.KEY_FILE))
        return sign_again

    cases = [
        (damaged("truncated", truncate), f"is truncated: {objects}"),
        (damaged("flipped", flip), f"is corrupted: {objects} does not match its SHA-256"),
        (damaged("foreign", foreign), "is not a dataClay snapshot: it has no manifest.json"),
        (damaged("other-format", signed(rewrite("format", '"tarball"'))), "names format 'tarball'"),
        (damaged("newer", signed(rewrite("version", "2"))), "snapshot format version 2, newer than the version 1"),
        (damaged("unsigned-change", rewrite("version", "2")), "was altered after it was signed"),
        (damaged("missing", lambda d: (d / objects).unlink()), f"is incomplete: {objects} is missing"),
    ]
    for directory, expected in cases:
        # run
        result = target.dataclay("import", str(directory), *trust(source), *RESTORE)
        # verify: refused, naming the problem, and the target is as it was
        assert result.returncode == 1 and expected in result.stderr, (directory.name, result.stderr)
        assert holdings(target) == before, directory.name
    # verify: the undamaged snapshot imports next to what was there
    assert target.dataclay("import", str(good), *trust(source), *RESTORE).returncode == 0
    assert holdings(target)["objects"] == before["objects"] + 20


def test_an_import_failing_midway_leaves_the_target_as_it_was(make_cluster, tmp_path):
    # setup: 160 MiB in an encrypted source; the snapshot holds the values in clear, never the key
    key = tmp_path / "store.key"
    key.write_text(os.urandom(32).hex() + "\n")
    key.chmod(0o600)
    source = make_cluster(backends=1, store="kv", store_size="512M", extra_env={"DATACLAY_STORE_KEY_FILE": str(key)})
    client(source, """
        for i in range(160):
            Blob(b"plain-marker-%03d" % i + bytes(1 << 20)).make_persistent(alias=f"blob-{i}")
        print("{}")
    """)
    snap = tmp_path / "snap"
    export = source.dataclay("export", str(snap))
    assert export.returncode == 0 and "in clear" in export.stdout, export.stderr
    data = b"".join(p.read_bytes() for p in snap.iterdir())
    assert b"plain-marker-007" in data and key.read_bytes().strip() not in data
    assert manifest(snap)["source"]["backends"][0]["encrypted"] is True

    # run: into two backends whose pools cannot hold it
    small = make_cluster(backends=2, store="kv", store_size="64M")
    before = holdings(small)
    full = small.dataclay("import", str(snap), *trust(source), *RESTORE)
    # verify: refused as full, nothing left (the backends removed what they had staged)
    assert full.returncode == 1 and "full" in full.stderr, full.stderr
    wait_until(lambda: holdings(small) == before, 30, "the staged objects to be removed")

    # run: into two roomy backends, one of them killed while it stages
    roomy = make_cluster(backends=2, store="kv", store_size="512M")
    before = holdings(roomy)
    counter = StoreCounter(roomy, "backend-1")
    importing = subprocess.Popen([_tool("dataclay"), "import", str(snap), *trust(source), *RESTORE], env=roomy.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: counter.objects() > 0 or importing.poll() is not None, 120, "staging to start")
        # backend-2 stops reading (the import waits for it), then dies
        os.kill(roomy.pids()["backend-2"], signal.SIGSTOP)
        if importing.poll() is not None:
            out, err = importing.communicate()
            pytest.fail(f"the import ended (exit {importing.returncode}) before a backend could be killed:\n"
                        f"{out}\n{err}\n{roomy.logs()}")
        roomy.kill("backend-2")
        _, err = importing.communicate(timeout=120)
    finally:
        counter.close()
        if importing.poll() is None:
            importing.kill()
    # verify: the import failed; once backend-2 is back (it removes what it staged) nothing is left anywhere
    assert importing.returncode == 1, err
    roomy.start()
    wait_for_backends(roomy, 2)
    wait_until(lambda: holdings(roomy) == before, 60, "the target to be as it was")


def test_snapshot_rpcs_are_refused_to_whoever_they_are_not_for(make_cluster):
    # setup: a user, the administrator, and a snapshot in progress
    cluster = make_cluster(backends=1, store="memory")
    subprocess.run([_tool("dataclaycmd"), "NewAccount", "mallory", "-"], check=True, capture_output=True, timeout=60,
                   env={**cluster.env, "DATACLAY_NEW_PASSWORD": "mallorys-password-1"})
    admin = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    admin.token = admin.new_session(cluster.admin_user(), cluster.admin_password()).token
    mallory = admin.with_token(admin.new_session("mallory", "mallorys-password-1").token)
    backend = admin.get_backends()[0]
    address = f"{backend.host}:{backend.port}"
    snapshot = admin.begin_snapshot()
    try:
        sid = snapshot.snapshot_id
        as_user = {
            "BeginSnapshot": lambda: mallory.begin_snapshot(),
            "ExportMetadata": lambda: list(mallory.export_metadata(sid)),
            "EndSnapshot": lambda: mallory.end_snapshot(sid),
            "BeginImport": lambda: mallory.begin_import(iter([lm_pb2.ImportPlanPart(plan=lm_pb2.ImportPlan())])),
            "CommitImport": lambda: mallory.commit_import("0" * 32),
            "AbortImport": lambda: mallory.abort_import("0" * 32),
            "GetImportState": lambda: mallory.get_import_state("0" * 32),
            "ExportObjects": lambda: list(DataServiceClient(address, mallory.token).export_objects(sid)),
            "ImportObjects": lambda: DataServiceClient(address, mallory.token).import_objects(
                iter([ds_pb2.ImportChunk(import_id="0" * 32)])),
        }
        backends_only = {
            "FreezeWrites": lambda s, m: s.FreezeWrites(ds_pb2.FreezeRequest(snapshot_id=sid, hold_ms=1000), metadata=m),
            "ThawWrites": lambda s, m: s.ThawWrites(lm_pb2.SnapshotRequest(snapshot_id=sid), metadata=m),
            "EndSnapshot": lambda s, m: s.EndSnapshot(lm_pb2.SnapshotRequest(snapshot_id=sid), metadata=m),
            "PrepareImport": lambda s, m: list(s.PrepareImport(lm_pb2.ImportRequest(import_id="0" * 32), metadata=m)),
            "FinishImport": lambda s, m: s.FinishImport(ds_pb2.FinishImportRequest(import_id="0" * 32), metadata=m),
        }
        # run and verify: a user gets nothing; the administrator none of what only backends send each other
        for rpc, call in as_user.items():
            with pytest.raises(PermissionDeniedError):
                call()
        channel = grpc.insecure_channel(address)
        try:
            stub = dataservice_pb2_grpc.DataServiceStub(channel)
            for who in (mallory.token, admin.token):
                for rpc, call in backends_only.items():
                    try:
                        call(stub, (("dataclay-session", who),))
                        raise AssertionError(f"{rpc} was accepted")
                    except grpc.RpcError as e:
                        error = error_from_rpc(e)
                    assert isinstance(error, PermissionDeniedError) and "backends only" in str(error), (rpc, error)
        finally:
            channel.close()
        # verify: bad fields are named
        with pytest.raises(InvalidArgumentError, match="snapshot_id"):
            list(DataServiceClient(address, admin.token).export_objects("not-an-id"))
        with pytest.raises(InvalidArgumentError, match="import_id"):
            admin.commit_import("nope")
        with pytest.raises(DatasetDoesNotExistError):
            admin.begin_snapshot("no-such-dataset")
        with pytest.raises(BackendUnavailableError, match="another snapshot"):
            admin.begin_snapshot()
    finally:
        admin.end_snapshot(snapshot.snapshot_id)
        admin.close()
