"""dataClay 4's asyncio calls against real gRPC peers: each `a_` call does what its synchronous twin
does (same requests, results and errors), awaited `async def` active methods, many calls in flight
from one event loop without a thread each, and a clear error without a session."""
import asyncio
import pickle
import threading
import time
import uuid
from types import SimpleNamespace

import pytest

from dataclay import Client, DataClayObject, api
from dataclay.exceptions import (
    AliasAlreadyExistsError, AliasDoesNotExistError, BackendDoesNotExistError, InvalidArgumentError,
    NotAuthenticatedError, ObjectNotPersistentError, RemoteError)
from dataclay._internal.proto import common_pb2, dataservice_pb2
from dataclay._internal.rpc.aio import AsyncLogicModuleClient
from peers import CopyingPeer, LogicModulePeer
from unitmodels.shop import Item, OutOfStock

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def cluster(monkeypatch):
    """A Logic Module peer, two Data Service peers and a started Client."""
    for key in ("DATACLAY_HOST", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD", "DATACLAY_DATASET",
                "DATACLAY_HOME", "DATACLAY_PICKLE_ALLOW", "DATACLAY_TLS_CA"):
        monkeypatch.delenv(key, raising=False)
    lm = LogicModulePeer()
    backends = [CopyingPeer(lm), CopyingPeer(lm)]
    client = Client(host="127.0.0.1", port=lm.port, username="alice", password="secret").start()
    yield SimpleNamespace(lm=lm, ds=backends, client=client)
    client.stop()
    for peer in backends:
        peer.stop()
    lm.stop()


def requests_of(peer, kind) -> list:
    return [r for r in peer.requests if isinstance(r, kind)]


def test_async_calls_without_a_started_client_say_how_to_start_one():
    with pytest.raises(NotAuthenticatedError, match="start a dataclay.Client"):
        asyncio.run(Item.a_get_by_alias("anything"))
    with pytest.raises(NotAuthenticatedError, match="start a dataclay.Client"):
        asyncio.run(Item("x", 1).a_make_persistent())


def test_a_calls_check_their_arguments_before_anything_is_sent(cluster):
    async def bad(call):
        with pytest.raises((InvalidArgumentError, ObjectNotPersistentError)) as caught:
            await call
        return str(caught.value)

    async def main():
        return [await bad(Item("x", 1).a_make_persistent(alias="")), await bad(Item.a_get_by_alias(3)),
                await bad(Item("x", 1).a_add_alias("a")), await bad(Item("x", 1).a_move(None)),
                await bad(Item("x", 1).a_new_version()), await bad(Item.a_get_by_id("nope"))]

    messages = asyncio.run(main())
    assert "alias must be a non-empty string" in messages[0] and "alias must be a non-empty string" in messages[1]
    assert "is not registered! a_add_alias() needs a persistent object" in messages[2] and "a_move() needs" in messages[3]
    assert "a_new_version() needs a persistent object" in messages[4] and "must be a UUID" in messages[5]
    assert all(p.requests == [] for p in cluster.ds)


def test_a_calls_do_what_their_synchronous_twins_do(cluster):
    # setup
    target = cluster.ds[1].backend_id

    async def main():
        item = Item("pen", 3)
        await item.a_make_persistent(alias="pen", backend_id=target)
        found = await Item.a_get_by_alias("pen")
        by_id = await DataClayObject.a_get_by_id(item.getID())
        await found.a_add_alias("stylo")
        aliases = await found.a_get_aliases()
        await Item.a_delete_alias("pen")
        left = await found.a_get_aliases()
        await found.a_sync()
        properties = await found.a_get_properties()
        backends = await cluster.client.a_get_backends()
        return item, found, by_id, aliases, left, properties, backends

    # run
    item, found, by_id, aliases, left, properties, backends = asyncio.run(main())
    # verify
    assert item.is_persistent and found is item and by_id is item and item.get_location() == target
    assert (aliases, left) == ({"pen", "stylo"}, {"stylo"})
    assert properties == {"name": "pen", "price": 3, "tags": []}
    assert sorted(backends) == sorted(p.backend_id for p in cluster.ds)
    assert [o.id for o in requests_of(cluster.ds[1], dataservice_pb2.MakePersistentRequest)[0].objects] == [item.getID()]


def test_a_errors_are_the_synchronous_errors(cluster):
    async def main():
        await Item("pen", 3).a_make_persistent(alias="pen")
        with pytest.raises(AliasAlreadyExistsError, match="pen"):
            await Item("other", 1).a_make_persistent(alias="pen")
        with pytest.raises(AliasDoesNotExistError, match="nothere"):
            await Item.a_get_by_alias("nothere")
        with pytest.raises(BackendDoesNotExistError, match="no backend"):
            await (await Item.a_get_by_alias("pen")).a_move(str(uuid.uuid4()))
        with pytest.raises(InvalidArgumentError, match="which is not a unitmodels.shop.Basket"):
            from unitmodels.shop import Basket
            await Basket.a_get_by_alias("pen")

    asyncio.run(main())


def test_a_copies_go_to_the_master_like_their_synchronous_twins(cluster):
    # setup
    master, other = cluster.ds
    item = Item("pen", 3)
    item.make_persistent(backend_id=master.backend_id)
    version_id = str(uuid.uuid4())
    master.on_new_version = lambda r: dataservice_pb2.NewVersionResponse(version=common_pb2.ObjectInfo(
        id=version_id, class_name="unitmodels.shop.Item", language=common_pb2.PYTHON,
        master_backend_id=master.backend_id))
    master.on_new_replica = lambda r: dataservice_pb2.CopiesResponse(object_ids=[r.object_ids[0]],
                                                                     backend_id=other.backend_id)
    master.on_move = lambda r: dataservice_pb2.CopiesResponse(object_ids=[r.object_ids[0]], backend_id=r.backend_id)

    async def main():
        version = await item.a_new_version()
        await version.a_consolidate_version()
        replica_at = await item.a_new_replica(other.backend_id)
        await item.a_move(other.backend_id)
        return version, replica_at

    # run
    version, replica_at = asyncio.run(main())
    # verify
    assert type(version) is Item and version.getID() == version_id and replica_at == other.backend_id
    assert [type(r).__name__ for r in master.requests[1:]] == ["NewVersionRequest", "ConsolidateVersionRequest",
                                                               "NewReplicaRequest", "MoveRequest"]
    assert item.__dict__["_dc_hint"] == other.backend_id


def test_an_awaited_async_active_method_runs_in_the_backend(cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    cluster.ds[0].on_call = lambda r: dataservice_pb2.CallMethodResponse(result=pickle.dumps("appraised", 5))
    # run
    answer = asyncio.run(item.appraise(0.5))
    # verify
    [request] = requests_of(cluster.ds[0], dataservice_pb2.CallMethodRequest)
    assert answer == "appraised" and request.method == "appraise" and request.object_id == item.getID()
    assert pickle.loads(request.args) == ((0.5,), {}, True)  # from a Client: model code sees is_persistent as a bool


def test_an_awaited_active_method_on_a_volatile_object_runs_here():
    assert asyncio.run(Item("pen", 3).appraise()) == "pen now costs 4"


def test_a_model_exception_raised_by_an_awaited_method_reaches_the_caller_as_itself(cluster):
    # setup
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)
    cluster.ds[0].fail_with = RemoteError("unitmodels.shop.OutOfStock", "pen", pickle.dumps(("pen",), 5))
    # run / verify
    with pytest.raises(OutOfStock, match="pen"):
        asyncio.run(item.appraise())


def test_many_awaited_calls_overlap_on_one_loop_without_a_thread_each(cluster):
    # setup: every call takes 20 ms in the backend, which serves up to 16 at once
    item = Item("pen", 3)
    item.make_persistent(backend_id=cluster.ds[0].backend_id)

    def slow(request):
        time.sleep(0.02)
        return dataservice_pb2.CallMethodResponse(result=pickle.dumps("ok", 5))

    cluster.ds[0].on_call = slow
    threads = []

    async def concurrently(n):
        calls = [asyncio.ensure_future(item.appraise()) for _ in range(n)]
        await asyncio.sleep(0.05)
        threads.append(threading.active_count())
        return await asyncio.gather(*calls)

    async def main():
        await concurrently(32)  # warm-up: the channel, and the peer's 16 server threads
        baseline = threading.active_count()
        started = time.perf_counter()
        results = await concurrently(200)
        overlapped = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(20):
            await item.appraise()
        one_by_one = (time.perf_counter() - started) / 20
        return baseline, results, overlapped, one_by_one

    # run
    baseline, results, overlapped, one_by_one = asyncio.run(main())
    # verify: 200 calls take far less than 200 sequential ones, and no thread was started for them
    assert results == ["ok"] * 200
    assert overlapped < 200 * one_by_one / 4, (overlapped, one_by_one)
    assert threads[-1] <= baseline + 2, (threads, baseline)


def test_channels_of_an_event_loop_are_its_own(cluster):
    # run: two loops one after the other, each opening its own channels
    async def lookup():
        await Item("pen", 3).a_make_persistent()
        return api.get_backends() and asyncio.get_running_loop()

    first, second = asyncio.run(lookup()), asyncio.run(lookup())
    # verify: both worked although the first loop was closed before the second started
    assert first is not second and first.is_closed()


def test_an_async_client_outside_its_event_loop_cannot_be_made():
    with pytest.raises(RuntimeError):
        AsyncLogicModuleClient("127.0.0.1:1")
