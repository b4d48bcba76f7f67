"""The execution environment's execution logic, driven directly: loading, touched objects,
deltas, new objects, results and errors. Objects are loaded over a real link from a peer playing
the Data Service."""
import os
import pickle
import uuid

import pytest

from dataclay.exceptions import (
    MethodDoesNotExistError, ObjectNotHereError, PermissionDeniedError, RemoteError, SerializationError)
import tempfile

from dataclay._internal.config import EnvironmentConfig
from dataclay._internal.ee import changes
from dataclay._internal.ee.executor import CALL_METHOD, GET_FIELD, SET_FIELD, Execution, Executor
from dataclay._internal.ee.runtime import EnvironmentRuntime
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.states import PROXY, RESIDENT, STATE_KEY
from dataclay._internal.ee.link_session import LinkSession
from dataclay._internal.ee.models import ModelWatcher
from dataclay._internal.ee.relay import AioLinkChannel, LinkChannel
from dataclay._internal.proto import common_pb2, dataservice_pb2, executionenv_pb2, logicmodule_pb2
from dataclay._internal.rpc import DataServiceLink, channels
from dataclay._internal.runtime.current import install_runtime, remove_runtime
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps, dumps_args
from dataclay._internal.serialization.policy import BackendClassPolicy
from peers import LinkPeer
from unitmodels.shop import AlwaysEqual, Basket, Item, OutOfStock

BACKEND = str(uuid.uuid4())


def linked_runtime(peer: LinkPeer, models_dir, resident_bytes: int = 0) -> EnvironmentRuntime:
    """An execution environment runtime linked to `peer` (in process: the executing thread reads its answers)."""
    link = DataServiceLink(*peer.environment_fds())
    peer.start()
    session = LinkSession(link, None, ModelWatcher(tempfile.mkdtemp()), None, 4)
    channels.relay_through(lambda address, aio: (AioLinkChannel if aio else LinkChannel)(session, address))
    runtime = EnvironmentRuntime(EnvironmentConfig(backend_id=BACKEND, resident_bytes=resident_bytes), session,
                                 models_dir)
    session.attach(Executor(runtime), runtime.evict)
    return runtime


@pytest.fixture
def env(models_dir, request):
    """An execution environment runtime whose Data Service is a real link peer (with the resident budget in
    bytes a test parametrizes it with, indirectly; none otherwise)."""
    peer = LinkPeer()
    runtime = linked_runtime(peer, models_dir, getattr(request, "param", 0))
    assert install_runtime(runtime)
    yield peer, runtime, Executor(runtime), BackendClassPolicy(models_dir)
    remove_runtime(runtime)
    channels.relay_through(None)
    peer.stop()


def store(peer, root, dataset="alice") -> list:
    """Stores `root` and what it reaches in the peer, as a Data Service would; returns their IDs."""
    return peer.store(root, BACKEND, dataset)


def run(executor, object_id, name, *args, kind=CALL_METHOD, payload=None, datasets=("alice",), **kwargs):
    if payload is None:
        payload = dumps_args(args, kwargs) if kind == CALL_METHOD else b""
    return executor.execute(Execution(1, object_id, "unitmodels.shop.Item", kind, name, payload,
                                      "alice", "alice", frozenset(datasets)))


def test_call_loads_the_object_with_the_callers_token_and_sends_only_changed_fields(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = run(executor, oid, "raise_price", 2)
    assert outcome.error is None and loads(outcome.result, policy) == 5
    assert peer.load_calls == [([oid], 1)]
    [delta] = outcome.deltas
    assert delta.id == oid and [f.name for f in delta.changed] == ["price"] and delta.removed == ()
    assert loads(delta.changed[0].value, policy) == 5 and outcome.new_objects == []


def test_an_async_active_method_runs_to_its_end_and_its_changes_are_stored(env):
    # setup
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    # run
    outcome = run(executor, oid, "appraise", 0.01)
    again = run(executor, oid, "appraise")
    # verify: awaited in the environment, the result and the delta are those of the finished coroutine
    assert outcome.error is None and loads(outcome.result, policy) == "pen now costs 4"
    assert [f.name for f in outcome.deltas[0].changed] == ["price"] and loads(outcome.deltas[0].changed[0].value,
                                                                              policy) == 4
    assert loads(again.result, policy) == "pen now costs 5"


def test_resident_object_is_not_loaded_again_and_sequences_increase(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    sequences = [run(executor, oid, "raise_price", 1).deltas[0].sequence for _ in range(5)]
    assert len(peer.load_calls) == 1
    assert sequences == sorted(sequences) and len(set(sequences)) == 5


def test_a_call_that_changes_nothing_sends_no_delta(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = run(executor, oid, "describe")
    assert loads(outcome.result, policy) == "pen costs 3" and outcome.deltas == []


def test_in_place_change_of_a_mutable_field_is_detected(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = run(executor, oid, "tag", "blue")
    [delta] = outcome.deltas
    assert [f.name for f in delta.changed] == ["tags"] and loads(delta.changed[0].value, policy) == ["blue"]


def test_identical_immutable_values_are_not_pickled_again(env, monkeypatch):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    run(executor, oid, "describe")
    pickled = []
    real = changes.dumps
    monkeypatch.setattr(changes, "dumps", lambda value, namer, what: pickled.append(what) or real(value, namer, what))
    run(executor, oid, "describe")
    assert pickled == [("Item", "tags")]


def test_volatile_objects_reachable_from_state_become_new_resident_objects(env):
    peer, runtime, executor, policy = env
    [basket_id] = store(peer, Basket("bob"))
    outcome = executor.execute(Execution(2, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "add",
                                         dumps_args((Item("gift", 5),), {}), "alice", "alice",
                                         frozenset({"alice"})))
    [new] = outcome.new_objects
    [delta] = outcome.deltas
    assert new.class_name == "unitmodels.shop.Item" and new.dataset == "alice"
    assert delta.changed[0].name == "items" and delta.changed[0].references == (new.id,)
    item = IDENTITY.get(new.id)
    assert item.__dict__[STATE_KEY] is RESIDENT and item.price == 5
    total = executor.execute(Execution(3, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "total", dumps_args((), {}),
                                       "alice", "alice", frozenset({"alice"})))
    assert loads(total.result, policy) == 5 and len(peer.load_calls) == 1


def test_result_refers_to_persistent_objects_and_copies_volatile_ones(env):
    peer, runtime, executor, policy = env
    basket_id, item_id = store(peer, Basket("bob", [Item("pen", 1)]))
    first = executor.execute(Execution(1, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "first",
                                       dumps_args((), {}), "alice", "alice", frozenset({"alice"})))
    fresh = executor.execute(Execution(2, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "new_basket_for",
                                       dumps_args(("carol",), {}), "alice", "alice", frozenset({"alice"})))
    assert loads(first.result, policy) is IDENTITY.get(item_id)
    copy = loads(fresh.result, policy)
    assert isinstance(copy, Basket) and not copy.is_persistent and copy.owner == "carol"
    assert fresh.new_objects == [] and fresh.deltas == []


def test_nested_calls_on_resident_objects_run_in_process_and_are_all_stored(env):
    peer, runtime, executor, policy = env
    ids = store(peer, Basket("bob", [Item("a", 1), Item("b", 2)]))
    outcome = executor.execute(Execution(1, ids[0], "unitmodels.shop.Basket", CALL_METHOD, "raise_all",
                                         dumps_args((10,), {}), "alice", "alice", frozenset({"alice"})))
    assert loads(outcome.result, policy) == [11, 12]
    assert sorted(d.id for d in outcome.deltas) == sorted(ids[1:])
    assert sorted(peer.load_calls) == sorted(([i], 1) for i in ids)


def test_user_exception_is_captured_and_the_touched_object_rolled_back(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = run(executor, oid, "fail_after_change", "nope")
    error = outcome.error
    assert isinstance(error, RemoteError) and error.remote_type == "builtins.ValueError"
    assert error.remote_message == "nope" and loads(error.remote_args, policy) == ("nope",)
    assert "fail_after_change" in error.remote_traceback and outcome.deltas == []
    assert oid not in runtime.residents.snapshots and _not_resident(oid)
    assert loads(run(executor, oid, "describe").result, policy) == "pen costs 3"
    assert len(peer.load_calls) == 2


def test_a_method_out_of_memory_says_whose_limit_it_met_and_what_to_do(env):
    # setup
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    # run
    bare = run(executor, oid, "exhaust_memory").error
    said = run(executor, oid, "exhaust_memory", "my own words").error
    # verify: still a MemoryError; an empty one names the limit and the way out, the model's own words stay
    assert bare.remote_type == "builtins.MemoryError" and "DATACLAY_EE_MEMORY_MB" in bare.remote_message
    assert "hold less at once" in bare.remote_message
    assert said.remote_type == "builtins.MemoryError" and said.remote_message == "my own words"


def test_model_exception_keeps_its_model_type_name(env):
    peer, runtime, executor, policy = env
    [basket_id, _] = store(peer, Basket("bob", [Item("a", 1)]))
    outcome = executor.execute(Execution(1, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "take",
                                         dumps_args(("zzz",), {}), "alice", "alice", frozenset({"alice"})))
    assert outcome.error.remote_type == "unitmodels.shop.OutOfStock"
    assert type(loads(pickle.dumps(OutOfStock("x"), 5), policy)) is OutOfStock


@pytest.mark.parametrize("kind, name", [(CALL_METHOD, "nothing"), (CALL_METHOD, "label"), (GET_FIELD, "nothing"),
                                        (SET_FIELD, "cache")])
def test_unknown_methods_and_fields_are_method_does_not_exist(env, kind, name):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = run(executor, oid, name, kind=kind, payload=pickle.dumps(1, 5))
    assert isinstance(outcome.error, MethodDoesNotExistError) and name in str(outcome.error)


def test_crafted_arguments_are_refused_without_running_anything(env, tmp_path):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    target = tmp_path / "pwned"

    class Boom:
        def __reduce__(self):
            return os.system, (f"touch {target}",)

    outcome = run(executor, oid, "raise_price", payload=pickle.dumps(((Boom(),), {}), 5))
    assert isinstance(outcome.error, SerializationError) and not target.exists()


def test_get_field_and_set_field(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    read = run(executor, oid, "name", kind=GET_FIELD)
    written = run(executor, oid, "price", kind=SET_FIELD, payload=dumps(42)[0])
    assert loads(read.result, policy) == "pen" and read.deltas == []
    assert written.result == b"" and [f.name for f in written.deltas[0].changed] == ["price"]
    assert loads(run(executor, oid, "price", kind=GET_FIELD).result, policy) == 42


def test_deleted_field_is_sent_as_removed(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = run(executor, oid, "drop_tags")
    assert outcome.deltas[0].removed == ("tags",) and outcome.deltas[0].changed == ()


def test_objects_of_other_datasets_are_refused_even_when_resident(env):
    peer, runtime, executor, policy = env
    item = Item("secret", 1)
    [item_id] = store(peer, item, dataset="bob")
    basket = Basket("alice")
    basket_id = store(peer, basket)[0]
    peer.stored[basket_id].fields[1].CopyFrom(_items_field([item_id]))
    run(executor, item_id, "describe", datasets=("bob",))
    outcome = executor.execute(Execution(1, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "total",
                                         dumps_args((), {}), "alice", "alice", frozenset({"alice"})))
    assert isinstance(outcome.error, PermissionDeniedError) and item_id in str(outcome.error)


def test_object_not_stored_here_is_object_not_here(env):
    peer, runtime, executor, policy = env
    outcome = run(executor, str(uuid.uuid4()), "describe")
    assert isinstance(outcome.error, ObjectNotHereError)


def test_evicted_object_is_reloaded_on_next_use(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    run(executor, oid, "describe")
    assert runtime.residents.evict([oid, str(uuid.uuid4())]) == 1
    assert _not_resident(oid)
    run(executor, oid, "describe")
    assert len(peer.load_calls) == 2


# Items whose stored name is 1,000 characters: each stores about 1,100 bytes.
BIG_NAME = "n" * 1000


@pytest.mark.parametrize("env", [2500], indirect=True)
def test_past_the_resident_budget_the_idle_object_used_least_recently_is_unloaded(env):
    # setup: two items resident, then the first used again
    peer, runtime, executor, policy = env
    a, b, c = (store(peer, Item(BIG_NAME, price))[0] for price in (1, 2, 3))
    run(executor, a, "describe")
    run(executor, b, "describe")
    run(executor, a, "raise_price", 10)
    # run: a third one passes the budget
    run(executor, c, "describe")
    # verify: the one used least recently went; it comes back from the store (this peer keeps what was
    # stored first: it applies no deltas), and then the least recent of the others goes
    assert _not_resident(b) and not _not_resident(a) and not _not_resident(c)
    assert len(runtime.residents) == 2
    assert loads(run(executor, b, "raise_price", 1).result, policy) == 3
    assert _not_resident(a) and not _not_resident(c)
    assert sorted(ids for ids, _ in peer.load_calls) == sorted([[a], [b], [b], [c]])


@pytest.mark.parametrize("env", [1500], indirect=True)
def test_objects_a_call_in_flight_touched_stay_resident_past_the_budget_until_it_ends(env):
    # setup: a basket of three items, which together are twice the budget
    peer, runtime, executor, policy = env
    ids = store(peer, Basket("bob", [Item(BIG_NAME, 1), Item(BIG_NAME, 2), Item(BIG_NAME, 3)]))
    # run: one call touches all of them
    outcome = executor.execute(Execution(1, ids[0], "unitmodels.shop.Basket", CALL_METHOD, "raise_all",
                                         dumps_args((10,), {}), "alice", "alice", frozenset({"alice"})))
    # verify: nothing it touched was unloaded under it, so it was not refused, and all its changes are stored
    assert outcome.error is None and loads(outcome.result, policy) == [11, 12, 13]
    assert sorted(d.id for d in outcome.deltas) == sorted(ids[1:])
    # and the next load brings the resident bytes back within the budget
    [other] = store(peer, Item("pen", 1))
    run(executor, other, "describe")
    assert len(runtime.residents) <= 2


def test_a_field_set_to_an_equal_value_stores_nothing_and_a_different_one_is_stored(env):
    # setup
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item(BIG_NAME, 3))
    run(executor, oid, "describe")
    # run: an equal string that is another object, then a different one
    same = run(executor, oid, "name", kind=SET_FIELD, payload=dumps("".join(["n"] * 1000))[0])
    changed = run(executor, oid, "name", kind=SET_FIELD, payload=dumps("pencil")[0])
    # verify
    assert same.error is None and same.deltas == []
    [delta] = changed.deltas
    assert [f.name for f in delta.changed] == ["name"] and loads(delta.changed[0].value, policy) == "pencil"


def test_a_value_of_another_type_that_claims_equality_is_stored_all_the_same(env):
    # setup: model code assigns a str subclass whose __eq__ says it equals the stored text
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item(BIG_NAME, 3))
    run(executor, oid, "describe")
    # run
    outcome = run(executor, oid, "name", kind=SET_FIELD, payload=dumps(AlwaysEqual("other"))[0])
    # verify: compared by type before value, never through the model's __eq__, so the change is stored
    [delta] = outcome.deltas
    assert [f.name for f in delta.changed] == ["name"] and loads(delta.changed[0].value, policy) == "other"


def test_objects_of_other_backends_are_reached_through_calls_the_data_service_relays(models_dir):
    # setup: an execution environment whose Data Service knows a second backend holding an item
    link = LinkPeer()
    other = common_pb2.BackendInfo(id=str(uuid.uuid4()), name="other", host="127.0.0.9", port=4321,
                                   languages=[common_pb2.PYTHON], alive=True)

    def relay(request):
        if request.method.endswith("/GetBackends"):
            response = logicmodule_pb2.BackendList(backends=[other])
        else:
            response = dataservice_pb2.GetFieldResponse(value=dumps(7)[0])
        return executionenv_pb2.RelayReply(response=response.SerializeToString())

    link.on_relay = relay
    runtime = linked_runtime(link, models_dir)
    assert install_runtime(runtime)
    try:
        remote_item = IDENTITY.proxy(Item, str(uuid.uuid4()), other.id)
        basket = Basket("bob", [remote_item])
        [basket_id] = store(link, basket)
        # run
        outcome = Executor(runtime).execute(Execution(1, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "total",
                                                      dumps_args((), {}), "alice", "alice", frozenset({"alice"})))
    finally:
        remove_runtime(runtime)
        channels.relay_through(None)
        link.stop()
    # verify: the field read went to the other backend's address, relayed for call 1, with no token of ours
    assert outcome.error is None and loads(outcome.result, BackendClassPolicy(models_dir)) == 7
    assert [(r.call_id, r.method) for r in link.relays] == [
        (1, "/dataclay.v1.LogicModule/GetBackends"), (1, "/dataclay.v1.DataService/GetField")]
    field = dataservice_pb2.GetFieldRequest.FromString(link.relays[1].request)
    assert link.relays[0].target == "" and link.relays[1].target == "127.0.0.9:4321"
    assert (field.object_id, field.field) == (remote_item.getID(), "price")
    assert link.load_calls == [([basket_id], 1)]


def test_a_call_whose_object_another_writer_changed_while_it_ran_is_refused_and_stores_nothing(env):
    # setup: a basket of two items; while the call loads the second, the first is evicted, as the Data
    # Service does when another account's call changed it
    peer, runtime, executor, policy = env
    first, second = Item("pen", 1), Item("ink", 2)
    ids = store(peer, Basket("bob", [first, second]))
    basket_id, first_id, second_id = ids
    evicted = []

    def evict_first(load_ids):
        if load_ids == [second_id] and not evicted:
            evicted.append(first_id)
            peer.send(executionenv_pb2.DataServiceMessage(evict=executionenv_pb2.EvictRequest(ids=[first_id])))

    peer.before_load = evict_first
    # run
    refused = executor.execute(Execution(1, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "raise_all",
                                         dumps_args((10,), {}), "alice", "alice", frozenset({"alice"})))
    again = executor.execute(Execution(2, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "raise_all",
                                       dumps_args((10,), {}), "alice", "alice", frozenset({"alice"})))
    # verify: the first call changed nothing and said why; the second reloaded what it touched and went through
    assert refused.error is not None and refused.error.code == "CONCURRENT_CHANGE" and refused.deltas == []
    assert first_id in str(refused.error)
    assert again.error is None and {d.id for d in again.deltas} == {first_id, second_id}
    assert loads(again.result, policy) == [11, 12]


def _not_resident(oid) -> bool:
    obj = IDENTITY.get(oid)
    return obj is None or obj.__dict__[STATE_KEY] is PROXY


def _items_field(ids):
    from dataclay._internal.proto import common_pb2
    data, references = dumps([IDENTITY.proxy(Item, i, BACKEND) for i in ids])
    return common_pb2.Field(name="items", value=data, references=references)


def test_an_outcome_the_link_refuses_is_undone_and_its_error_delivered(env):
    # setup: a delivery that refuses outcomes carrying new objects, as the link does with one too large
    peer, runtime, executor, policy = env
    [basket_id] = store(peer, Basket("bob"))
    delivered = []

    def deliver(outcome):
        if outcome.new_objects:
            raise SerializationError("too large for one frame")
        delivered.append(outcome)

    # run
    refused = executor.execute(Execution(1, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "add",
                                         dumps_args((Item("gift", 5),), {}), "alice", "alice",
                                         frozenset({"alice"})), deliver)
    # verify: the error is delivered once, the basket reloads its stored state, the new item is forgotten
    assert delivered == [refused] and isinstance(refused.error, SerializationError)
    assert _not_resident(basket_id) and len(runtime.residents) == 0
    total = executor.execute(Execution(2, basket_id, "unitmodels.shop.Basket", CALL_METHOD, "total",
                                       dumps_args((), {}), "alice", "alice", frozenset({"alice"})), deliver)
    assert loads(total.result, policy) == 0 and delivered[-1] is total and len(peer.load_calls) == 2


def traced(executor, object_id, name, *args):
    return executor.execute(Execution(1, object_id, "unitmodels.shop.Item", CALL_METHOD, name, dumps_args(args, {}),
                                      "alice", "alice", frozenset({"alice"}), traced=True))


def test_a_traced_call_reports_its_steps_as_spans_and_an_untraced_one_none(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    assert run(executor, oid, "raise_price", 1).spans == []
    outcome = traced(executor, oid, "raise_price", 2)
    assert outcome.error is None
    (whole, method, encode) = outcome.spans
    assert whole[0] == "ee.execute unitmodels.shop.Item.raise_price" and whole[5] == 0
    assert whole[3] == {"dataclay.execution.kind": CALL_METHOD}
    assert method[0] == "ee.method unitmodels.shop.Item.raise_price" and method[5] == 1
    assert encode[0] == "ee.encode" and encode[5] == 1
    assert whole[1] <= method[1] <= method[2] <= encode[1] <= encode[2] <= whole[2]
    assert all(span[4] == "" for span in outcome.spans)


def test_a_failed_traced_call_names_only_the_exceptions_type_not_its_message(env):
    peer, runtime, executor, policy = env
    [oid] = store(peer, Item("pen", 3))
    outcome = traced(executor, oid, "fail_after_change", "secret 4711")
    assert isinstance(outcome.error, RemoteError)
    (whole, method) = outcome.spans
    assert method[4] == "ValueError" and whole[4] == "RemoteError"
    assert "4711" not in repr(outcome.spans)
