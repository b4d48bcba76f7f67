"""Issue 21's low findings, each tried against a real cluster as an attacker would: mallory has no
data contract, the reader a read-only one on the administrator's dataset. Each attempt must be
refused and change nothing."""
import json
import os
import pickle
import re
import signal
import textwrap
import uuid

import grpc
import pytest

from dataclay.exceptions import (
    BackendDoesNotExistError, DatasetDoesNotExistError, InvalidArgumentError, NotAuthenticatedError,
    ObjectDoesNotExistError, ObjectNotHereError, PermissionDeniedError)
from dataclay._internal.proto import common_pb2, logicmodule_pb2 as lm_pb2, logicmodule_pb2_grpc
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from fuzz.identities import SessionOpener
from test_trust_boundaries import (  # noqa: F401 (fixtures)
    MALLORY, MALLORY_PW, _as, _node_referencing, admin_lm, backend_address, mallory, raw, refused, victim)

READER, READER_PW = "reader", "reader-password-1"


@pytest.fixture(scope="module")
def reader(cluster, victim):
    """An account with a read-only contract on the administrator's dataset, in a session on it."""
    cluster.dataclaycmd("NewAccount", READER, READER_PW)
    cluster.dataclaycmd("NewDataContract", cluster.admin_user(), "-", cluster.admin_user(), READER, "--read-only")
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(READER, READER_PW, cluster.admin_user()).token
    yield lm
    lm.close()


def _same_shape(a: Exception, b: Exception, a_id: str, b_id: str) -> bool:
    """Whether two errors are of one class and say the same but for the object ID."""
    return type(a) is type(b) and str(a).replace(a_id, "<id>") == str(b).replace(b_id, "<id>")


def test_get_stats_is_for_administrators_and_status_still_works_for_them(cluster, mallory, reader):
    # run
    with pytest.raises(PermissionDeniedError) as user_error:
        mallory.get_stats()
    with pytest.raises(PermissionDeniedError):
        reader.get_stats()
    stats = admin_lm(cluster).get_stats()
    status = cluster.status()
    # verify
    assert "administrator" in str(user_error.value)
    assert stats.objects >= 2
    assert re.search(r"objects \d+", status) and "PERMISSION" not in status.upper(), status


def test_a_reader_makes_no_replica_version_or_move_of_what_it_may_only_read(cluster, reader, victim):
    # setup: the victim's counter as the reader can see it
    home, other = victim["backends"]
    ds = DataServiceClient(backend_address(reader, home), reader.token)
    assert ds.get_field(victim["counter"], "value")  # the reader may read it
    # run
    attempts = {
        "NewReplica": lambda: ds.new_replica(victim["counter"], other, recursive=False),
        "NewReplica (any backend)": lambda: ds.new_replica(victim["counter"], "", recursive=True),
        "Move": lambda: ds.move(victim["counter"], other),
        "NewVersion": lambda: ds.new_version(victim["counter"], other),
    }
    wrong = []
    for rpc, attempt in attempts.items():
        try:
            attempt()
            wrong.append(f"{rpc}: accepted")
        except PermissionDeniedError as e:
            if "read-only" not in str(e):
                wrong.append(f"{rpc}: {e}")
    # verify: every attempt refused, and the counter has no replica and stayed where it was
    assert wrong == []
    info = admin_lm(cluster).get_object_info(victim["counter"])
    assert info.master_backend_id == home
    assert list(info.replica_backend_ids) == []


def test_no_access_and_does_not_exist_get_the_same_answer(cluster, mallory, victim):
    # setup: the victim's counter, and an ID nobody uses
    home = victim["backends"][0]
    theirs, nobodys = victim["counter"], str(uuid.uuid4())
    ds = DataServiceClient(backend_address(mallory, home), mallory.token)
    attempts = {
        "GetObjectInfo": lambda oid: mallory.get_object_info(oid),
        "NewAlias": lambda oid: mallory.new_alias("mine-now", oid),
        "GetObjects": lambda oid: ds.get_objects([oid]),
        "CallMethod": lambda oid: ds.call_method(oid, "get", pickle.dumps(((), {}))),
        "GetField": lambda oid: ds.get_field(oid, "value"),
        "SetField": lambda oid: ds.set_field(oid, "value", pickle.dumps(1)),
        "NewReplica": lambda oid: ds.new_replica(oid, victim["backends"][1]),
        "NewVersion": lambda oid: ds.new_version(oid),
        "Move": lambda oid: ds.move(oid, victim["backends"][1]),
    }
    # run
    differ = []
    for rpc, attempt in attempts.items():
        errors = []
        for oid in (theirs, nobodys):
            try:
                attempt(oid)
                errors.append(AssertionError("accepted"))
            except Exception as e:  # the comparison below is the assertion
                errors.append(e)
        if not _same_shape(errors[0], errors[1], theirs, nobodys) or isinstance(errors[0], AssertionError):
            differ.append(f"{rpc}: {type(errors[0]).__name__}: {errors[0]} / {type(errors[1]).__name__}: {errors[1]}")
    from_client = _as(cluster, MALLORY, MALLORY_PW, """
        from dataclay.exceptions import DataClayException
        out = []
        for oid in sys.argv[1:]:
            try:
                api.get_by_id(oid).get()
                out.append("read")
            except DataClayException as e:
                out.append(type(e).__name__ + ": " + str(e).replace(oid, "<id>"))
        print(json.dumps(out))
    """, theirs, nobodys)
    # verify
    assert differ == []
    assert isinstance(mallory_error(mallory, theirs), ObjectDoesNotExistError)
    assert isinstance(mallory_error(lambda: ds.get_objects([theirs])), ObjectNotHereError)
    assert from_client[0] == from_client[1] and from_client[0].startswith("ObjectDoesNotExistError")


def mallory_error(call_or_lm, oid: str | None = None) -> Exception:
    """The error of a call (or of GetObjectInfo of `oid` on a Logic Module client)."""
    call = (lambda: call_or_lm.get_object_info(oid)) if oid else call_or_lm
    try:
        call()
    except Exception as e:  # returned for the caller to assert on
        return e
    raise AssertionError("the call was accepted")


def test_misses_by_id_cost_the_backends_nothing(cluster, mallory):
    # setup
    admin = admin_lm(cluster)
    before = dict(admin.get_stats().calls)
    # run: 200 lookups of IDs nobody uses
    for _ in range(200):
        with pytest.raises(ObjectDoesNotExistError):
            mallory.get_object_info(str(uuid.uuid4()))
    after = dict(admin.get_stats().calls)
    # verify: the Logic Module answered them alone; nothing else moved but heartbeats and stats
    moved = {rpc: after.get(rpc, 0) - before.get(rpc, 0) for rpc in after if after.get(rpc, 0) != before.get(rpc, 0)}
    assert moved.pop("GetObjectInfo") == 200
    assert set(moved) <= {"GetStats", "Heartbeat", "ValidateSession"}, moved


def test_a_dataset_cannot_take_an_accounts_name(cluster, mallory):
    # run: mallory creates datasets named like a future account and like the administrator's
    with pytest.raises(DatasetDoesNotExistError) as squat:
        mallory.new_data_contract("future-user", MALLORY)
    with pytest.raises(PermissionDeniedError):
        mallory.new_data_contract(cluster.admin_user(), MALLORY)
    cluster.dataclaycmd("NewAccount", "future-user", "future-user-password-1")
    mallory.new_data_contract(f"{MALLORY}.notes", "future-user")  # a dataset of her own namespace
    taken = cluster.dataclaycmd("NewAccount", f"{MALLORY}.notes", "mallory-notes-password-1", check=False)
    # verify: the future account got its name and its own dataset; a name in mallory's namespace is
    # refused as an account, with a message that says why
    assert f"'{MALLORY}.<name>'" in str(squat.value)
    session = LogicModuleClient(f"127.0.0.1:{cluster.port}").new_session("future-user", "future-user-password-1", "")
    assert session.dataset == "future-user" and list(session.datasets) == ["future-user", f"{MALLORY}.notes"]
    assert taken.returncode != 0 and f"namespace of account '{MALLORY}'" in taken.stdout + taken.stderr
    assert [c.dataset for c in mallory.list_data_contracts()] == [f"{MALLORY}.notes"]


def test_a_backend_session_for_an_unregistered_id_may_only_register_that_backend(cluster, mallory, victim):
    # setup: a session proved with the cluster secret, for an ID no backend has
    opener = SessionOpener(f"127.0.0.1:{cluster.port}", cluster.home)
    stranger = str(uuid.uuid4())
    session = opener.backend(stranger)
    channel = grpc.insecure_channel(f"127.0.0.1:{cluster.port}")
    lm, metadata = logicmodule_pb2_grpc.LogicModuleStub(channel), (("dataclay-session", session.token),)
    ds = DataServiceClient(backend_address(mallory, victim["backends"][0]), session.token)
    # run
    errors = {
        "GetObjectInfo": refused(lambda: lm.GetObjectInfo(lm_pb2.ObjectIdRequest(id=victim["counter"]),
                                                         metadata=metadata)),
        "GetBackends": refused(lambda: lm.GetBackends(common_pb2.Empty(), metadata=metadata)),
        "ValidateSession": refused(lambda: lm.ValidateSession(lm_pb2.ValidateSessionRequest(token=mallory.token),
                                                             metadata=metadata)),
        "Heartbeat": refused(lambda: lm.Heartbeat(lm_pb2.HeartbeatRequest(backend_id=stranger), metadata=metadata)),
    }
    on_backend = mallory_error(lambda: ds.get_objects([victim["counter"]]))
    other_id = refused(lambda: lm.RegisterBackend(common_pb2.BackendInfo(
        id=victim["backends"][0], name="evil", host="127.0.0.1", port=1, languages=[common_pb2.PYTHON],
        store_engine="kv"), metadata=metadata))
    channel.close()
    opener.shutdown()
    # verify: the Logic Module serves it nothing, a backend does not take it for a backend's, and it
    # may not register another backend's ID
    wrong = {rpc: f"{type(e).__name__}: {e}" for rpc, e in errors.items()
             if not isinstance(e, BackendDoesNotExistError) or "not registered" not in str(e)}
    assert wrong == {}
    assert isinstance(on_backend, NotAuthenticatedError), on_backend
    assert isinstance(other_id, PermissionDeniedError) and "for itself only" in str(other_id)
    assert stranger not in [b.id for b in admin_lm(cluster).get_backends()]


def test_a_reference_needs_read_access_to_the_object_it_names(cluster, mallory, victim):
    # setup: the victim's node, and what mallory could make reference it
    home = victim["backends"][0]
    address = backend_address(mallory, home)
    # run: a new object referencing it, a field assigned to it, a method result storing it
    stored = refused(lambda: _node_referencing(address, mallory.token, victim["node"], home))
    unknown = refused(lambda: _node_referencing(address, mallory.token, str(uuid.uuid4()), home))
    assigned = _as(cluster, MALLORY, MALLORY_PW, """
        import io, pickle
        from dataclay._internal.runtime.current import get_runtime
        from dataclay.exceptions import DataClayException
        n = Node(1); n.make_persistent(backend_id=sys.argv[2])

        class Ref: pass
        marker = Ref()

        class Pickler(pickle.Pickler):
            def persistent_id(self, obj):
                return ("dc", sys.argv[1], "people.model.Node", sys.argv[2]) if obj is marker else None

        buffer = io.BytesIO(); Pickler(buffer, protocol=5).dump(marker)
        ds = get_runtime().router.data_service(sys.argv[2])
        try:
            ds.set_field(n.getID(), "next", buffer.getvalue())
            print(json.dumps("assigned"))
        except DataClayException as e:
            print(json.dumps(type(e).__name__ + ": " + str(e)))
    """, victim["node"], home)
    # verify: refused alike (as not existing), and the victim's node is referenced by nothing of hers
    assert isinstance(stored, ObjectDoesNotExistError) and victim["node"] in str(stored), stored
    assert type(unknown) is type(stored)
    assert assigned.startswith("ObjectDoesNotExistError"), assigned


def _halted_backend_call(cluster, tmp_path, how: signal.Signals) -> dict:
    """A client makes a Counter on backend-2, then calls it after backend-2's Data Service got `how`."""
    flag = tmp_path / f"halted-{how.name}"
    proc = cluster.popen_client(textwrap.dedent("""
        import json, os, sys, time
        from dataclay import api
        api.init()
        from people.model import Counter
        from dataclay.exceptions import DataClayException
        backend = next(i for i, b in api.get_backends().items() if b.name == "backend-2")
        c = Counter(1); c.make_persistent(backend_id=backend)
        print(json.dumps({"backend": backend}), flush=True)
        deadline = time.monotonic() + 60
        while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            print(json.dumps({"value": c.get()}), flush=True)
        except DataClayException as e:
            print(json.dumps({"error": type(e).__name__, "message": str(e)}), flush=True)
    """), str(flag))
    pid = cluster.pids()["backend-2"]
    try:
        made = json.loads(proc.stdout.readline())
        os.kill(pid, how)
        flag.touch()
        out, err = proc.communicate(timeout=90)
    finally:
        if how == signal.SIGSTOP:
            os.kill(pid, signal.SIGCONT)
        proc.kill()
    result = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"stderr": err}
    return {"backend": made["backend"], **result}


@pytest.mark.parametrize("how", [signal.SIGSTOP, signal.SIGKILL])
def test_a_call_on_a_halted_backend_raises_backend_unavailable_naming_it(make_cluster, tmp_path, how):
    # setup
    cluster = make_cluster(backends=2)
    # run
    seen = _halted_backend_call(cluster, tmp_path, how)
    # verify
    assert seen.get("error") == "BackendUnavailableError", seen
    assert seen["backend"] in seen["message"], seen
