"""Replicas on a real three-backend cluster: a write on the master is read on every replica (each
replica read straight from its backend's Data Service), replicas of replicas, recursive and not,
replicas refuse writes, consolidation reaches replicas, and kill -9 of the master's Data Service:
reads go on from a replica and nothing acknowledged is lost after it restarts."""
import json
import textwrap
import time

import pytest

from conftest import started_cluster
from harness.cluster import killed_at_exit
from test_core_acceptance import PRELUDE

pytestmark = pytest.mark.timeout(300)

HELPERS = textwrap.dedent("""
    import os, time
    from dataclay import getRuntime
    from dataclay.exceptions import BackendUnavailableError
    from dataclay._internal.rpc import DataServiceClient
    from dataclay._internal.serialization.decoder import loads
    BACKENDS = sorted(api.get_backends())

    def on(backend_id):
        '''A client of one backend's Data Service, in this session.'''
        return DataServiceClient(api.get_backends()[backend_id].address, getRuntime().session.token)

    def read_on(backend_id, obj, field):
        '''`field` as the copy on `backend_id` holds it (a GetField sent to that Data Service only).'''
        ds = on(backend_id)
        try:
            return loads(ds.get_field(obj.getID(), field), getRuntime().policy, field)
        finally:
            ds.close()
""")


def run(cluster, body: str, *args: str) -> dict:
    """Runs `body` in a fresh client process; returns the JSON of its last output line."""
    result = cluster.run_client(PRELUDE + HELPERS + textwrap.dedent(body), *args)
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cluster():
    """A three-backend kv cluster shared by this module's tests (each uses its own aliases); named
    like conftest's fixture so that pytest-xdist keeps this module's tests on one worker."""
    shared = started_cluster(backends=3)
    yield shared
    shared.stop()


@pytest.mark.parametrize("copies", [2, 3])
def test_write_on_the_master_is_read_on_every_replica(cluster, copies):
    out = run(cluster, """
        copies = int(sys.argv[1])
        c = Counter(1)
        c.make_persistent(alias=f"replicated-{copies}", backend_id=BACKENDS[0])
        went = [c.new_replica(backend_id=b) for b in BACKENDS[1:copies]]
        before = [read_on(b, c, "value") for b in BACKENDS[:copies]]
        c.increment(5)
        c.value = c.value * 2
        print(json.dumps({"went": went, "locations": c.get_all_locations(), "expected": BACKENDS[:copies],
                          "before": before, "after": [read_on(b, c, "value") for b in BACKENDS[:copies]],
                          "api": c.get(), "picked": sorted({c.get_location() for _ in range(60)})}))
    """, str(copies))
    assert out["went"] == out["expected"][1:]
    # get_location picks one of the live copies at random (the white paper's definition)
    assert out["locations"] == out["expected"] and out["picked"] == sorted(out["expected"])
    assert out["before"] == [1] * copies
    assert out["after"] == [12] * copies and out["api"] == 12


def test_replica_of_an_object_that_already_has_one_goes_to_a_third_backend(cluster):
    out = run(cluster, """
        p = Person("rita", 40)
        p.make_persistent(backend_id=BACKENDS[0])
        second = p.new_replica(backend_id=BACKENDS[1])
        third = p.new_replica()
        again = p.new_replica(backend_id=BACKENDS[1])
        p.birthday()
        p.name = "Rita"
        print(json.dumps({"backends": BACKENDS, "second": second, "third": third, "again": again,
                          "locations": p.get_all_locations(),
                          "ages": [read_on(b, p, "age") for b in BACKENDS],
                          "names": [read_on(b, p, "name") for b in BACKENDS]}))
    """)
    backends = out["backends"]
    assert (out["second"], out["third"], out["again"]) == (backends[1], backends[2], backends[1])
    assert out["locations"] == backends
    assert out["ages"] == [41, 41, 41] and out["names"] == ["Rita"] * 3


def test_recursive_replica_copies_what_the_object_references_and_non_recursive_only_the_object(cluster):
    # setup: a -> b -> c on the first backend
    out = run(cluster, """
        c = Node(3); b = Node(2, c); a = Node(1, b)
        a.make_persistent(alias="chain", backend_id=BACKENDS[0])
        # run
        a.new_replica(backend_id=BACKENDS[1], recursive=False)
        shallow = [n.get_all_locations() for n in (a, b, c)]
        a.new_replica(backend_id=BACKENDS[2])
        deep = [n.get_all_locations() for n in (a, b, c)]
        c.value = 30
        print(json.dumps({"backends": BACKENDS, "shallow": shallow, "deep": deep,
                          "c_on_third": read_on(BACKENDS[2], c, "value"), "walk": a.walk(3),
                          "b_next_on_third": read_on(BACKENDS[2], b, "next").getID() == c.getID()}))
    """)
    # verify
    first, second, third = out["backends"]
    assert out["shallow"] == [[first, second], [first], [first]]
    assert out["deep"] == [[first, second, third], [first, third], [first, third]]
    assert out["c_on_third"] == 30 and out["walk"] == [1, 2, 30] and out["b_next_on_third"]


def test_a_replica_refuses_writes_and_keeps_the_masters_state(cluster):
    out = run(cluster, """
        import pickle
        from dataclay._internal.serialization.encoder import dumps_args
        c = Counter(7)
        c.make_persistent(backend_id=BACKENDS[0])
        c.new_replica(backend_id=BACKENDS[1])
        replica = on(BACKENDS[1])
        refused = []
        for attempt in (lambda: replica.set_field(c.getID(), "value", pickle.dumps(99, 5)),
                        lambda: replica.call_method(c.getID(), "increment", dumps_args((1,), {}))):
            try:
                attempt()
                refused.append("accepted")
            except BackendUnavailableError as e:
                refused.append(str(e))
        read = loads(replica.call_method(c.getID(), "get", dumps_args((), {})), getRuntime().policy, "get")
        print(json.dumps({"refused": refused, "read_on_replica": read,
                          "values": [read_on(b, c, "value") for b in BACKENDS[:2]]}))
    """)
    assert len(out["refused"]) == 2 and all("master" in message for message in out["refused"]), out["refused"]
    assert out["read_on_replica"] == 7 and out["values"] == [7, 7]


def test_consolidating_a_version_updates_every_replica_of_the_original(cluster):
    out = run(cluster, """
        p = Person("vera", 20)
        p.make_persistent(backend_id=BACKENDS[0])
        p.new_replica(backend_id=BACKENDS[1])
        v = p.new_version(backend_id=BACKENDS[2])
        v.name = "Vera"
        v.birthday()
        unchanged = [read_on(b, p, "name") for b in BACKENDS[:2]]
        v.consolidate_version()
        print(json.dumps({"unchanged": unchanged, "names": [read_on(b, p, "name") for b in BACKENDS[:2]],
                          "ages": [read_on(b, p, "age") for b in BACKENDS[:2]]}))
    """)
    assert out["unchanged"] == ["vera", "vera"]
    assert out["names"] == ["Vera", "Vera"] and out["ages"] == [21, 21]


WARM_CLIENT = """
    flag = sys.argv[1]
    c = Account("kim", 0)
    c.make_persistent(alias="survivor", backend_id=BACKENDS[0])
    c.new_replica(backend_id=BACKENDS[1])
    acked = [c.deposit(n) for n in range(1, 21)]
    print(json.dumps({"acked": acked[-1], "master": api.get_backends()[BACKENDS[0]].name,
                      "replica": BACKENDS[1]}), flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(flag) and time.monotonic() < deadline:
        time.sleep(0.02)
    reads = {"balance": c.balance, "audit": c.audit(), "location": c.get_location(), "history": c.history}
    try:
        c.deposit(1000)
        reads["write"] = "accepted"
    except BackendUnavailableError as e:
        reads["write"] = "refused: " + str(e)
    reads["balance_after_write"] = c.balance
    print(json.dumps(reads), flush=True)
"""


def test_reads_survive_kill_of_the_masters_data_service_and_nothing_acknowledged_is_lost(cluster, tmp_path):
    # setup: a client that writes on the master (replicated), then waits while it is killed
    flag = tmp_path / "killed"
    warm = cluster.popen_client(PRELUDE + HELPERS + textwrap.dedent(WARM_CLIENT), str(flag))
    with killed_at_exit(warm):
        first = json.loads(warm.stdout.readline())
        # run: kill -9 the master's Data Service, then let the warm client read through its old channels
        cluster.kill(first["master"])
        flag.touch()
        stdout, stderr = warm.communicate(timeout=120)
    assert warm.returncode == 0, stderr
    after = json.loads(stdout.strip().splitlines()[-1])
    cold = run(cluster, """
        a = Account.get_by_alias("survivor")
        print(json.dumps({"balance": a.balance, "audit": a.audit(), "location": a.get_location()}))
    """)
    cluster.start()
    restarted = run(cluster, """
        a = Account.get_by_alias("survivor")
        locations = a.get_all_locations()
        stored = [read_on(b, a, "balance") for b in locations]
        a.deposit(1)
        print(json.dumps({"locations": locations, "stored": stored, "audit": a.audit(),
                          "after_write": [read_on(b, a, "balance") for b in locations]}))
    """)
    # verify
    total = first["acked"]
    assert total == sum(range(1, 21))
    assert after["balance"] == total and after["audit"] and after["history"] == list(range(1, 21))
    assert after["location"] == first["replica"]
    assert after["write"].startswith("refused") and after["balance_after_write"] == total
    assert cold == {"balance": total, "audit": True, "location": first["replica"]}
    assert len(restarted["locations"]) == 2 and restarted["stored"] == [total, total]
    assert restarted["audit"] and restarted["after_write"] == [total + 1, total + 1]
