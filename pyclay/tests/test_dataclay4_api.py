"""dataClay 4's synchronous client API against real gRPC peers: Client (configuration, arguments,
one session per process), get_by_id, aliases by object, sync, get_properties, dc_clone, dc_update,
dc_put, is_persistent as dataClay 2 calls it, and the errors bad input gets."""
import pickle
import uuid

import pytest

from dataclay import Client, DataClayObject, StorageObject, api
from dataclay.exceptions import (
    AliasAlreadyExistsError, AliasDoesNotExistError, DataClayError, DataClayException, InvalidArgumentError,
    NotAuthenticatedError, ObjectDoesNotExistError, ObjectNotPersistentError)
from dataclay._internal.proto import common_pb2, dataservice_pb2
from peers import CopyingPeer
from unitmodels.shop import Basket, Item, Node

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster(peer_cluster, tmp_path, monkeypatch):
    """A Logic Module peer, two Data Service peers, and a DATACLAY_HOME whose client file reaches them
    as the wrong user (tests give the right one as Client arguments, or start api.init on `.config`)."""
    peers = peer_cluster(CopyingPeer, 2)
    home = tmp_path / "home"
    home.mkdir()
    (home / "client.properties").write_text(f"DATACLAY_HOST=127.0.0.1\nDATACLAY_PORT={peers.lm.port}\n"
                                            f"DATACLAY_USER=mallory\nDATACLAY_PASSWORD=wrong\n")
    monkeypatch.setenv("DATACLAY_HOME", str(home))
    return peers


@pytest.fixture
def client(cluster):
    """A started dataClay 4 Client (its arguments win over the client file's wrong user)."""
    with Client(username="alice", password="secret") as started:
        yield started


def requests_of(peer, kind) -> list:
    return [r for r in peer.requests if isinstance(r, kind)]


# ---- Client ------------------------------------------------------------------------------------------

def test_client_reads_the_configuration_and_its_arguments_win(cluster):
    # run
    with Client(username="alice", password="secret") as client:
        during = (len(cluster.lm.tokens), api.is_initialized(), client.is_initialized, sorted(client.get_backends()))
    # verify: the client file gave host and port; the arguments gave the account; one session, closed at the end
    assert during == (1, True, True, sorted(p.backend_id for p in cluster.ds))
    assert cluster.lm.tokens == set() and not api.is_initialized() and not client.is_initialized


def test_a_client_with_the_configured_wrong_password_is_refused_by_the_server(cluster):
    with pytest.raises(NotAuthenticatedError, match="wrong user or password"):
        Client().start()
    assert not api.is_initialized()


@pytest.mark.parametrize("arguments, words", [
    ({"port": "eleven"}, "port must be a port number"), ({"port": 0}, "port must be a port number"),
    ({"port": True}, "port must be a port number"), ({"host": ""}, "host must be a non-empty string"),
    ({"host": "a b"}, "host must be a non-empty string"), ({"username": 7}, "user must be a non-empty string"),
    ({"dataset": ""}, "dataset must be a non-empty string")])
def test_client_arguments_are_checked_before_anything_is_read(arguments, words):
    with pytest.raises(InvalidArgumentError, match=words):
        Client(**arguments)


def test_a_second_session_in_one_process_is_refused_and_the_first_one_kept(cluster):
    # setup
    api.init(str(cluster.config))
    # run
    with pytest.raises(InvalidArgumentError, match="already has a dataClay session"):
        Client(username="alice", password="secret").start()
    # verify
    assert len(cluster.lm.tokens) == 1 and api.is_initialized()


def test_a_client_that_is_not_started_says_so(cluster):
    with pytest.raises(NotAuthenticatedError, match="start a dataclay.Client"):
        Client().get_backends()


# ---- objects -----------------------------------------------------------------------------------------

def test_storage_object_is_data_clay_object_and_data_clay_exception_its_errors_base():
    assert StorageObject is DataClayObject and DataClayError is DataClayException
    assert issubclass(AliasDoesNotExistError, DataClayException) and issubclass(InvalidArgumentError, DataClayException)


def test_is_persistent_is_a_bool_under_a_client_as_in_data_clay_4(client):
    # setup
    item = Item("pen", 3)
    before = item.is_persistent
    # run
    item.make_persistent()
    # verify
    assert before is False and item.is_persistent is True


def test_is_persistent_is_truthy_and_callable_under_api_init_as_in_data_clay_2(cluster):
    # setup
    api.init(str(cluster.config))
    try:
        item = Item("pen", 3)
        before = (bool(item.is_persistent), item.is_persistent(), item.is_persistent == False)  # noqa: E712
        # run
        item.make_persistent()
        # verify
        assert before == (False, False, True)
        assert item.is_persistent and item.is_persistent() is True and item.is_persistent == True  # noqa: E712
        assert repr(item.is_persistent) == "True"
    finally:
        api.finish()


def test_get_by_id_on_a_class_checks_the_class_and_on_the_base_takes_any(client):
    # setup
    item = Item("pen", 3)
    item.make_persistent()
    oid = item.getID()
    # verify
    assert Item.get_by_id(oid) is item and DataClayObject.get_by_id(uuid.UUID(oid)) is item
    with pytest.raises(InvalidArgumentError, match="is a unitmodels.shop.Item, which is not a unitmodels.shop.Basket"):
        Basket.get_by_id(oid)
    with pytest.raises(ObjectDoesNotExistError):
        Item.get_by_id(uuid.uuid4())
    with pytest.raises(InvalidArgumentError, match="object_id must be a UUID"):
        Item.get_by_id("nope")


def test_aliases_by_object_add_list_and_delete(client, cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(alias="pen")
    # run
    item.add_alias("stylo")
    both = item.get_aliases()
    Item.delete_alias("pen", dataset_name=None)
    # verify
    assert both == {"pen", "stylo"} and item.get_aliases() == {"stylo"}
    with pytest.raises(AliasAlreadyExistsError, match="stylo"):
        Item("other", 1).make_persistent(alias="stylo")
    with pytest.raises(AliasAlreadyExistsError, match="stylo"):
        item.add_alias("stylo")
    with pytest.raises(InvalidArgumentError, match=r"add_alias\(\): alias must be a non-empty string"):
        item.add_alias("")
    with pytest.raises(ObjectNotPersistentError, match="get_aliases.*volatile"):
        Item("x", 1).get_aliases()
    with pytest.raises(InvalidArgumentError, match="name two datasets"):
        Item.get_by_alias("stylo", dataset_name="a", dataset="b")


def test_sync_reloads_the_metadata_and_points_calls_at_a_backend_holding_the_object(client, cluster):
    # setup: the proxy's calls go to a backend that no longer holds it
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    item.__dict__["_dc_hint"] = cluster.ds[1].backend_id
    calls = cluster.lm.calls.get("GetObjectInfo", 0)
    # run
    item.sync()
    # verify
    assert cluster.lm.calls["GetObjectInfo"] == calls + 1 and item.__dict__["_dc_hint"] == cluster.ds[0].backend_id


def test_get_properties_reads_the_whole_state_in_one_call(client, cluster):
    # setup
    item = Item("pen", 3)
    local = item.get_properties()
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    # run
    remote = item.get_properties()
    # verify
    assert local == remote == {"name": "pen", "price": 3, "tags": []}
    assert len(requests_of(cluster.ds[0], dataservice_pb2.GetObjectsRequest)) == 1


def test_dc_clone_copies_the_object_and_keeps_references_unless_recursive(client, cluster):
    # setup: a basket sharing one item twice, and a ring of nodes
    pen = Item("pen", 3)
    basket = Basket("ann", [pen, pen])
    basket.make_persistent()
    a, b = Node(1), Node(2)
    a.next, b.next = b, a
    a.make_persistent()
    # run
    flat = basket.dc_clone()
    deep = basket.dc_clone(recursive=True)
    ring = a.dc_clone(recursive=True)
    # verify
    assert type(flat) is Basket and not flat.is_persistent and flat.owner == "ann" and flat.items[0] is pen
    assert not deep.items[0].is_persistent and deep.items[0] is deep.items[1] and deep.items[0].name == "pen"
    assert ring.next.next is ring and ring.next.value == 2 and not ring.next.is_persistent
    with pytest.raises(ObjectNotPersistentError, match="dc_clone.*volatile"):
        Item("x", 1).dc_clone()


def test_dc_clone_by_alias_and_dc_put(client):
    # run
    Item("pen", 3).dc_put("pen")
    copy = Item.dc_clone_by_alias("pen")
    # verify
    assert not copy.is_persistent and (copy.name, copy.price) == ("pen", 3)
    with pytest.raises(InvalidArgumentError, match=r"dc_put\(\): alias must be a non-empty string"):
        Item("x", 1).dc_put(None)
    with pytest.raises(AliasAlreadyExistsError):
        Item("x", 1).dc_put("pen")


def test_dc_update_sets_every_field_on_a_version_then_consolidates_it(client, cluster):
    # setup: the backend makes versions as a real one would answer
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    version_id = str(uuid.uuid4())
    cluster.ds[0].on_new_version = lambda r: dataservice_pb2.NewVersionResponse(version=common_pb2.ObjectInfo(
        id=version_id, class_name="unitmodels.shop.Item", language=common_pb2.PYTHON,
        master_backend_id=cluster.ds[0].backend_id))
    cluster.ds[0].stored[version_id] = cluster.ds[0].stored[item.getID()]
    # run
    item.dc_update(Item("pencil", 5))
    # verify: one version, its fields set, then consolidated: the original gets them all or none
    sent = [r for r in cluster.ds[0].requests if not isinstance(r, dataservice_pb2.MakePersistentRequest)]
    assert [type(r).__name__ for r in sent] == ["NewVersionRequest", "SetFieldRequest", "SetFieldRequest",
                                                "SetFieldRequest", "ConsolidateVersionRequest"]
    assert sent[0].object_id == item.getID() and sent[-1].version_id == version_id
    assert {r.field: pickle.loads(r.value) for r in sent[1:4]} == {"name": "pencil", "price": 5, "tags": []}
    assert all(r.object_id == version_id for r in sent[1:4])


def test_dc_update_from_an_object_of_another_class_is_refused_before_any_call(client, cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    # run / verify
    with pytest.raises(InvalidArgumentError, match="from_object must be a unitmodels.shop.Item.*not a unitmodels"
                                                    ".shop.Basket"):
        item.dc_update(Basket("ann"))
    with pytest.raises(InvalidArgumentError, match=r"dc_update_by_alias\(\): from_object must be a unitmodels.shop.Item, not a unitmodels.shop.Basket"):
        Item.dc_update_by_alias("pen", Basket("ann"))
    assert requests_of(cluster.ds[0], dataservice_pb2.NewVersionRequest) == []


def test_a_missing_object_and_a_missing_alias_are_named(client):
    missing = str(uuid.uuid4())
    with pytest.raises(AliasDoesNotExistError, match="nothere"):
        Item.get_by_alias("nothere")
    with pytest.raises(ObjectDoesNotExistError, match=missing):
        Item.get_by_id(missing)


def test_deleting_an_alias_that_does_not_exist_does_nothing_as_in_dataclay_4(client, cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(alias="pen")
    Item.delete_alias("pen")
    # run: again, synchronously and awaited
    Item.delete_alias("pen")
    import asyncio
    asyncio.run(Item.a_delete_alias("pen"))
    # verify: no error, and the object is still there
    assert item.get_aliases() == set() and Item.get_by_id(item.getID()) is item


def test_dc_meta_backends_and_dc_is_registered_read_the_objects_metadata_as_dataclay_4_names_it(client, cluster):
    # setup
    item = Item("pen", 3)
    volatile_meta, volatile_backends, registered_before = item._dc_meta, item.backends, item._dc_is_registered
    item.make_persistent(alias="pen", backend_id=cluster.ds[0].backend_id)
    # run
    meta = item._dc_meta
    # verify: IDs as text, the same as getID() and get_backends()'s keys
    assert (volatile_meta.id, volatile_meta.master_backend_id, volatile_backends, registered_before) == \
        (None, None, set(), False)
    assert volatile_meta.class_name == meta.class_name == "unitmodels.shop.Item"
    assert (meta.id, meta.master_backend_id, meta.replica_backend_ids, meta.alias, meta.is_read_only) == \
        (item.getID(), cluster.ds[0].backend_id, frozenset(), "pen", False)
    assert meta.dataset_name is None and meta.master_backend_id in client.get_backends()  # the peer keeps no dataset
    assert item._dc_is_registered and item.backends == {cluster.ds[0].backend_id}
    with pytest.raises(AttributeError):
        item._dc_meta = meta
