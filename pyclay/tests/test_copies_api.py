"""The public API of replicas, versions, moves and deletePersistent: argument checking (no server
needed), what the client sends to real gRPC peers playing the Logic Module and Data Services,
and failover routing to a replica when the master's backend cannot be reached."""
import pickle
import uuid

import pytest

from dataclay import api
from dataclay.exceptions import (
    AliasDoesNotExistError, BackendDoesNotExistError, BackendUnavailableError, InvalidArgumentError,
    NotAVersionError, ObjectNotPersistentError)
from dataclay._internal.config import EnvironmentConfig
from dataclay._internal.ee.runtime import EnvironmentRuntime
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.proto import common_pb2, dataservice_pb2
from dataclay._internal.runtime.current import install_runtime, remove_runtime
from peers import CopyingPeer
from unitmodels.shop import Item, Node

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster(peer_cluster):
    """A Logic Module peer with three Data Service peers, and an initialised client."""
    peers = peer_cluster(CopyingPeer, 3)
    api.init(str(peers.config))
    return peers


def requests_of(peer, kind) -> list:
    return [r for r in peer.requests if isinstance(r, kind)]


def replicated_item(cluster, replicas: int):
    """An Item stored on the first Data Service peer, its master (returned too), with its stored form
    copied to the next `replicas` peers, which the Logic Module lists as its replicas."""
    item = Item("x", 1)
    master = cluster.ds[0]
    item.make_persistent(backend_id=master.backend_id)
    oid = item.getID()
    replica_peers = cluster.ds[1:1 + replicas]
    for peer in replica_peers:
        peer.stored[oid] = master.stored[oid]
    cluster.lm.objects[oid].replica_backend_ids.extend(p.backend_id for p in replica_peers)
    return item, master


def reads_answered_with(value):
    """A peer's on_get_field that answers every read with `value`."""
    return lambda request: dataservice_pb2.GetFieldResponse(value=pickle.dumps(value, 5))


# ---- argument checking: nothing is sent ----------------------------------------------------------

@pytest.mark.parametrize("operation, call", [
    ("new_replica", lambda o: o.new_replica()),
    ("new_version", lambda o: o.new_version()),
    ("consolidate_version", lambda o: o.consolidate_version()),
    ("deletePersistent", lambda o: o.deletePersistent()),
])
def test_copy_operations_on_a_volatile_object_raise_object_not_persistent(operation, call):
    with pytest.raises(ObjectNotPersistentError, match=f"{operation}.*volatile"):
        call(Item("x", 1))


@pytest.mark.parametrize("call, words", [
    (lambda o: o.new_replica(backend_id="nowhere"), "backend_id must be a backend UUID"),
    (lambda o: o.new_replica(backend_id=7), "backend_id must be a backend UUID"),
    (lambda o: o.new_replica(recursive="yes"), "recursive must be True or False"),
    (lambda o: o.new_replica(str(uuid.uuid4()), 1), "recursive must be True or False"),
    (lambda o: o.new_version(backend_id="b1"), "backend_id must be a backend UUID"),
    (lambda o: o.move(None), "move.. needs the backend_id"),
    (lambda o: o.move("nowhere"), "backend_id must be a backend UUID"),
    (lambda o: o.move(str(uuid.uuid4()), recursive=None), "recursive must be True or False"),
])
def test_bad_arguments_to_copy_operations_are_refused_before_any_call(call, words):
    proxy = IDENTITY.proxy(Item, str(uuid.uuid4()), str(uuid.uuid4()))
    with pytest.raises(InvalidArgumentError, match=words):
        call(proxy)


def test_copy_operations_inside_a_backend_are_refused_as_client_side_operations(models_dir):
    runtime = EnvironmentRuntime(EnvironmentConfig(backend_id=str(uuid.uuid4())), None, models_dir)
    assert install_runtime(runtime)
    proxy = IDENTITY.proxy(Item, str(uuid.uuid4()), str(uuid.uuid4()))
    try:
        for call in (lambda: proxy.new_replica(), lambda: proxy.new_version(), lambda: proxy.consolidate_version(),
                     lambda: proxy.move(str(uuid.uuid4())), lambda: proxy.deletePersistent()):
            with pytest.raises(InvalidArgumentError, match="client-side operation"):
                call()
    finally:
        remove_runtime(runtime)
        runtime.close()


# ---- what is sent where ----------------------------------------------------------------------------

def test_new_replica_asks_the_master_and_returns_the_backend_the_copy_went_to(cluster):
    # setup
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    target = cluster.ds[2].backend_id
    cluster.ds[0].on_new_replica = lambda r: dataservice_pb2.CopiesResponse(
        object_ids=r.object_ids, backend_id=r.backend_id or cluster.ds[1].backend_id, bytes_sent=42)
    # run
    chosen = item.new_replica()
    named = item.new_replica(target, recursive=False)
    # verify
    sent = requests_of(cluster.ds[0], dataservice_pb2.NewReplicaRequest)
    assert (chosen, named) == (cluster.ds[1].backend_id, target)
    assert [(list(r.object_ids), r.backend_id, r.recursive) for r in sent] == [
        ([item.getID()], "", True), ([item.getID()], target, False)]


def test_copies_to_an_unregistered_backend_are_refused_without_calling_the_master(cluster):
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    unknown = str(uuid.uuid4())
    for call in (lambda: item.new_replica(unknown), lambda: item.new_version(unknown), lambda: item.move(unknown)):
        with pytest.raises(BackendDoesNotExistError, match=unknown):
            call()
    assert len(cluster.ds[0].requests) == 1  # the MakePersistent only


def test_new_version_returns_a_proxy_of_the_same_class_with_its_own_id(cluster):
    # setup
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    version_id = str(uuid.uuid4())
    cluster.ds[0].on_new_version = lambda r: dataservice_pb2.NewVersionResponse(version=common_pb2.ObjectInfo(
        id=version_id, class_name="unitmodels.shop.Item", language=common_pb2.PYTHON, dataset="alice",
        master_backend_id=r.backend_id, version_of=r.object_id), bytes_sent=10)
    # run
    version = item.new_version(cluster.ds[1].backend_id)
    # verify
    assert type(version) is Item and version.getID() == version_id and version is not item
    assert version.get_location() == cluster.ds[1].backend_id
    sent = requests_of(cluster.ds[0], dataservice_pb2.NewVersionRequest)
    assert [(r.object_id, r.backend_id) for r in sent] == [(item.getID(), cluster.ds[1].backend_id)]


def test_consolidate_version_is_sent_to_the_backend_holding_the_version(cluster):
    # setup: the original on backend 0, its version on backend 2
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    version_id = str(uuid.uuid4())
    cluster.ds[0].on_new_version = lambda r: dataservice_pb2.NewVersionResponse(version=common_pb2.ObjectInfo(
        id=version_id, class_name="unitmodels.shop.Item", language=common_pb2.PYTHON,
        master_backend_id=cluster.ds[2].backend_id, version_of=item.getID()))
    version = item.new_version(cluster.ds[2].backend_id)
    # run
    version.consolidate_version()
    # verify
    sent = requests_of(cluster.ds[2], dataservice_pb2.ConsolidateVersionRequest)
    assert [r.version_id for r in sent] == [version_id]
    assert requests_of(cluster.ds[0], dataservice_pb2.ConsolidateVersionRequest) == []


def test_not_a_version_from_the_server_reaches_the_caller_as_not_a_version_error(cluster):
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[1].backend_id)
    cluster.ds[1].fail_with = NotAVersionError(f"object {item.getID()} is not a version")
    with pytest.raises(NotAVersionError, match="is not a version"):
        item.consolidate_version()
    assert len(requests_of(cluster.ds[1], dataservice_pb2.ConsolidateVersionRequest)) == 1


def test_move_points_every_moved_proxy_at_the_new_backend_without_asking_the_logic_module(cluster):
    # setup: a -> b on backend 0
    a, b = Node(1), Node(2)
    a.next = b
    a.make_persistent(backend_id=cluster.ds[0].backend_id)
    target = cluster.ds[1]
    cluster.ds[0].on_move = lambda r: dataservice_pb2.CopiesResponse(
        object_ids=[a.getID(), b.getID()], backend_id=r.backend_id, bytes_sent=99)
    target.stored.update({k: v for k, v in cluster.ds[0].stored.items()})
    target.on_call = lambda r: dataservice_pb2.CallMethodResponse(result=pickle.dumps(5, 5))
    before = dict(cluster.lm.calls)
    # run
    a.move(target.backend_id, recursive=True)
    answer = a.walk(1)
    # verify
    sent = requests_of(cluster.ds[0], dataservice_pb2.MoveRequest)
    assert [(list(r.object_ids), r.backend_id, r.recursive) for r in sent] == [([a.getID()], target.backend_id, True)]
    assert answer == 5 and len(requests_of(target, dataservice_pb2.CallMethodRequest)) == 1
    assert a.get_location() == b.get_location() == target.backend_id
    assert cluster.lm.calls.get("GetObjectInfo") == before.get("GetObjectInfo")


def test_delete_persistent_removes_every_alias_of_the_object(cluster):
    # setup
    item = Item("x", 1)
    item.make_persistent(alias="first", backend_id=cluster.ds[0].backend_id)
    Item.get_by_alias("first").make_persistent(alias="second")
    cluster.lm.objects[item.getID()].aliases.extend(["first", "second"])
    # run
    item.deletePersistent()
    # verify
    assert cluster.lm.aliases == {}
    with pytest.raises(AliasDoesNotExistError):
        Item.get_by_alias("first")


# ---- failover ------------------------------------------------------------------------------------

def test_reads_fail_over_to_a_replica_when_the_master_cannot_be_reached(cluster):
    # setup: master on backend 0, replicas on 1 and 2; backend 1 answers reads
    item, master = replicated_item(cluster, 2)
    cluster.ds[1].on_get_field = reads_answered_with("from replica")
    master.stop()
    # run
    first = item.name
    calls = dict(cluster.lm.calls)
    second = item.name
    # verify: the second read goes straight to the replica, with no Logic Module call
    assert first == second == "from replica"
    assert cluster.lm.calls == calls
    assert {item.get_location() for _ in range(40)} == {cluster.ds[1].backend_id, cluster.ds[2].backend_id}
    assert item.get_all_locations() == [master.backend_id, cluster.ds[1].backend_id, cluster.ds[2].backend_id]


def test_failover_tries_each_replica_in_turn(cluster):
    item, master = replicated_item(cluster, 2)
    cluster.ds[2].on_get_field = reads_answered_with("third")
    master.stop()
    cluster.ds[1].stop()
    assert item.name == "third"


def test_a_call_that_may_have_run_on_the_master_is_never_sent_there_again(cluster):
    # setup: the master fails after receiving the call; the replica refuses changes
    item, master = replicated_item(cluster, 1)
    master.fail_with = BackendUnavailableError("execution environment died during the call")
    cluster.ds[1].fail_with = BackendUnavailableError("a replica is read-only: writes go to the master")
    # run
    with pytest.raises(BackendUnavailableError, match="writes go to the master"):
        item.raise_price(1)
    # verify
    assert len(requests_of(master, dataservice_pb2.CallMethodRequest)) == 1
    assert len(requests_of(cluster.ds[1], dataservice_pb2.CallMethodRequest)) == 1


def test_a_write_routed_to_a_replica_goes_to_the_master(cluster):
    # setup: the proxy's hint names a replica (as references written in a replica's backend do)
    item, master = replicated_item(cluster, 1)
    cluster.ds[1].fail_with = BackendUnavailableError("a replica is read-only: writes go to the master")
    master.on_call = lambda r: dataservice_pb2.CallMethodResponse(result=pickle.dumps(2, 5))
    item.__dict__["_dc_hint"] = cluster.ds[1].backend_id
    # run
    answer = item.raise_price(1)
    # verify
    assert answer == 2 and item.__dict__["_dc_hint"] == master.backend_id
    assert len(requests_of(master, dataservice_pb2.CallMethodRequest)) == 1


def test_move_without_remotes_asks_for_what_the_backend_masters_only_and_a_volatile_object_is_stored(cluster):
    # setup: a -> b on backend 0; c volatile
    a, b, c = Node(1), Node(2), Node(3)
    a.next = b
    a.make_persistent(backend_id=cluster.ds[0].backend_id)
    target = cluster.ds[1]
    for peer in cluster.ds[:2]:
        peer.on_move = lambda r: dataservice_pb2.CopiesResponse(object_ids=[a.getID()], backend_id=r.backend_id)
    # run: dataClay 4's keyword, both styles; and a move of an object never made persistent
    a.move(target.backend_id, recursive=True, remotes=False)
    import asyncio
    asyncio.run(a.a_move(target.backend_id, recursive=True, remotes=True))
    c.move(cluster.ds[2].backend_id)
    # verify
    sent = [r for peer in cluster.ds[:2] for r in requests_of(peer, dataservice_pb2.MoveRequest)]
    assert [(r.recursive, r.local_only) for r in sent] == [(True, True), (True, False)]
    stored = requests_of(cluster.ds[2], dataservice_pb2.MakePersistentRequest)
    assert c.is_persistent and [o.id for r in stored for o in r.objects] == [c.getID()]
    with pytest.raises(InvalidArgumentError, match="remotes must be True or False"):
        a.move(target.backend_id, remotes="no")


def test_make_persistent_of_a_persistent_object_with_a_backend_moves_it_there_as_in_dataclay_4(cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    for peer in cluster.ds:
        peer.on_move = lambda r: dataservice_pb2.CopiesResponse(object_ids=[item.getID()], backend_id=r.backend_id)
    # run: an alias and a backend, then only a backend, awaited
    item.make_persistent("pen", backend_id=cluster.ds[1].backend_id)
    import asyncio
    asyncio.run(item.a_make_persistent(backend_id=cluster.ds[2].backend_id))
    # verify: the alias, two moves (not recursive), and no second copy stored
    moves = [(r.backend_id, r.recursive) for peer in cluster.ds for r in requests_of(peer, dataservice_pb2.MoveRequest)]
    assert moves == [(cluster.ds[1].backend_id, False), (cluster.ds[2].backend_id, False)]
    assert "pen" in cluster.lm.aliases and item.get_location() == cluster.ds[2].backend_id
    assert sum(len(requests_of(p, dataservice_pb2.MakePersistentRequest)) for p in cluster.ds) == 1
