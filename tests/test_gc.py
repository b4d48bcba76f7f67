"""Garbage collection on a real two-backend cluster (periodic collections off: each test triggers
CollectGarbage itself): what no alias, no open session and no reachable object reaches is removed
from its backend and from the metadata, cycles included, across backends, versions like any other
object; and no reachable object is ever collected while writers move references between aliased
objects during collections."""
import json
import select
import textwrap
import threading
import time

import pytest

from conftest import started_cluster
from dataclay.exceptions import ObjectDoesNotExistError, ObjectNotHereError
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from harness.cluster import killed_at_exit
from test_core_acceptance import PRELUDE

pytestmark = pytest.mark.timeout(300)

MODELS = textwrap.dedent("""
    from bags.model import Bag, Item
    BACKENDS = sorted(api.get_backends(), key=lambda b: api.get_backends()[b].name)
""")


@pytest.fixture(scope="module")
def cluster():
    """Two kv backends, collections only on demand; named like conftest's fixture so that
    pytest-xdist keeps this module's tests on one worker."""
    shared = started_cluster(extra_env={"DATACLAY_GC_INTERVAL": "0"})
    yield shared
    shared.stop()


@pytest.fixture(scope="module")
def lm(cluster):
    """The administrator's Logic Module client (every test client runs as the administrator)."""
    client = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    client.token = client.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    yield client
    client.close_session()
    client.close()


def run(cluster, body: str, *args: str) -> dict:
    """Runs `body` in a fresh client process (its session closes when it exits); returns its last JSON line."""
    result = cluster.run_client(PRELUDE + MODELS + textwrap.dedent(body), *args)
    return json.loads(result.stdout.strip().splitlines()[-1])


def existing(lm, ids) -> set:
    """The IDs the Logic Module still knows and some backend still stores (checked on every backend)."""
    backends = [DataServiceClient(f"{b.host}:{b.port}", lm.token) for b in lm.get_backends()]
    try:
        found = set()
        for oid in ids:
            try:
                lm.get_object_info(oid)
                registered = True
            except ObjectDoesNotExistError:
                registered = False
            stored = False
            for ds in backends:
                try:
                    ds.get_objects([oid])
                    stored = True
                except ObjectNotHereError:
                    pass
            assert registered == stored, f"object {oid}: registered {registered} but stored {stored}"
            if stored:
                found.add(oid)
        return found
    finally:
        for ds in backends:
            ds.close()


def test_an_unreferenced_object_is_kept_while_its_session_is_open_and_collected_after(cluster, lm, tmp_path):
    # setup: a client keeps its session open until the marker file appears
    marker = tmp_path / "go"
    holder = cluster.popen_client(PRELUDE + MODELS + textwrap.dedent("""
        import os, time
        item = Item(7)
        item.make_persistent()
        print(json.dumps({"id": item.getID()}), flush=True)
        deadline = time.monotonic() + 60
        while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
            time.sleep(0.05)
        print(json.dumps({"value": item.get()}), flush=True)
    """), str(marker))
    with killed_at_exit(holder):
        assert select.select([holder.stdout], [], [], 60)[0], "the client did not make its object"
        oid = json.loads(holder.stdout.readline())["id"]
        # run
        while_open = lm.collect_garbage()
        kept = existing(lm, [oid])
        marker.touch()
        out, err = holder.communicate(timeout=60)
    after_close = lm.collect_garbage()
    # verify
    assert holder.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1]) == {"value": 7}
    assert while_open.examined >= 1 and kept == {oid}
    assert after_close.collected >= 1
    assert existing(lm, [oid]) == set()


def test_deleting_the_alias_makes_an_object_and_what_it_references_collectable(cluster, lm):
    # setup
    made = run(cluster, """
        bag = Bag()
        for v in range(3):
            bag.put(Item(v))
        bag.make_persistent(alias="gc-bag")
        print(json.dumps({"ids": [bag.getID(), *bag.ids()]}))
    """)
    ids = made["ids"]
    # run
    while_named = lm.collect_garbage()
    kept = existing(lm, ids)
    lm.delete_alias("gc-bag")
    after_delete = lm.collect_garbage()
    # verify
    assert kept == set(ids)
    assert while_named.examined >= len(ids)
    assert after_delete.collected >= len(ids)
    assert existing(lm, ids) == set()


def test_an_unreachable_cycle_is_collected_and_a_reachable_one_is_kept(cluster, lm):
    # setup: two cycles a -> b -> a; one stays named
    made = run(cluster, """
        ids = {}
        for name in ("gc-kept-cycle", "gc-lost-cycle"):
            a = Node(1); b = Node(2, a); a.next = b
            a.make_persistent(alias=name)
            ids[name] = [a.getID(), b.getID()]
        Node.delete_alias("gc-lost-cycle")
        print(json.dumps(ids))
    """)
    # run
    report = lm.collect_garbage()
    # verify
    assert report.collected >= 2
    assert existing(lm, made["gc-lost-cycle"]) == set()
    assert existing(lm, made["gc-kept-cycle"]) == set(made["gc-kept-cycle"])


def test_a_graph_across_backends_is_kept_while_named_and_collected_whole_after(cluster, lm):
    # setup: A on backend 1 references B on backend 2
    made = run(cluster, """
        b = Node(2); b.make_persistent(backend_id=BACKENDS[1])
        a = Node(1, b); a.make_persistent(alias="gc-across", backend_id=BACKENDS[0])
        print(json.dumps({"ids": [a.getID(), b.getID()], "where": [a.get_location(), b.get_location()],
                          "backends": BACKENDS}))
    """)
    ids = made["ids"]
    # run
    named = lm.collect_garbage()
    kept = existing(lm, ids)
    lm.delete_alias("gc-across")
    unnamed = lm.collect_garbage()
    # verify
    assert made["where"] == made["backends"]
    assert named.examined >= 2
    assert kept == set(ids)
    assert unnamed.collected >= 2
    assert existing(lm, ids) == set()


def test_versions_are_collected_like_any_object_and_a_kept_version_keeps_its_original(cluster, lm):
    # setup: in a client that then ends, versions of an aliased object (one consolidated, one aliased,
    # two that nothing reaches), and an aliased version of an object nothing else reaches
    made = run(cluster, """
        named = Item(1)
        named.make_persistent(alias="gc-versioned")
        dropped = named.new_version()
        dropped_again = dropped.new_version(backend_id=BACKENDS[1])
        consolidated = named.new_version()
        consolidated_id = consolidated.getID()  # afterwards it stands for the original, as in dataClay 4
        consolidated.consolidate_version()
        kept = named.new_version(backend_id=BACKENDS[1])
        kept.add_alias("gc-kept-version")
        orphan = Item(2)
        orphan.make_persistent()
        of_orphan = orphan.new_version()
        of_orphan.add_alias("gc-version-of-orphan")
        print(json.dumps({"named": named.getID(), "dropped": [dropped.getID(), dropped_again.getID()],
                          "consolidated": consolidated_id, "kept": kept.getID(), "orphan": orphan.getID(),
                          "of_orphan": of_orphan.getID()}))
    """)
    everything = [made["named"], *made["dropped"], made["consolidated"], made["kept"], made["orphan"],
                  made["of_orphan"]]
    # a consolidated version is retired at once
    with pytest.raises(ObjectDoesNotExistError):
        lm.get_object_info(made["consolidated"])
    # run
    first = lm.collect_garbage()
    after_first = existing(lm, everything)
    lm.delete_alias("gc-version-of-orphan")
    second = lm.collect_garbage()
    # verify: unreached versions went although their original is named; the orphan lived through its version
    assert first.collected >= 2
    assert after_first == {made["named"], made["kept"], made["orphan"], made["of_orphan"]}
    assert second.collected >= 2
    assert existing(lm, everything) == {made["named"], made["kept"]}


WRITER = textwrap.dedent("""
    import random, time
    left, right = Bag.get_by_alias(sys.argv[1]), Bag.get_by_alias(sys.argv[2])
    rng = random.Random(sys.argv[1])
    deadline = time.monotonic() + float(sys.argv[3])
    moves = 0
    while time.monotonic() < deadline:
        src, dst = (left, right) if rng.random() < 0.5 else (right, left)
        moves += src.give(dst, rng.randint(1, 3))
    print(json.dumps({"moves": moves}))
""")

GARBAGE_MAKER = textwrap.dedent("""
    import time
    deadline = time.monotonic() + float(sys.argv[1])
    made = 0
    while time.monotonic() < deadline:
        for _ in range(5):
            Item(-1).make_persistent()
        made += 5
        api.finish()
        api.init()
    print(json.dumps({"made": made}))
""")


def test_no_reachable_object_is_collected_while_writers_move_references_during_collections(cluster, lm):
    # setup: two writers, each with a pair of named bags on different backends holding 15 items each
    made = run(cluster, """
        values = {}
        for w in ("a", "b"):
            for side, backend in (("left", BACKENDS[0]), ("right", BACKENDS[1])):
                bag = Bag()
                bag.make_persistent(alias=f"gc-{w}-{side}", backend_id=backend)
                for v in range(15):
                    bag.put(Item(hash((w, side, v)) % 1_000_000))
            values[w] = sorted(Bag.get_by_alias(f"gc-{w}-left").ids() + Bag.get_by_alias(f"gc-{w}-right").ids())
        print(json.dumps(values))
    """)
    seconds = "12"
    procs = [cluster.popen_client(PRELUDE + MODELS + WRITER, f"gc-{w}-left", f"gc-{w}-right", seconds)
             for w in ("a", "b")]
    procs.append(cluster.popen_client(PRELUDE + MODELS + GARBAGE_MAKER, seconds))
    reports = []
    # run: collections back to back while the writers move items and garbage is made
    stop = threading.Event()

    def collect():
        while not stop.is_set():
            reports.append(lm.collect_garbage())

    collector = threading.Thread(target=collect)
    collector.start()
    try:
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        stop.set()
        collector.join(timeout=120)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    final = lm.collect_garbage()
    after = run(cluster, """
        out = {}
        for w in ("a", "b"):
            items = Bag.get_by_alias(f"gc-{w}-left").take_all() + Bag.get_by_alias(f"gc-{w}-right").take_all()
            out[w] = {"ids": sorted(i.getID() for i in items), "values": sorted(i.get() for i in items)}
        print(json.dumps(out))
    """)
    # verify: every item is still referenced exactly once, and readable
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    moves = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert moves[0]["moves"] > 0 and moves[1]["moves"] > 0
    assert len(reports) >= 3
    assert sum(r.collected for r in reports) + final.collected >= moves[2]["made"]
    for w in ("a", "b"):
        assert after[w]["ids"] == made[w]
        assert len(after[w]["values"]) == 30


def test_status_and_dataclaycmd_report_objects_collected(cluster, lm):
    # setup
    run(cluster, """
        for v in range(4):
            Item(v).make_persistent(backend_id=BACKENDS[0])
        print(json.dumps({}))
    """)
    # run
    printed = cluster.dataclaycmd("CollectGarbage", cluster.admin_user(), "-").stdout
    status = cluster.status()
    # verify
    assert printed.startswith("collected ") and "objects examined" in printed
    collected = lm.get_stats().objects_collected
    assert collected >= 4
    assert f"objects collected {collected}" in status
    per_backend = [int(line.split(" objects, ")[1].split(" collected")[0])
                   for line in status.splitlines() if "store kv:" in line]
    assert len(per_backend) == 2 and sum(per_backend) == collected
    refused = cluster.dataclaycmd("CollectGarbage", cluster.admin_user(), "wrong-password", check=False)
    assert refused.returncode == 1
