"""Sessions, permissions, malformed input and crafted payloads against a real cluster: every
bad request gets a clear error, changes nothing, and the servers keep serving."""
import json
import os
import pickle
import stat
import subprocess
import sys
import textwrap
import uuid

import pytest

from dataclay.exceptions import (
    InvalidArgumentError, NotAuthenticatedError, ObjectNotHereError, SerializationError)
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from harness.warm_clients import logic_module_calls_while_it_runs
from test_core_acceptance import PRELUDE, client


def admin_lm(cluster) -> LogicModuleClient:
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    return lm


def a_backend(lm) -> str:
    b = sorted(lm.get_backends(), key=lambda b: b.name)[0]
    return f"{b.host}:{b.port}"


def test_client_file_is_private_and_holds_a_random_password(cluster):
    path = cluster.home / "client.properties"
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600
    assert len(cluster.admin_password()) >= 24


def test_wrong_password_and_missing_or_bogus_tokens_are_refused(cluster):
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    with pytest.raises(NotAuthenticatedError):
        lm.new_session(cluster.admin_user(), "not-the-password", "")
    with pytest.raises(NotAuthenticatedError):
        lm.get_backends()
    lm.token = "bogus-token"
    with pytest.raises(NotAuthenticatedError):
        lm.get_backends()
    admin = admin_lm(cluster)
    ds = DataServiceClient(a_backend(admin), token=None)
    with pytest.raises(NotAuthenticatedError):
        ds.get_objects([str(uuid.uuid4())])
    ds.token = "bogus-token"
    with pytest.raises(NotAuthenticatedError):
        ds.call_method(str(uuid.uuid4()), "get", pickle.dumps(((), {})))
    assert admin.get_backends()


def test_malformed_requests_get_invalid_argument_and_servers_keep_serving(cluster):
    lm = admin_lm(cluster)
    ds = DataServiceClient(a_backend(lm), lm.token)
    with pytest.raises(InvalidArgumentError, match="id"):
        lm.get_object_info("not-a-uuid")
    with pytest.raises(InvalidArgumentError):
        lm.new_account("", "pw")
    with pytest.raises(InvalidArgumentError, match="object_id"):
        ds.call_method("not-a-uuid", "get", b"")
    with pytest.raises(InvalidArgumentError):
        ds.get_field(str(uuid.uuid4()), "")
    made = client(cluster, """
        c = Counter(7); c.make_persistent(alias="still-here")
        print(json.dumps({"value": c.increment()}))
    """)
    assert made == {"value": 8}


def test_unknown_object_on_a_backend_is_not_here(cluster):
    lm = admin_lm(cluster)
    ds = DataServiceClient(a_backend(lm), lm.token)
    with pytest.raises(ObjectNotHereError):
        ds.call_method(str(uuid.uuid4()), "get", pickle.dumps(((), {})))


class _Boom:
    """Unpickling this would run `touch <path>` in whoever decodes it."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_crafted_pickle_sent_to_a_backend_runs_no_code(cluster, tmp_path):
    # setup
    target = tmp_path / "pwned"
    made = client(cluster, """
        c = Counter(1); c.make_persistent()
        print(json.dumps({"id": c.getID(), "backend": c.get_location()}))
    """)
    lm = admin_lm(cluster)
    backend = next(b for b in lm.get_backends() if b.id == made["backend"])
    ds = DataServiceClient(f"{backend.host}:{backend.port}", lm.token)
    # run
    with pytest.raises(SerializationError):
        ds.call_method(made["id"], "increment", pickle.dumps(((_Boom(target),), {})))
    with pytest.raises(SerializationError):
        ds.set_field(made["id"], "value", pickle.dumps(_Boom(target)))
    # verify
    assert not target.exists()
    again = client(cluster, """
        print(json.dumps({"value": api.get_by_id(sys.argv[1]).get()}))
    """, made["id"])
    assert again == {"value": 1}


def test_globals_outside_the_default_list_are_refused_unless_the_deployment_allows_them(cluster):
    out = client(cluster, """
        import ipaddress
        from dataclay.exceptions import SerializationError
        c = Counter(0); c.make_persistent()
        try:
            c.value = ipaddress.ip_address("10.0.0.1")
            outcome = "accepted"
        except SerializationError as e:
            outcome = "refused"
        print(json.dumps({"outcome": outcome, "value": c.get()}))
    """)
    assert out == {"outcome": "refused", "value": 0}


def test_globals_pass_when_the_deployment_allows_them(make_cluster):
    allow = "ipaddress.IPv4Address"
    cluster = make_cluster(backends=1, extra_env={"DATACLAY_PICKLE_ALLOW": allow})
    out = client(cluster, """
        import ipaddress
        c = Counter(0); c.make_persistent()
        c.value = ipaddress.ip_address("10.0.0.1")
        print(json.dumps({"value": str(c.value)}))
    """)
    assert out == {"value": "10.0.0.1"}


def test_other_accounts_see_nothing_until_granted_a_data_contract(cluster):
    # setup: the administrator's object, and an ordinary account
    cluster.dataclaycmd("NewAccount", "bob", "bob-secret-password")
    made = client(cluster, """
        c = Counter(5); c.make_persistent(alias="admins")
        print(json.dumps({"id": c.getID()}))
    """)
    as_bob = PRELUDE.replace("api.init()", "api.init()  # as bob")
    body = textwrap.dedent("""
        from dataclay.exceptions import AliasDoesNotExistError, ObjectDoesNotExistError
        out = {}
        try:
            Counter.get_by_alias("admins")
            out["alias"] = "visible"
        except AliasDoesNotExistError:
            out["alias"] = "invisible"
        try:
            api.get_by_id(sys.argv[1]).get()
            out["by_id"] = "allowed"
        except ObjectDoesNotExistError:
            out["by_id"] = "as if it did not exist"
        print(json.dumps(out))
    """)
    bob_env = {"DATACLAY_USER": "bob", "DATACLAY_PASSWORD": "bob-secret-password"}
    # run
    before = _run_as(cluster, as_bob + body, bob_env, made["id"])
    cluster.dataclaycmd("NewDataContract", cluster.admin_user(), "-", cluster.admin_user(), "bob")
    after = _run_as(cluster, as_bob + body.replace('get_by_alias("admins")', 'get_by_alias("admins", dataset=sys.argv[2])'),
                    bob_env, made["id"], cluster.admin_user())
    # verify
    assert before == {"alias": "invisible", "by_id": "as if it did not exist"}
    assert after == {"alias": "visible", "by_id": "allowed"}


def _run_as(cluster, code, env, *args):
    saved = dict(cluster.env)
    cluster.env.update(env)
    try:
        result = cluster.run_client(code, *args)
    finally:
        cluster.env.clear()
        cluster.env.update(saved)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_warm_method_calls_make_no_logic_module_call(make_cluster):
    # setup: a warm client (object located, session validated by the backend), alone on its cluster
    cluster = make_cluster(backends=1)
    code = PRELUDE + textwrap.dedent("""
        c = Counter(0); c.make_persistent(alias="hot")
        c.increment()
        print("warm", flush=True)
        sys.stdin.readline()
        for _ in range(200):
            c.increment()
        print(json.dumps({"value": c.get()}), flush=True)
        sys.stdin.readline()  # stay until killed: exiting would close the session while we count
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], env=cluster.env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "warm"
        # run
        result, moved = logic_module_calls_while_it_runs(cluster, proc)
    finally:
        proc.kill()
        proc.wait()
    # verify: nothing moved at the LM but our own GetStats and the backends' heartbeats
    assert result == {"value": 201}
    assert moved == {}
