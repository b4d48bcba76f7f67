"""Issue 21: an acknowledged object is always reachable. Writers of one account store unaliased
objects (make_persistent, and objects an active method creates) on three backends while another
account, in a loop, sends colliding IDs through the public protocol: one fresh ID to several
backends at once, and the IDs of the writers' just-acknowledged objects. Every call the writers saw
acknowledged must be found afterwards, from a new program, after a garbage collection and after a
cluster restart; every duplicate the attacker sent must be refused, and leave nothing behind."""
import concurrent.futures
import json
import pickle
import queue
import subprocess
import sys
import textwrap
import threading
import uuid

import pytest

from dataclay.exceptions import ObjectAlreadyExistsError, ObjectDoesNotExistError, ObjectNotHereError
from dataclay._internal.proto import common_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

pytestmark = pytest.mark.timeout(240)

WRITER, WRITER_PW = "reg-writer", "reg-writer-password"
ATTACKER, ATTACKER_PW = "reg-attacker", "reg-attacker-password"
ITEM = "bags.model.Item"
WRITERS = 3
ROUNDS = 25

PRELUDE = textwrap.dedent("""
    import json, sys
    from dataclay import api
    api.init()
    from bags.model import Bag, Item
    BACKENDS = sorted(api.get_backends(), key=lambda b: api.get_backends()[b].name)
""")

# One writer: a bag (the root that keeps its items reachable) and, per round, an item made
# persistent on each backend in turn (announced as soon as it is acknowledged) and an item the bag
# makes persistent itself when its method stores it (a volatile argument becomes a new object).
WRITE = PRELUDE + textwrap.dedent("""
    w, rounds = int(sys.argv[1]), int(sys.argv[2])
    bag = Bag()
    bag.make_persistent(alias=f"reg-bag-{w}", backend_id=BACKENDS[w % len(BACKENDS)])
    made = {}
    for i in range(rounds):
        item = Item(w * 10_000 + i)
        item.make_persistent(backend_id=BACKENDS[i % len(BACKENDS)])
        made[item.getID()] = item.value
        print(json.dumps({"acknowledged": item.getID()}), flush=True)
        bag.put(item)
        bag.put(Item(w * 10_000 + 5_000 + i))
    print(json.dumps({"made": made, "bag": bag.ids()}), flush=True)
""")

# A new program of the writer's account: reads every acknowledged object and every bag.
READ = PRELUDE + textwrap.dedent("""
    from dataclay.exceptions import DataClayException
    expected = json.load(open(sys.argv[1]))
    missing = []
    for oid, value in expected["made"].items():
        try:
            if Item.get_by_id(oid).get() != value:
                missing.append([oid, "wrong value"])
        except DataClayException as e:
            missing.append([oid, type(e).__name__])
    bags = {}
    for w in range(len(expected["bags"])):
        ids = Bag.get_by_alias(f"reg-bag-{w}").ids()
        bags[str(w)] = ids
        for oid in ids:
            try:
                Item.get_by_id(oid).get()
            except DataClayException as e:
                missing.append([oid, type(e).__name__])
    print(json.dumps({"missing": missing, "bags": bags}))
""")


def _as(cluster, user, password):
    return dict(cluster.env, DATACLAY_USER=user, DATACLAY_PASSWORD=password, DATACLAY_DATASET="")


def _item(oid: str, value: int) -> common_pb2.ObjectData:
    return common_pb2.ObjectData(id=oid, header=common_pb2.ObjectHeader(class_name=ITEM, language=common_pb2.PYTHON),
                                 fields=[common_pb2.Field(name="value", value=pickle.dumps(value, protocol=5))])


def _outcome(ds: DataServiceClient, objects) -> str:
    try:
        ds.make_persistent(objects)
        return "ok"
    except ObjectAlreadyExistsError:
        return "already exists"
    except Exception as e:  # noqa: BLE001 - anything else is a finding, reported by name
        return f"{type(e).__name__}: {e}"


class Attacker:
    """The other account: raw MakePersistent calls with IDs it chose, on every backend."""

    def __init__(self, cluster):
        self.lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
        self.lm.token = self.lm.new_session(ATTACKER, ATTACKER_PW, "").token
        backends = sorted(self.lm.get_backends(), key=lambda b: b.name)
        self.backends = [DataServiceClient(f"{b.host}:{b.port}", self.lm.token) for b in backends]
        self.pool = concurrent.futures.ThreadPoolExecutor(len(self.backends))
        self.findings: list[str] = []
        self.fresh_won: list[str] = []
        self.collisions = 0

    def one_id_everywhere(self) -> None:
        """(a) One fresh ID sent to every backend at once: exactly one call may be acknowledged, and
        the backends that lost keep nothing."""
        oid = str(uuid.uuid4())
        outcomes = list(self.pool.map(lambda ds: _outcome(ds, [_item(oid, 666)]), self.backends))
        if outcomes.count("ok") != 1 or outcomes.count("already exists") != len(outcomes) - 1:
            self.findings.append(f"fresh {oid} sent to every backend: {outcomes}")
            return
        self.fresh_won.append(oid)
        for ds, outcome in zip(self.backends, outcomes):
            if outcome != "ok":
                try:
                    ds.get_objects([oid])
                    self.findings.append(f"a backend that refused {oid} still stores it")
                except ObjectNotHereError:
                    pass

    def collide(self, oid: str) -> None:
        """(b) A writer's acknowledged ID on every backend, alone and beside a fresh object: refused
        each time, and the fresh object goes with its call."""
        beside = str(uuid.uuid4())
        for ds in self.backends:
            for objects in ([_item(oid, 666)], [_item(beside, 1), _item(oid, 666)]):
                self.collisions += 1
                outcome = _outcome(ds, objects)
                if outcome != "already exists":
                    self.findings.append(f"writer's {oid} sent again: {outcome}")
        try:
            self.lm.get_object_info(beside)
            self.findings.append(f"{beside}, sent beside a refused ID, was registered")
        except ObjectDoesNotExistError:
            pass

    def close(self) -> None:
        self.pool.shutdown()
        for ds in self.backends:
            ds.close()
        self.lm.close_session()
        self.lm.close()


def test_every_acknowledged_object_is_found_while_another_account_sends_colliding_ids(make_cluster, tmp_path):
    # setup: three backends, the writers' account and the attacker's
    cluster = make_cluster(backends=3)
    cluster.dataclaycmd("NewAccount", WRITER, WRITER_PW)
    cluster.dataclaycmd("NewAccount", ATTACKER, ATTACKER_PW)
    attacker = Attacker(cluster)
    writer_env = _as(cluster, WRITER, WRITER_PW)
    acknowledged: queue.Queue = queue.Queue()
    finals: dict[int, dict] = {}
    writers = []
    # run: the writers write while the attacker sends fresh IDs everywhere and replays acknowledged ones
    try:
        for w in range(WRITERS):
            writers.append(subprocess.Popen([sys.executable, "-c", WRITE, str(w), str(ROUNDS)], env=writer_env,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

        def follow(w: int, proc) -> None:
            for line in proc.stdout:
                message = json.loads(line)
                if "acknowledged" in message:
                    acknowledged.put(message["acknowledged"])
                else:
                    finals[w] = message

        followers = [threading.Thread(target=follow, args=(w, p), daemon=True) for w, p in enumerate(writers)]
        for f in followers:
            f.start()
        while any(f.is_alive() for f in followers):
            attacker.one_id_everywhere()
            try:
                attacker.collide(acknowledged.get(timeout=0.05))
            except queue.Empty:
                pass
        while not acknowledged.empty():
            attacker.collide(acknowledged.get())
        errors = [p.stderr.read() for p in writers if p.wait(timeout=60) != 0]
        assert not errors, errors
        # the objects the writers' methods created are attacked too, once known
        for final in finals.values():
            for oid in set(final["bag"]) - set(final["made"]):
                attacker.collide(oid)
    finally:
        for p in writers:
            if p.poll() is None:
                p.kill()
                p.wait()
        attacker.close()
    expected = {"made": {k: v for f in finals.values() for k, v in f["made"].items()},
                "bags": [finals[w]["bag"] for w in range(WRITERS)]}
    expected_file = tmp_path / "expected.json"
    expected_file.write_text(json.dumps(expected))

    def read_all() -> dict:
        result = subprocess.run([sys.executable, "-c", READ, str(expected_file)], env=writer_env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    fresh = read_all()
    cluster.dataclaycmd("CollectGarbage", cluster.admin_user(), "-")
    after_collection = read_all()
    cluster.stop_processes()
    cluster.start()
    after_restart = read_all()
    # verify: the attacker's duplicates were all refused, and every acknowledged object is found
    assert attacker.findings == []
    assert attacker.collisions >= WRITERS * ROUNDS * 2 * 3 and attacker.fresh_won
    assert len(expected["made"]) == WRITERS * ROUNDS
    assert all(len(b) == 2 * ROUNDS and set(b) >= {k for k in finals[w]["made"]}
               for w, b in enumerate(expected["bags"]))
    for seen in (fresh, after_collection, after_restart):
        assert seen["missing"] == []
        assert seen["bags"] == {str(w): b for w, b in enumerate(expected["bags"])}
