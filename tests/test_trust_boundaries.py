"""Issue 14's attacks, each performed against a real cluster by an account with no data contract
(mallory), or by an administrator reaching past what administrators may do. Each must fail with a
clear error and change nothing."""
import json
import os
import pathlib
import pickle
import stat
import subprocess
import textwrap
import time
import uuid

import grpc
import pytest

from dataclay.exceptions import (
    InvalidArgumentError, NotAuthenticatedError, ObjectDoesNotExistError, ObjectNotHereError, PermissionDeniedError)
from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds_pb2, dataservice_pb2_grpc
from dataclay._internal.proto import logicmodule_pb2 as lm_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from dataclay._internal.rpc.errors import error_from_rpc
from test_core_acceptance import PRELUDE, client

MALLORY, MALLORY_PW = "mallory", "mallory-password-1"
COUNTER = "people.model.Counter"
NODE = "people.model.Node"


@pytest.fixture(scope="module")
def mallory(cluster):
    """An account with no data contract, and a Logic Module client in her session."""
    cluster.dataclaycmd("NewAccount", MALLORY, MALLORY_PW)
    lm = logged_in(cluster, MALLORY, MALLORY_PW)
    yield lm
    lm.close()


@pytest.fixture(scope="module")
def victim(cluster):
    """The administrator's Counter (value 5) and Node (value 7), on the first backend."""
    made = client(cluster, """
        from people.model import Node
        b = sorted(api.get_backends(), key=lambda i: api.get_backends()[i].name)
        c = Counter(5); c.make_persistent(alias="victim-counter", backend_id=b[0])
        n = Node(7); n.make_persistent(alias="victim-node", backend_id=b[0])
        print(json.dumps({"counter": c.getID(), "node": n.getID(), "backends": b}))
    """)
    return made


def logged_in(cluster, user: str, password: str) -> LogicModuleClient:
    """A Logic Module client in a new session of `user`'s."""
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(user, password, "").token
    return lm


def admin_lm(cluster) -> LogicModuleClient:
    return logged_in(cluster, cluster.admin_user(), cluster.admin_password())


def new_reader(cluster, user: str, password: str) -> None:
    """Makes `user` an account with a read-only contract on the administrator's dataset."""
    cluster.dataclaycmd("NewAccount", user, password)
    cluster.dataclaycmd("NewDataContract", cluster.admin_user(), "-", cluster.admin_user(), user, "--read-only")


def backend_address(lm, backend_id: str) -> str:
    b = next(b for b in lm.get_backends() if b.id == backend_id)
    return f"{b.host}:{b.port}"


def victim_value(cluster) -> int:
    return client(cluster, """
        print(json.dumps(Counter.get_by_alias("victim-counter").get()))
    """)


def raw(address: str, token: str):
    """The generated stub with a session, for messages the client library would never send."""
    channel = grpc.insecure_channel(address)
    return dataservice_pb2_grpc.DataServiceStub(channel), (("dataclay-session", token),), channel


def refused(call) -> Exception:
    """Runs a raw gRPC call and returns the dataclay exception it failed with."""
    try:
        call()
    except grpc.RpcError as e:
        return error_from_rpc(e)
    raise AssertionError("the call was accepted")


def field(name: str, value, references=()) -> common_pb2.Field:
    return common_pb2.Field(name=name, value=pickle.dumps(value, protocol=5), references=list(references))


def test_a_client_cannot_forge_a_version_of_another_datasets_object(cluster, mallory, victim):
    # setup: an object claiming to be a version of the victim's counter
    forged = common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
        class_name=COUNTER, language=common_pb2.PYTHON, version_of=victim["counter"]),
        fields=[field("value", 666)])
    stub, metadata, channel = raw(backend_address(mallory, victim["backends"][0]), mallory.token)
    # run
    error = refused(lambda: stub.MakePersistent(ds_pb2.MakePersistentRequest(objects=[forged]), metadata=metadata))
    as_replica = common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
        class_name=COUNTER, language=common_pb2.PYTHON, master_backend_id=victim["backends"][1]),
        fields=[field("value", 666)])
    replica_error = refused(lambda: stub.MakePersistent(ds_pb2.MakePersistentRequest(objects=[as_replica]),
                                                        metadata=metadata))
    channel.close()
    # verify: refused, naming the header fields; nothing consolidated into the victim
    assert isinstance(error, InvalidArgumentError) and "version_of" in str(error)
    assert isinstance(replica_error, InvalidArgumentError) and "master_backend_id" in str(replica_error)
    ds = DataServiceClient(backend_address(mallory, victim["backends"][0]), mallory.token)
    with pytest.raises(ObjectNotHereError):  # as for an object this backend does not hold
        ds.consolidate_version(victim["counter"])
    assert victim_value(cluster) == 5


def test_a_version_consolidates_only_into_an_original_the_session_may_change(cluster, mallory, victim):
    # setup: mallory's own counter and a version of it; consolidating that one is hers to do
    mine = _as_mallory(cluster, """
        from dataclay.exceptions import NotAVersionError
        c = Counter(1); c.make_persistent()
        v = c.new_version(); v.increment(41); v.consolidate_version()
        try:
            c.consolidate_version()
            plain = "consolidated"
        except NotAVersionError:
            plain = "not a version"
        print(json.dumps({"value": c.get(), "plain": plain}))
    """)
    # run: a version of the victim's object cannot even be made (refused as if it were not there)
    ds = DataServiceClient(backend_address(mallory, victim["backends"][0]), mallory.token)
    with pytest.raises(ObjectNotHereError):
        ds.new_version(victim["counter"])
    # verify
    assert mine == {"value": 42, "plain": "not a version"}
    assert victim_value(cluster) == 5


def test_backend_only_rpcs_are_refused_to_users_and_administrators(cluster, mallory, victim):
    admin = admin_lm(cluster)
    address = backend_address(admin, victim["backends"][0])
    state = common_pb2.ObjectData(id=victim["counter"], header=common_pb2.ObjectHeader(
        class_name=COUNTER, language=common_pb2.PYTHON, dataset=cluster.admin_user()), fields=[field("value", 666)])
    delta = common_pb2.ObjectDelta(id=victim["counter"], changed_fields=[field("value", 666)])
    calls = {
        "StoreCopies": lambda s, m: s.StoreCopies(ds_pb2.StoreCopiesRequest(
            objects=[ds_pb2.CopiedObject(object=state)]), metadata=m),
        "ApplyDeltas": lambda s, m: s.ApplyDeltas(ds_pb2.ApplyDeltasRequest(deltas=[delta]), metadata=m),
        "DeleteObjects": lambda s, m: s.DeleteObjects(ds_pb2.DeleteObjectsRequest(
            object_ids=[victim["counter"]]), metadata=m),
        "BeginCollection": lambda s, m: s.BeginCollection(ds_pb2.CollectionRequest(collection_id=1), metadata=m),
        "EndCollection": lambda s, m: s.EndCollection(ds_pb2.CollectionRequest(collection_id=1), metadata=m),
        "GetReferences": lambda s, m: list(s.GetReferences(ds_pb2.CollectionRequest(collection_id=1), metadata=m)),
        "DeployModels": lambda s, m: s.DeployModels(lm_pb2.ModelList(), metadata=m),
        # were it accepted, the test models would be gone from this backend
        "RemoveModels": lambda s, m: s.RemoveModels(ds_pb2.RemoveModelsRequest(namespaces=["tests"],
                                                                               revision=2**40), metadata=m),
        "SessionsClosed": lambda s, m: s.SessionsClosed(ds_pb2.SessionsClosedRequest(forget_all=True), metadata=m),
        # a term that would fence every backend, and the victim's object made a master copy here
        "PromoteReplicas": lambda s, m: s.PromoteReplicas(ds_pb2.PromoteReplicasRequest(
            objects=[ds_pb2.PromotedObject(object_id=victim["counter"])],
            terms={b: 99 for b in victim["backends"]}), metadata=m),
    }
    wrong = []
    for who, token in (("mallory", mallory.token), ("the administrator", admin.token)):
        stub, metadata, channel = raw(address, token)
        for rpc, call in calls.items():
            error = refused(lambda: call(stub, metadata))
            expected = "Logic Module only" if rpc == "PromoteReplicas" else "backends only"
            if not isinstance(error, PermissionDeniedError) or expected not in str(error):
                wrong.append(f"{rpc} by {who}: {type(error).__name__}: {error}")
        channel.close()
    status_error = refused(lambda: raw(address, mallory.token)[0].GetStatus(
        common_pb2.Empty(), metadata=(("dataclay-session", mallory.token),)))
    assert wrong == []
    assert isinstance(status_error, PermissionDeniedError)
    assert DataServiceClient(address, admin.token).get_status().store.objects >= 2
    assert victim_value(cluster) == 5


def test_every_call_on_another_datasets_object_is_refused_as_if_it_did_not_exist(cluster, mallory, victim):
    ds = DataServiceClient(backend_address(mallory, victim["backends"][0]), mallory.token)
    other = victim["backends"][1]
    attempts = {
        "GetObjects": lambda: ds.get_objects([victim["counter"]]),
        "CallMethod": lambda: ds.call_method(victim["counter"], "increment", pickle.dumps(((100,), {}))),
        "GetField": lambda: ds.get_field(victim["counter"], "value"),
        "SetField": lambda: ds.set_field(victim["counter"], "value", pickle.dumps(100)),
        "NewReplica": lambda: ds.new_replica(victim["counter"], other),
        "NewVersion": lambda: ds.new_version(victim["counter"]),
        "Move": lambda: ds.move(victim["counter"], other),
    }
    # a backend answers as for an object it does not store, the Logic Module as for an unknown ID
    for rpc, attempt in attempts.items():
        with pytest.raises(ObjectNotHereError, match="is not on this backend|is not stored on this backend"):
            attempt()
    with pytest.raises(ObjectDoesNotExistError, match="does not exist"):
        mallory.get_object_info(victim["counter"])
    assert victim_value(cluster) == 5


def _node_referencing(address: str, token: str, referenced: str, hint: str) -> str:
    """Makes a Node whose `next` field names `referenced` (an ID the caller knows, nothing more)."""
    import io

    class Ref:
        pass

    marker = Ref()

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return ("dc", referenced, NODE, hint) if obj is marker else None

    buffer = io.BytesIO()
    Pickler(buffer, protocol=5).dump(marker)
    mine = str(uuid.uuid4())
    stub, metadata, channel = raw(address, token)
    stub.MakePersistent(ds_pb2.MakePersistentRequest(objects=[common_pb2.ObjectData(
        id=mine, header=common_pb2.ObjectHeader(class_name=NODE, language=common_pb2.PYTHON),
        fields=[field("value", 1), common_pb2.Field(name="next", value=buffer.getvalue(),
                                                    references=[referenced])])]), metadata=metadata)
    channel.close()
    return mine


def test_a_recursive_move_or_replica_stops_at_an_object_the_session_may_not_change(cluster, victim):
    # setup: the node of an account that may read the victim's (a reference needs that), referencing it
    new_reader(cluster, "copier", "copier-password-1")
    copier = logged_in(cluster, "copier", "copier-password-1")
    home, target = victim["backends"]
    mine = _node_referencing(backend_address(copier, home), copier.token, victim["node"], home)
    ds = DataServiceClient(backend_address(copier, home), copier.token)
    # run
    with pytest.raises(PermissionDeniedError):
        ds.move(mine, target, recursive=True)
    with pytest.raises(PermissionDeniedError):
        ds.new_replica(mine, target, recursive=True)
    # verify: the victim's node is where it was, with no replica
    info = admin_lm(cluster).get_object_info(victim["node"])
    assert info.master_backend_id == home
    assert list(info.replica_backend_ids) == []


def test_another_master_asked_to_copy_on_a_clients_behalf_checks_that_client(make_cluster, tmp_path):
    # setup: three backends; the victim's node on the first, mallory's node on the second referencing it
    # (she may read the victim's dataset: a reference needs that; copying needs more)
    cluster = make_cluster(backends=3)
    new_reader(cluster, MALLORY, MALLORY_PW)
    made = client(cluster, """
        from people.model import Node
        b = sorted(api.get_backends(), key=lambda i: api.get_backends()[i].name)
        n = Node(7); n.make_persistent(alias="victim-node", backend_id=b[0])
        print(json.dumps({"node": n.getID(), "backends": b}))
    """)
    first, second, third = made["backends"]
    lm = logged_in(cluster, MALLORY, MALLORY_PW)
    mine = _node_referencing(backend_address(lm, second), lm.token, made["node"], first)
    ds = DataServiceClient(backend_address(lm, second), lm.token)
    # run: the second backend asks the first (the victim's master) to copy its part to the third
    with pytest.raises(PermissionDeniedError):
        ds.new_replica(mine, third, recursive=True)
    with pytest.raises(PermissionDeniedError):
        ds.move(mine, third, recursive=True)
    # verify: refused before anything was copied, hers included
    admin = admin_lm(cluster)
    info = admin.get_object_info(made["node"])
    assert info.master_backend_id == first
    assert list(info.replica_backend_ids) == []
    assert lm.get_object_info(mine).master_backend_id == second


def test_registering_a_model_needs_an_administrator_or_a_granted_account(cluster, mallory, tmp_path):
    # setup: a harmless model
    package = tmp_path / "model" / "mtools"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tool.py").write_text("from dataclay import DataClayObject\n\nclass Tool(DataClayObject):\n"
                                     "    name: str\n")
    register = ["NewModel", MALLORY, MALLORY_PW, "mtools", str(tmp_path / "model"), "python"]
    admin = cluster.admin_user()
    # run
    before = cluster.dataclaycmd(*register, check=False)
    cluster.dataclaycmd("GrantModelRegistration", admin, "-", MALLORY)
    granted = cluster.dataclaycmd(*register, check=False)
    cluster.dataclaycmd("RevokeModelRegistration", admin, "-", MALLORY)
    after = cluster.dataclaycmd(*register, check=False)
    not_admin = cluster.dataclaycmd("GrantModelRegistration", MALLORY, MALLORY_PW, MALLORY, check=False)
    # verify
    assert before.returncode == 1 and "GrantModelRegistration" in before.stderr, before.stderr
    assert granted.returncode == 0, granted.stderr
    assert after.returncode == 1 and "mallory" in after.stderr, after.stderr
    assert not_admin.returncode == 1 and "administrator" in not_admin.stderr, not_admin.stderr


def test_model_code_and_servers_hold_no_password_token_or_key_in_their_environment(cluster):
    # setup: what registered model code sees of its process
    seen = client(cluster, """
        from people.model import Probe
        p = Probe(); p.make_persistent()
        print(json.dumps(p.environment()))
    """)
    password = cluster.admin_password()
    # verify: the execution environment
    leaks = {k: v for k, v in seen.items()
             if any(word in k.upper() for word in ("PASSWORD", "SECRET", "TOKEN", "KEY")) or password in v}
    assert leaks == {}
    assert "DATACLAY_USER" not in seen and "DATACLAY_HOME" not in seen
    # the servers: no password in any environment or command line; the secret file is private
    for name, pid in cluster.pids().items():
        environ = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
        assert not any(e.startswith(b"DATACLAY_PASSWORD=") for e in environ), name
        assert password.encode() not in b"\0".join(environ) + cmdline, name
    secret = cluster.home / "cluster.secret"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    assert secret.read_text().strip() not in (cluster.home / "client.properties").read_text()


def test_a_closed_session_is_refused_by_every_backend_within_a_second(cluster, mallory):
    # setup: a session that both backends have validated and cached
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    token = lm.new_session(MALLORY, MALLORY_PW, "").token
    lm.token = token
    clients = [DataServiceClient(f"{b.host}:{b.port}", token) for b in lm.get_backends()]
    ids = []
    for ds in clients:
        with pytest.raises(Exception):
            ds.get_objects([str(uuid.uuid4())])  # validates (and caches) the session there
    # run
    lm.close_session()
    closed_at = time.monotonic()
    refusals = []
    for ds in clients:
        while True:
            try:
                ds.get_objects([str(uuid.uuid4())])
            except NotAuthenticatedError:
                refusals.append(time.monotonic() - closed_at)
                break
            except Exception:
                if time.monotonic() - closed_at > 5:
                    raise AssertionError("the closed session is still accepted after 5 s")
                time.sleep(0.02)
    # verify
    assert len(refusals) == 2
    assert max(refusals) < 1.0, refusals


def test_repeated_failed_log_ins_lock_the_account_for_a_while(cluster):
    # setup
    cluster.dataclaycmd("NewAccount", "trudy", "trudy-password-1")
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    for _ in range(5):
        with pytest.raises(NotAuthenticatedError):
            lm.new_session("trudy", "guess-guess-guess", "")
    # run
    with pytest.raises(NotAuthenticatedError) as locked:
        lm.new_session("trudy", "trudy-password-1", "")
    # verify: the right password is refused too while the account cools down; others log in
    assert "too many failed attempts" in str(locked.value)
    assert lm.new_session(MALLORY, MALLORY_PW, "").token


def test_new_account_takes_its_password_from_standard_input_and_refuses_short_ones(cluster):
    # run
    made = subprocess.run([*_dataclaycmd(cluster), "NewAccount", "stdin-user", "-"], env=cluster.env,
                          input="typed-in-password\n", capture_output=True, text=True, timeout=60)
    short = subprocess.run([*_dataclaycmd(cluster), "NewAccount", "short-user", "-"], env=cluster.env,
                           input="tiny\n", capture_output=True, text=True, timeout=60)
    # verify
    assert made.returncode == 0, made.stderr
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    assert lm.new_session("stdin-user", "typed-in-password", "").username == "stdin-user"
    assert short.returncode == 1 and "at least 12" in short.stderr, short.stderr


def test_a_read_only_contract_lets_the_beneficiary_read_and_call_but_not_change(cluster, victim):
    # setup
    new_reader(cluster, "reader", "reader-password-1")
    # run
    seen = _as(cluster, "reader", "reader-password-1", """
        from dataclay.exceptions import PermissionDeniedError
        c = Counter.get_by_alias("victim-counter", dataset=sys.argv[1])
        out = {"get": c.get(), "field": c.value}
        for name, change in (("increment", lambda: c.increment(100)), ("assign", lambda: setattr(c, "value", 0))):
            try:
                change()
                out[name] = "applied"
            except PermissionDeniedError as e:
                out[name] = "refused: " + str(e)
        out["after"] = c.get()
        print(json.dumps(out))
    """, cluster.admin_user(), dataset=cluster.admin_user())
    # verify
    assert seen["get"] == 5 and seen["field"] == 5 and seen["after"] == 5
    assert seen["increment"].startswith("refused") and "read-only" in seen["increment"], seen
    assert seen["assign"].startswith("refused"), seen
    made = _as(cluster, "reader", "reader-password-1", """
        from dataclay.exceptions import PermissionDeniedError
        try:
            Counter(1).make_persistent()
            print(json.dumps("applied"))
        except PermissionDeniedError as e:
            print(json.dumps("refused: " + str(e)))
    """, dataset=cluster.admin_user())
    assert made.startswith("refused") and "read-only" in made
    assert victim_value(cluster) == 5


def test_a_revoked_contract_stops_a_running_client_within_a_second(cluster, victim):
    # setup: a client of the granted dataset reading in a loop
    cluster.dataclaycmd("NewAccount", "tenant", "tenant-password-1")
    cluster.dataclaycmd("NewDataContract", cluster.admin_user(), "-", cluster.admin_user(), "tenant")
    code = PRELUDE + textwrap.dedent("""
        import time
        from dataclay.exceptions import DataClayException
        c = Counter.get_by_alias("victim-counter", dataset=sys.argv[1])
        c.get()
        print("reading", flush=True)
        while True:
            try:
                c.get()
            except DataClayException as e:
                print(json.dumps({"refused_at": time.monotonic(), "error": type(e).__name__}), flush=True)
                break
            time.sleep(0.01)
    """)
    env = dict(cluster.env, DATACLAY_USER="tenant", DATACLAY_PASSWORD="tenant-password-1")
    proc = subprocess.Popen([os.sys.executable, "-c", code, cluster.admin_user()], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "reading", proc.stderr.read()
        # run
        cluster.dataclaycmd("RevokeDataContract", cluster.admin_user(), "-", cluster.admin_user(), "tenant")
        revoked_at = time.monotonic()
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    # verify
    seen = json.loads(out.strip().splitlines()[-1])
    # an object of a dataset no longer granted looks like one that does not exist (no ID oracle)
    assert seen["error"] in ("ObjectDoesNotExistError", "NotAuthenticatedError"), seen
    assert seen["refused_at"] - revoked_at < 1.0, seen


def test_a_contract_with_an_expiry_date_ends_by_itself(cluster, victim):
    # setup: a contract ending three seconds from now
    cluster.dataclaycmd("NewAccount", "visitor", "visitor-password-1")
    end = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(time.time() + 3))
    cluster.dataclaycmd("NewDataContract", cluster.admin_user(), "-", cluster.admin_user(), "visitor",
                        "--expires", end)
    body = """
        from dataclay.exceptions import DataClayException
        try:
            print(json.dumps(Counter.get_by_alias("victim-counter", dataset=sys.argv[1]).get()))
        except DataClayException as e:
            print(json.dumps(type(e).__name__))
    """
    # run
    before = _as(cluster, "visitor", "visitor-password-1", body, cluster.admin_user())
    time.sleep(4)
    after = _as(cluster, "visitor", "visitor-password-1", body, cluster.admin_user())
    # verify
    assert before == 5
    assert after in ("PermissionDeniedError", "AliasDoesNotExistError"), after


def _as(cluster, user, password, body, *args, dataset=""):
    env = dict(cluster.env, DATACLAY_USER=user, DATACLAY_PASSWORD=password, DATACLAY_DATASET=dataset)
    result = subprocess.run([os.sys.executable, "-c", PRELUDE + textwrap.dedent(body), *args], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def _as_mallory(cluster, body):
    return _as(cluster, MALLORY, MALLORY_PW, body)


def _dataclaycmd(cluster):
    from harness.cluster import _command
    return [_command("dataclaycmd")]


def test_a_malformed_request_is_invalid_argument_with_one_warning_line_and_servers_go_on(cluster, mallory):
    # setup
    address = backend_address(mallory, sorted(b.id for b in mallory.get_backends())[0])
    calls = [(grpc.insecure_channel(address), "/dataclay.v1.DataService/CallMethod"),
             (grpc.insecure_channel(f"127.0.0.1:{cluster.port}"), "/dataclay.v1.LogicModule/NewSession"),
             (grpc.insecure_channel(address), "/dataclay.v1.Liveness/Ping")]
    before = cluster.logs().count("refused a malformed")
    # run
    codes = []
    for channel, method in calls:
        raw_call = channel.unary_unary(method, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        try:
            raw_call(b"\xff\xff\xff\xff\x0f\x01garbage", metadata=(("dataclay-session", mallory.token),))
        except grpc.RpcError as e:
            codes.append((e.code(), e.details()))
        channel.close()
    # verify: typed errors, one line each in the logs, no stack trace, and the next good call is answered
    assert [c for c, _ in codes] == [grpc.StatusCode.INVALID_ARGUMENT] * 3, codes
    assert all("not a valid protobuf message" in d for _, d in codes), codes
    logs = cluster.logs()
    assert logs.count("refused a malformed") - before == 3
    assert "InvalidProtocolBufferException" not in logs and "SEVERE io.grpc" not in logs
    assert mallory.get_backends()


def test_a_request_over_the_message_size_limit_is_refused_clearly_and_nothing_is_stored(make_cluster):
    # setup: a cluster that takes messages of at most 2 MiB
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_MAX_MESSAGE_SIZE": "2M"})
    # run
    seen = client(cluster, """
        from dataclay.exceptions import InvalidArgumentError
        c = Counter(0)
        c.value = b"x" * (3 << 20)
        try:
            c.make_persistent(alias="too-big")
            out = {"error": None}
        except InvalidArgumentError as e:
            out = {"error": str(e)}
        small = Counter(1); small.make_persistent(alias="small")
        out["small"] = Counter.get_by_alias("small").get()
        print(json.dumps(out))
    """)
    # verify
    assert "DATACLAY_MAX_MESSAGE_SIZE" in seen["error"], seen
    assert seen["small"] == 1


JAVA_BOX = """
package probe;

import io.dataclay.api.DataClayObject;

/** A Java model whose method takes a byte array: its arguments are decoded by the backend. */
public class Box extends DataClayObject {
  private int calls;

  public Box() {}

  public int size(byte[] data) {
    calls++;
    return data.length;
  }
}
"""


def _rss_kib(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_java_arguments_claiming_more_than_they_carry_are_refused_before_allocation(cluster, mallory, tmp_path):
    # setup: a Java model compiled here and registered; an object of it stored by mallory
    source = tmp_path / "src" / "probe"
    source.mkdir(parents=True)
    (source / "Box.java").write_text(JAVA_BOX)
    classes = tmp_path / "classes"
    jar = pathlib.Path(__file__).resolve().parents[1] / "pyclay/dataclay/_internal/jars/dataservice.jar"
    subprocess.run(["javac", "-d", str(classes), "-cp", str(jar), str(source / "Box.java")], check=True, timeout=120)
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "probe", str(classes), "java")
    backends = {b.name: b for b in mallory.get_backends()}
    b = backends["backend-1"]
    box = str(uuid.uuid4())
    stub, metadata, channel = raw(f"{b.host}:{b.port}", mallory.token)
    stub.MakePersistent(ds_pb2.MakePersistentRequest(objects=[common_pb2.ObjectData(
        id=box, header=common_pb2.ObjectHeader(class_name="probe.Box", language=common_pb2.JAVA))]), metadata=metadata)
    # the Kryo encoding of the arguments Object[]{byte[]}: 16 01 02 (an Object[] of one), then the
    # byte[]: 17 01, its length + 1 as a varint, its bytes
    gigabyte_claim = bytes.fromhex("1601021701") + bytes([0x81, 0x80, 0x80, 0x80, 0x04])  # 10 bytes, 2^30 claimed
    elements_claim = bytes.fromhex("1601ffffffff07")  # an Object[] claiming 2^31 - 2 elements
    pid = cluster.pids()["backend-1"]
    rss_before = _rss_kib(pid)
    # run
    errors = []
    for payload in (gigabyte_claim, elements_claim):
        errors.append(refused(lambda: stub.CallMethod(ds_pb2.CallMethodRequest(
            object_id=box, method="size", args=payload), metadata=metadata)))
    answer = stub.CallMethod(ds_pb2.CallMethodRequest(object_id=box, method="size",
                                                      args=bytes.fromhex("160102170104010203")), metadata=metadata)
    channel.close()
    # verify: refused as serialisation errors naming the claim; no gigabyte allocated; still serving
    from dataclay.exceptions import SerializationError
    assert all(isinstance(e, SerializationError) and "claims" in str(e) for e in errors), errors
    assert _rss_kib(pid) - rss_before < 200 * 1024
    assert answer.result  # the encoded int 3


def test_a_model_over_the_size_quota_is_refused_and_not_stored(cluster, tmp_path):
    # setup: an administrator's model whose files hold 18 MiB in all (the quota is 16 MiB)
    package = tmp_path / "model" / "bloated"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "big.py").write_text("from dataclay import DataClayObject\n\nBLOB = '" + "x" * (9 << 20) + "'\n\n"
                                    "class Big(DataClayObject):\n    name: str\n")
    (package / "more.py").write_text("BLOB = '" + "y" * (9 << 20) + "'\n")  # each file passes the CLI's own check
    # run
    result = cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "bloated", str(tmp_path / "model"), "python",
                                 check=False)
    stubs = cluster.dataclaycmd("GetStubs", cluster.admin_user(), "-", "bloated", str(tmp_path / "stubs"),
                                check=False)
    # verify
    assert result.returncode == 1 and "DATACLAY_MODEL_MAX_BYTES" in result.stderr, result.stderr
    assert stubs.returncode == 1 and "bloated" in stubs.stderr
