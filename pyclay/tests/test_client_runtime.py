"""The client runtime against real gRPC peers: sessions, make_persistent, proxies, caching and
the retry rules, and remote exceptions."""
import pickle
import uuid

import pytest

from dataclay import DataClayObject, api
from dataclay.exceptions import (
    AliasAlreadyExistsError, BackendDoesNotExistError, BackendUnavailableError, InvalidArgumentError, NotAuthenticatedError,
    ObjectDoesNotExistError, ObjectNotPersistentError, RemoteError)
from dataclay._internal.proto import dataservice_pb2
from dataclay._internal.serialization.decoder import loads, loads_args
from dataclay._internal.serialization.policy import ClientClassPolicy
from peers import DataServicePeer
from unitmodels.shop import Basket, Item, Node, OutOfStock


@pytest.fixture
def cluster(peer_cluster):
    """A Logic Module peer with two Data Service peers, and an initialised client."""
    peers = peer_cluster(DataServicePeer, 2)
    api.init(str(peers.config))
    return peers


def result(value):
    return lambda request: dataservice_pb2.CallMethodResponse(result=pickle.dumps(value, 5))


def test_init_opens_a_session_and_finish_closes_it(cluster):
    assert len(cluster.lm.tokens) == 1
    backends = api.get_backends()
    assert set(backends) == {p.backend_id for p in cluster.ds}
    info = backends[cluster.ds[0].backend_id]
    assert (info.host, info.port, info.languages, info.alive) == ("127.0.0.1", cluster.ds[0].port, ("python",), True)
    api.finish()
    assert cluster.lm.tokens == set() and not api.is_initialized()
    api.init(str(cluster.config))


def test_make_persistent_sends_the_whole_graph_in_one_call_and_leaves_proxies(cluster):
    # setup: a ring of three nodes and a basket sharing one item twice
    a, b, c = Node(1), Node(2), Node(3)
    a.next, b.next, c.next = b, c, a
    target = cluster.ds[1]
    # run
    a.make_persistent(alias="ring", backend_id=target.backend_id)
    # verify
    [request] = [r for r in target.requests if isinstance(r, dataservice_pb2.MakePersistentRequest)]
    assert request.alias == "ring" and [o.id for o in request.objects] == [a.getID(), b.getID(), c.getID()]
    assert all(o.header.class_name == "unitmodels.shop.Node" for o in request.objects)
    assert all(n.is_persistent and n.get_location() == target.backend_id for n in (a, b, c))
    assert "value" not in a.__dict__ and cluster.ds[0].requests == []


def test_failed_make_persistent_leaves_the_objects_volatile(cluster):
    first, second = Item("a", 1), Item("b", 2)
    first.make_persistent(alias="dup")
    with pytest.raises(AliasAlreadyExistsError, match="dup"):
        second.make_persistent(alias="dup")
    assert not second.is_persistent and second.getID() is None and (second.name, second.price) == ("b", 2)


def test_make_persistent_not_recursive_refuses_a_volatile_reference_before_sending(cluster):
    node = Node(1, Node(2))
    with pytest.raises(InvalidArgumentError, match="recursive=False"):
        node.make_persistent(recursive=False)
    assert not node.is_persistent and all(p.requests == [] for p in cluster.ds)


def test_proxy_fields_and_active_methods_go_to_the_backend(cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    peer = cluster.ds[0]
    peer.on_get_field = lambda r: dataservice_pb2.GetFieldResponse(value=pickle.dumps({"name": "pen", "price": 10}[r.field], 5))
    peer.on_call = result(4)
    # run
    name = item.name
    item.price = 10
    raised = item.raise_price(by=1)
    label = item.label()
    # verify
    kinds = [type(r).__name__ for r in peer.requests]
    assert kinds == ["MakePersistentRequest", "GetFieldRequest", "SetFieldRequest", "CallMethodRequest"] + \
        ["GetFieldRequest"] * 2
    set_request, call_request = peer.requests[2], peer.requests[3]
    policy = ClientClassPolicy()
    assert (name, raised) == ("pen", 4)
    assert loads(set_request.value, policy) == 10
    assert call_request.method == "raise_price" and loads_args(call_request.args, policy) == ((), {"by": 1})
    assert label == "pen:10"


def test_volatile_object_runs_its_active_methods_locally(cluster):
    item = Item("pen", 3)
    assert item.raise_price(2) == 5 and item.price == 5
    assert all(p.requests == [] for p in cluster.ds)


def test_warm_calls_make_no_logic_module_call(cluster):
    counter = Item("c", 0)
    counter.make_persistent()
    backend = next(p for p in cluster.ds if p.stored)
    backend.on_call = result(1)
    before = dict(cluster.lm.calls)
    for _ in range(20):
        counter.raise_price(1)
    assert cluster.lm.calls == before


def test_object_not_here_refreshes_the_location_and_retries_once(cluster):
    # setup: the object is stored on backend 1, but the proxy believes it is on backend 0
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[1].backend_id)
    item.__dict__["_dc_hint"] = cluster.ds[0].backend_id
    cluster.ds[1].on_call = result("found")
    # run
    answer = item.describe()
    # verify
    assert answer == "found" and item.get_location() == cluster.ds[1].backend_id
    assert cluster.lm.calls.get("GetObjectInfo") == 1


def test_unreachable_backend_is_looked_up_again_and_called_at_its_new_address(cluster):
    # setup: backend 0 holds the object, then restarts on another port
    old = cluster.ds[0]
    item = Item("x", 1)
    item.make_persistent(backend_id=old.backend_id)
    old.on_call = result(2)
    item.raise_price(1)
    old.stop()
    moved = DataServicePeer()
    moved.backend_id, moved.stored = old.backend_id, old.stored
    moved.on_call = result(7)
    cluster.lm.move_backend(old.backend_id, moved.address)
    cluster.ds[0] = moved
    # run
    answer = item.raise_price(1)
    # verify
    assert answer == 7 and len(moved.requests) == 1


def test_method_call_is_not_resent_when_the_backend_may_have_run_it(cluster):
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    peer = cluster.ds[0]
    peer.fail_with = BackendUnavailableError("execution environment died during the call")
    with pytest.raises(BackendUnavailableError):
        item.raise_price(1)
    calls = [r for r in peer.requests if isinstance(r, dataservice_pb2.CallMethodRequest)]
    with pytest.raises(BackendUnavailableError):
        item.name
    reads = [r for r in peer.requests if isinstance(r, dataservice_pb2.GetFieldRequest)]
    assert (len(calls), len(reads)) == (1, 2)


@pytest.mark.parametrize("remote_type, args, expected", [
    ("builtins.ValueError", ("boom",), ValueError),
    ("unitmodels.shop.OutOfStock", ("pen",), OutOfStock),
    ("somewhere.else.Unknown", ("x",), RemoteError),
    ("builtins.SystemExit", (1,), RemoteError),
])
def test_remote_exceptions_are_rebuilt_as_their_type_when_allowed(cluster, remote_type, args, expected):
    item = Item("x", 1)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    cluster.ds[0].fail_with = RemoteError(remote_type, str(args[0]), pickle.dumps(args, 5), "Traceback (remote)")
    with pytest.raises(expected) as caught:
        item.describe()
    if expected is RemoteError:
        assert caught.value.remote_type == remote_type and "Traceback (remote)" in caught.value.remote_traceback
    else:
        assert caught.value.args == args and "Traceback (remote)" in "\n".join(caught.value.__notes__)


def test_get_by_alias_checks_the_class_and_returns_the_identity_instance(cluster):
    item = Item("x", 1)
    item.make_persistent(alias="it")
    assert Item.get_by_alias("it") is item
    assert DataClayObject.get_by_alias("it") is item
    with pytest.raises(InvalidArgumentError, match="unitmodels.shop.Item, which is not a unitmodels.shop.Basket"):
        Basket.get_by_alias("it")


def test_get_by_id_of_an_unknown_object_names_it(cluster):
    missing = str(uuid.uuid4())
    with pytest.raises(ObjectDoesNotExistError, match=missing):
        api.get_by_id(missing)
    with pytest.raises(InvalidArgumentError, match="UUID"):
        api.get_by_id("not-a-uuid")


def test_get_by_id_in_a_fresh_process_view_builds_a_proxy_of_the_stored_class(cluster):
    basket = Basket("bob")
    basket.make_persistent()
    oid = basket.getID()
    del basket
    again = api.get_by_id(uuid.UUID(oid))
    assert type(again) is Basket and again.getID() == oid and again.is_persistent


def test_persistent_only_operations_on_a_volatile_object_are_refused(cluster):
    item = Item("x", 1)
    with pytest.raises(ObjectNotPersistentError, match="get_location"):
        item.get_location()
    with pytest.raises(ObjectNotPersistentError):
        item.get_all_locations()
    assert item.get_id() is None and item.getID() is None


def test_proxies_need_a_session(cluster):
    item = Item("x", 1)
    item.make_persistent()
    api.finish()
    with pytest.raises(NotAuthenticatedError, match="api.init"):
        item.name
    api.init(str(cluster.config))


def test_bad_arguments_to_the_public_api_are_refused_clearly(cluster):
    item = Item("x", 1)
    with pytest.raises(InvalidArgumentError, match="alias"):
        item.make_persistent(alias="")
    with pytest.raises(InvalidArgumentError, match="backend_id"):
        item.make_persistent(backend_id="nowhere")
    with pytest.raises(InvalidArgumentError, match="recursive"):
        item.make_persistent(recursive="yes")
    with pytest.raises(InvalidArgumentError, match="alias"):
        Item.get_by_alias(None)
    assert not item.is_persistent


def test_init_without_credentials_says_which_key_is_missing(config_without_credentials):
    with pytest.raises(InvalidArgumentError, match="DATACLAY_USER"):
        api.init(str(config_without_credentials))
    assert not api.is_initialized()


def test_an_unknown_backend_id_is_refused_as_dataclay_4_and_2_programs_expect(cluster):
    # dataClay 4 raises KeyError for a backend ID it does not know; dataClay 2 programs catch
    # BackendDoesNotExist: the error is both, and names the ID
    unknown = str(uuid.uuid4())
    item = Item("pen", 3)
    with pytest.raises(KeyError) as as_key:
        item.make_persistent(backend_id=unknown)
    assert isinstance(as_key.value, BackendDoesNotExistError) and str(as_key.value).startswith(f"no backend {unknown}")
    assert not item.is_persistent and all(p.requests == [] for p in cluster.ds)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    for call in (lambda: item.new_replica(backend_id=unknown), lambda: item.new_version(backend_id=unknown)):
        with pytest.raises(BackendDoesNotExistError) as refused:
            call()
        assert isinstance(refused.value, KeyError)
