"""The COMPSs storage interface without a cluster: storage.api's call order and argument checks
(against a Logic Module peer where a session is needed), and the local runtime's task rules,
forked executors, futures and failures on plain values."""
import logging
import os
import time
import uuid

import pytest

from dataclay import api as dataclay_api
from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.processes import runs
from peers import LogicModulePeer
from dataclay._internal.records import BackendRecord
from storage import _hosts, api
from storage.api import StorageStateError
from storage.local_runtime import INOUT, LocalRuntime, TaskFailedError, compss_barrier, compss_wait_on, task

LOG = logging.getLogger("test.storage")
SOME_ID = str(uuid.uuid4())


@task(returns=int)
def add(a, b):
    return a + b


@task(returns=tuple)
def whereabouts():
    return os.getpid(), os.getppid(), dataclay_api.is_initialized()


@task(returns=int)
def fail(message):
    raise ValueError(message)


@task(box=INOUT)
def append(box, value):
    box.append(value)


@task(returns=int)
def linger(seconds):
    time.sleep(seconds)
    return seconds


@pytest.fixture(autouse=True)
def no_storage_state_left():
    """Every test starts and ends with storage.api uninitialised in this process."""
    yield
    for step in (api.finishWorkerPostFork, api.finishWorker, api.finish, dataclay_api.finish):
        try:
            step()
        except StorageStateError:
            pass


@pytest.fixture
def lm(tmp_path, monkeypatch):
    """A Logic Module peer and a client configuration file that reaches it (as `.config`)."""
    for key in ("DATACLAY_HOST", "DATACLAY_PORT", "DATACLAY_USER", "DATACLAY_PASSWORD", "DATACLAY_DATASET",
                "DATACLAY_HOME"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("DATACLAY_HOME", str(tmp_path / "home"))
    peer = LogicModulePeer()
    peer.config = tmp_path / "storage.properties"
    peer.config.write_text(f"DATACLAY_HOST=127.0.0.1\nDATACLAY_PORT={peer.port}\nDATACLAY_USER=alice\n"
                           f"DATACLAY_PASSWORD=secret\n")
    yield peer
    peer.stop()


# ---- storage.api: order ----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: api.getByID(SOME_ID), lambda: api.getLocations(SOME_ID), lambda: api.newReplica(SOME_ID),
    lambda: api.newVersion(SOME_ID), lambda: api.consolidateVersion(SOME_ID),
    lambda: api.TaskContext(LOG, []).__enter__()])
def test_object_calls_before_init_say_init_is_missing(call):
    with pytest.raises(StorageStateError, match=r"before init\(\)"):
        call()


@pytest.mark.parametrize("call, message", [
    (api.finish, r"finish\(\) without init\(\)"),
    (api.finishWorker, r"finishWorker\(\) without initWorker\(\)"),
    (api.initWorkerPostFork, r"initWorkerPostFork\(\) before initWorker\(\)"),
    (api.finishWorkerPostFork, r"without initWorkerPostFork\(\)"),
])
def test_lifecycle_calls_out_of_order_are_refused(call, message):
    with pytest.raises(StorageStateError, match=message):
        call()


def test_init_worker_reads_the_configuration_and_connects_nothing(lm):
    # run
    api.initWorker(config_file_path=str(lm.config))
    # verify: no session, no channel; objects need initWorkerPostFork
    assert lm.calls.get("NewSession", 0) == 0 and not dataclay_api.is_initialized()
    with pytest.raises(StorageStateError, match="has not called initWorkerPostFork"):
        api.getByID(SOME_ID)
    with pytest.raises(StorageStateError, match="already initialised as worker"):
        api.initWorker(config_file_path=str(lm.config))
    with pytest.raises(StorageStateError, match="workers call finishWorker"):
        api.finish()


def test_executor_session_lives_from_init_worker_post_fork_to_finish_worker_post_fork(lm):
    # setup
    api.initWorker(config_file_path=str(lm.config))
    # run
    api.initWorkerPostFork()
    with api.TaskContext(LOG, [1, "two"]) as context:
        connected = (len(lm.tokens), dataclay_api.is_initialized(), context.values)
    # verify: one session; finishWorker must wait for finishWorkerPostFork
    assert connected == (1, True, [1, "two"])
    with pytest.raises(StorageStateError, match="called twice"):
        api.initWorkerPostFork()
    with pytest.raises(StorageStateError, match=r"call finishWorkerPostFork\(\) first"):
        api.finishWorker()
    api.finishWorkerPostFork()
    assert lm.tokens == set() and not dataclay_api.is_initialized()
    api.finishWorker()
    with pytest.raises(StorageStateError, match=r"before init\(\)"):
        api.getByID(SOME_ID)


def test_master_init_opens_one_session_and_refuses_a_second_init_or_worker_calls(lm):
    # run
    api.init(config_file_path=lm.config)
    # verify
    assert len(lm.tokens) == 1
    with pytest.raises(StorageStateError, match="already initialised as master"):
        api.init(config_file_path=str(lm.config))
    with pytest.raises(StorageStateError, match="already initialised as master"):
        api.initWorker(config_file_path=str(lm.config))
    with pytest.raises(StorageStateError, match="the master calls finish"):
        api.finishWorker()
    api.finish()
    assert lm.tokens == set()


def test_init_worker_in_a_process_that_already_has_a_session_is_refused(lm):
    dataclay_api.init(str(lm.config))
    with pytest.raises(StorageStateError, match="must not cross a fork"):
        api.initWorker(config_file_path=str(lm.config))


def test_object_calls_use_the_session_of_dataclay_api_init(lm):
    # setup: a program that opened its own session, as dataClay 2 programs do, and an object the peer knows
    from dataclay._internal.proto import common_pb2
    from unitmodels.shop import Item
    lm.objects[SOME_ID] = common_pb2.ObjectInfo(id=SOME_ID, class_name="unitmodels.shop.Item",
                                                language=common_pb2.PYTHON, master_backend_id=str(uuid.uuid4()))
    dataclay_api.init(str(lm.config))
    # run
    found = api.getByID(SOME_ID)
    # verify: the same session, no second one; COMPSs' worker sequence is still checked
    assert isinstance(found, Item) and found.getID() == SOME_ID and len(lm.tokens) == 1
    with pytest.raises(StorageStateError, match="must not cross a fork"):
        api.initWorker(config_file_path=str(lm.config))


def test_a_task_exception_passes_through_task_context(lm):
    api.init(config_file_path=str(lm.config))
    with pytest.raises(KeyError, match="boom"):
        with api.TaskContext(LOG, []):
            raise KeyError("boom")


# ---- storage.api: arguments --------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [42, "not-a-uuid", None, b"x"])
def test_get_by_id_refuses_what_is_not_an_object_id(bad):
    with pytest.raises(InvalidArgumentError, match="must be an object ID"):
        api.getByID(bad)


@pytest.mark.parametrize("bad", ["", "   ", 3, ["a"]])
def test_init_refuses_a_configuration_path_that_is_not_one(bad):
    with pytest.raises(InvalidArgumentError, match="config_file_path must be the path"):
        api.init(config_file_path=bad)
    with pytest.raises(InvalidArgumentError, match="config_file_path must be the path"):
        api.initWorker(config_file_path=bad)


def test_missing_configuration_file_is_named_and_leaves_nothing_initialised(tmp_path):
    missing = tmp_path / "nowhere.properties"
    with pytest.raises(InvalidArgumentError, match="nowhere.properties.* does not exist"):
        api.initWorker(config_file_path=str(missing))
    with pytest.raises(InvalidArgumentError, match="does not exist"):
        api.init(config_file_path=str(missing))
    with pytest.raises(StorageStateError, match=r"before init\(\)"):
        api.getByID(SOME_ID)


def test_init_worker_refuses_a_configuration_without_credentials(config_without_credentials):
    with pytest.raises(InvalidArgumentError, match="DATACLAY_USER and DATACLAY_PASSWORD must be set"):
        api.initWorker(config_file_path=str(config_without_credentials))
    with pytest.raises(StorageStateError, match=r"before initWorker\(\)"):
        api.initWorkerPostFork()


def test_new_version_and_task_context_check_their_arguments():
    with pytest.raises(InvalidArgumentError, match="preserve_source must be True or False"):
        api.newVersion(SOME_ID, preserve_source="yes")
    with pytest.raises(InvalidArgumentError, match="logger must be a logging.Logger"):
        api.TaskContext("log", [])
    with pytest.raises(InvalidArgumentError, match="values must be the list"):
        api.TaskContext(LOG, 5)


@pytest.mark.parametrize("call", [lambda: api.newReplica(SOME_ID, 7), lambda: api.newVersion(SOME_ID, True, ["h"])])
def test_backend_must_be_a_name(call):
    with pytest.raises(InvalidArgumentError, match="backend must be a host name, backend name or backend ID"):
        call()


def backend(name: str, host: str, alive: bool = True) -> BackendRecord:
    return BackendRecord(str(uuid.uuid5(uuid.NAMESPACE_DNS, name)), name, host, 1, ("python",), alive)


def test_host_names_map_to_backends_by_id_then_name_then_host_then_this_machine():
    # setup
    a, b, c = backend("ds-a", "node1.example.org"), backend("ds-b", "node1.example.org"), backend("ds-c", "127.0.0.1")
    backends = {x.id: x for x in (a, b, c)}
    anything = lambda backend_id: True  # noqa: E731
    # verify
    assert _hosts.pick(backends, c.id, anything) == c.id
    assert _hosts.pick(backends, "DS-B", anything) == b.id
    assert _hosts.pick(backends, "node1", anything) == a.id
    assert _hosts.pick(backends, "node1", lambda backend_id: backend_id != a.id) == b.id
    assert _hosts.pick(backends, "localhost", anything) == c.id
    assert _hosts.pick(backends, "node2", anything) is None
    assert _hosts.hosts_of(backends, [b.id, c.id, a.id, "unknown"]) == ["node1.example.org", "127.0.0.1"]


def test_a_live_backend_is_picked_before_a_dead_one_on_the_same_host():
    dead, live = backend("ds-a", "node1", alive=False), backend("ds-b", "node1")
    assert _hosts.pick({dead.id: dead, live.id: live}, "node1", lambda backend_id: backend_id == dead.id) == live.id


# ---- local runtime -------------------------------------------------------------------------------------

def test_task_declarations_the_runtime_cannot_honour_are_refused():
    with pytest.raises(InvalidArgumentError, match="returns must be a type or 1"):
        task(returns=2)
    with pytest.raises(InvalidArgumentError, match="directions must be IN or INOUT"):
        task(box="OUT")
    with pytest.raises(InvalidArgumentError, match="'nothere' is not a named parameter"):
        task(nothere=INOUT)(add.__wrapped__)
    with pytest.raises(InvalidArgumentError, match="module-level functions"):
        def nested(x):
            return x
        task()(nested)
    with pytest.raises(InvalidArgumentError, match="workers must be a positive integer"):
        LocalRuntime(workers=0)


def test_without_a_runtime_tasks_run_at_once_in_program_order():
    box = []
    append(box, 1)
    total = add(add(1, 2), 3)
    append(box, total)
    assert compss_wait_on(total) == 6 and box == [1, 6]
    compss_barrier()
    assert compss_wait_on(1, [2]) == [1, [2]]


@pytest.mark.timeout(120)
def test_tasks_run_in_forked_executors_each_with_its_own_session(lm):
    # setup
    runtime = LocalRuntime(workers=2, config_file=lm.config).start()
    try:
        # run
        places = compss_wait_on([whereabouts() for _ in range(8)])
        sessions = len(lm.tokens)
    finally:
        runtime.stop()
    # verify: executors forked from one worker process (not the master), each connected after the fork
    pids = {pid for pid, _, _ in places}
    parents = {ppid for _, ppid, _ in places}
    assert pids <= set(runtime.executor_pids) and len(set(runtime.executor_pids)) == 2
    assert len(parents) == 1 and os.getpid() not in parents
    assert all(connected for _, _, connected in places)
    assert sessions == 3 and lm.calls["NewSession"] == 3
    assert lm.tokens == set()


@pytest.mark.timeout(120)
def test_futures_chain_and_a_failure_reaches_its_dependants_and_the_barrier(lm):
    with LocalRuntime(workers=2, config_file=str(lm.config)):
        # run
        chained = add(add(1, 2), add(3, 4))
        broken = fail("no luck")
        after = add(broken, 1)
        # verify
        assert compss_wait_on(chained) == 10
        with pytest.raises(TaskFailedError, match="ValueError: no luck"):
            compss_wait_on(broken)
        with pytest.raises(TaskFailedError, match="did not run: task fail"):
            compss_wait_on(after)
        with pytest.raises(TaskFailedError, match="2 task"):
            compss_barrier()
        assert compss_wait_on(add(5, 5)) == 10


@pytest.mark.timeout(120)
def test_inout_parameters_must_be_persistent_objects(lm):
    with LocalRuntime(workers=1, config_file=str(lm.config)):
        with pytest.raises(InvalidArgumentError, match="INOUT parameter 'box' must be a persistent object"):
            append([], 1)


@pytest.mark.timeout(120)
def test_leaving_the_runtime_on_an_error_stops_its_processes_without_waiting_for_tasks(lm):
    # setup: one task busy for a minute
    runtime = LocalRuntime(workers=2, config_file=str(lm.config), stop_timeout=3)
    started = time.monotonic()
    # run
    with pytest.raises(KeyError, match="the program failed"):
        with runtime:
            linger(60)
            assert compss_wait_on(add(1, 1)) == 2
            raise KeyError("the program failed")
    # verify: stopped within the stop timeouts, every process gone
    assert time.monotonic() - started < 30
    assert not any(runs(pid) for pid in [runtime.worker_pid, *runtime.executor_pids])
