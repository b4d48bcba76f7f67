"""Who may use, read and remove model code (issue 21): an account's model is its own until it or an
administrator publishes it; revoking an account's right to register models withdraws its code from
every backend; RemoveModel removes a model and its code. Each rule is tried by the account it must
stop, through the public protocol and `dataclaycmd`, on a real cluster of four accounts."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from dataclay.exceptions import ClassNotRegisteredError
from dataclay._internal.rpc import LogicModuleClient
from harness.waiting import wait_until

OWNER, OWNER_PW = "olga", "olga-password-123"
PLAIN, PLAIN_PW = "pete", "pete-password-123"
READER, READER_PW = "rita", "rita-password-123"

GADGET = """
    from dataclay import DataClayObject, activemethod

    class Gadget(DataClayObject):
        value: int

        def __init__(self, value: int = 0):
            self.value = value

        @activemethod
        def get(self) -> int:
            return self.value

        @activemethod
        def bump(self) -> int:
            self.value += 1
            return self.value
"""

# A published model whose method makes objects of another (unpublished) model's class.
MAKER = """
    import importlib
    from dataclay import DataClayObject, activemethod

    class Maker(DataClayObject):
        made: list

        def __init__(self):
            self.made = []

        @activemethod
        def make(self, module: str, value: int) -> int:
            self.made.append(importlib.import_module(module).Gadget(value))
            return len(self.made)

        @activemethod
        def count(self) -> int:
            return len(self.made)
"""

# Runs as a client of the cluster: makes, gets and calls objects of a class named on the command
# line; prints one JSON line. Errors come back as {"error": type, "message": text}.
CLIENT = textwrap.dedent("""
    import importlib, json, sys
    from dataclay import api
    api.init()

    def attempt(work):
        try:
            return {"ok": work()}
        except Exception as e:
            return {"error": type(e).__name__, "message": str(e)}
""")


@pytest.fixture(scope="module")
def accounts(cluster):
    """The owner (allowed to register models), a plain account and a reader with a read-only
    contract on the owner's dataset; the plain account lets the owner write into its dataset."""
    admin = cluster.admin_user()
    for user, password in ((OWNER, OWNER_PW), (PLAIN, PLAIN_PW), (READER, READER_PW)):
        cluster.dataclaycmd("NewAccount", user, password)
    cluster.dataclaycmd("GrantModelRegistration", admin, "-", OWNER)
    cluster.dataclaycmd("NewDataContract", OWNER, OWNER_PW, OWNER, READER, "--read-only")
    cluster.dataclaycmd("NewDataContract", PLAIN, PLAIN_PW, PLAIN, OWNER)
    return cluster


def _gadget_model(root, package: str) -> str:
    """Writes package `package` (module gadget.py, class Gadget) under `root`; returns the module's name."""
    (root / package).mkdir(parents=True)
    (root / package / "__init__.py").write_text("")
    (root / package / "gadget.py").write_text(textwrap.dedent(GADGET))
    return f"{package}.gadget"


def _register(cluster, user, password, namespace, root, check=True):
    return cluster.dataclaycmd("NewModel", user, password, namespace, str(root), "python", check=check)


def _as(cluster, user, password, root, body, *args, dataset=""):
    """Runs `body` after CLIENT as `user` (with the models under `root` importable); its JSON line."""
    env = dict(cluster.env, DATACLAY_USER=user, DATACLAY_PASSWORD=password, DATACLAY_DATASET=dataset,
               PYTHONPATH=os.pathsep.join([str(root), cluster.env["PYTHONPATH"]]))
    result = subprocess.run([sys.executable, "-c", CLIENT + textwrap.dedent(body), *args], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


MAKE = """
    module, value = sys.argv[1], int(sys.argv[2])
    def make():
        g = importlib.import_module(module).Gadget(value)
        g.make_persistent()
        return g.getID()
    print(json.dumps(attempt(make)))
"""

USE = """
    module, oid = sys.argv[1], sys.argv[2]
    cls = importlib.import_module(module).Gadget
    def field():
        return cls.get_by_id(oid).value
    def set_field():
        cls.get_by_id(oid).value = 99
        return True
    print(json.dumps({"call": attempt(lambda: cls.get_by_id(oid).get()), "field": attempt(field),
                      "set": attempt(set_field)}))
"""


def _lm(cluster, user, password) -> LogicModuleClient:
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(user, password, "").token
    return lm


def _model_files(cluster, package: str, backend: str = "") -> list:
    """Every file (sources and compiled forms) of `package` in the backends' model directories (or one's)."""
    found = []
    for directory in sorted((cluster.home / "backends").iterdir()):
        if backend in ("", directory.name):
            found += [str(p) for p in (directory / "models" / "python" / package).rglob("*") if p.is_file()]
    return found


def _eventually(check, timeout: float = 30.0):
    """`check()` once it is truthy, or its last value after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def test_an_unpublished_model_is_the_owners_until_published_and_again_once_unpublished(accounts, tmp_path):
    # setup: olga's model, unpublished; one of her objects, and one she planted in pete's dataset
    cluster = accounts
    package = f"gadgets_{uuid.uuid4().hex[:8]}"
    module = _gadget_model(tmp_path, package)
    _register(cluster, OWNER, OWNER_PW, package, tmp_path)
    own = _as(cluster, OWNER, OWNER_PW, tmp_path, MAKE, module, "5")["ok"]
    planted = _as(cluster, OWNER, OWNER_PW, tmp_path, MAKE, module, "6", dataset=PLAIN)["ok"]
    admin_made = _as(cluster, cluster.admin_user(), cluster.admin_password(), tmp_path, MAKE, module, "8")
    # run: pete and rita try to use it, read it and get its stubs
    made = _as(cluster, PLAIN, PLAIN_PW, tmp_path, MAKE, module, "7")
    on_planted = _as(cluster, PLAIN, PLAIN_PW, tmp_path, USE, module, planted)
    by_reader = _as(cluster, READER, READER_PW, tmp_path, USE, module, own)
    by_owner = _as(cluster, OWNER, OWNER_PW, tmp_path, USE, module, planted)
    listed = cluster.dataclaycmd("ListModels", PLAIN, PLAIN_PW, "--json")
    stubs = cluster.dataclaycmd("GetStubs", PLAIN, PLAIN_PW, package, str(tmp_path / "stubs"), check=False)
    no_such = cluster.dataclaycmd("GetStubs", PLAIN, PLAIN_PW, "nosuchmodel", str(tmp_path / "stubs"), check=False)
    pete = _lm(cluster, PLAIN, PLAIN_PW)
    with pytest.raises(ClassNotRegisteredError):
        pete.get_model(package)
    # verify: refused, saying whose model it is and what to do; unreadable exactly like a missing one
    assert "ok" in admin_made, admin_made
    assert made["error"] == "PermissionDeniedError", made
    assert package in made["message"] and OWNER in made["message"] and "PublishModel" in made["message"], made
    for what in ("call", "field", "set"):
        assert on_planted[what]["error"] == "PermissionDeniedError", on_planted
        assert by_reader[what]["error"] == "PermissionDeniedError", by_reader
    assert by_owner["call"] == {"ok": 6}, by_owner
    assert package not in [m["namespace"] for m in json.loads(listed.stdout)]
    assert stubs.returncode == 1 and no_such.returncode == 1
    assert stubs.stderr.replace(package, "X") == no_such.stderr.replace("nosuchmodel", "X")
    assert not (tmp_path / "stubs").exists()

    # run: olga publishes it
    published = cluster.dataclaycmd("PublishModel", OWNER, OWNER_PW, package)
    made_after = _as(cluster, PLAIN, PLAIN_PW, tmp_path, MAKE, module, "7")
    planted_after = _as(cluster, PLAIN, PLAIN_PW, tmp_path, USE, module, planted)
    listed_after = json.loads(cluster.dataclaycmd("ListModels", PLAIN, PLAIN_PW, "--json").stdout)
    stubs_after = cluster.dataclaycmd("GetStubs", PLAIN, PLAIN_PW, package, str(tmp_path / "stubs"))
    # verify: every account may use it now
    assert "published" in published.stdout
    assert "ok" in made_after, made_after
    assert planted_after["call"] == {"ok": 99} and planted_after["set"] == {"ok": True}, planted_after  # olga set 99
    assert {"namespace": package, "owner": OWNER, "published": True, "withdrawn": False}.items() <= next(
        m for m in listed_after if m["namespace"] == package).items()
    assert (tmp_path / "stubs" / package / "gadget.py").exists(), stubs_after.stdout

    # run: olga takes publication back
    cluster.dataclaycmd("UnpublishModel", OWNER, OWNER_PW, package)
    made_again = _as(cluster, PLAIN, PLAIN_PW, tmp_path, MAKE, module, "7")
    own_again = _as(cluster, PLAIN, PLAIN_PW, tmp_path, USE, module, made_after["ok"])
    # verify: refused again, also on the object pete made while it was published
    assert made_again["error"] == "PermissionDeniedError", made_again
    assert own_again["call"]["error"] == "PermissionDeniedError", own_again
    pete.close()


def test_a_method_cannot_make_objects_of_a_class_its_caller_may_not_use(accounts, tmp_path):
    # setup: olga's published factory, whose method makes objects of her unpublished gadgets
    cluster = accounts
    suffix = uuid.uuid4().hex[:8]
    module = _gadget_model(tmp_path / "g", f"gadgets_{suffix}")
    factory = f"factory_{suffix}"
    (tmp_path / "f" / factory).mkdir(parents=True)
    (tmp_path / "f" / factory / "__init__.py").write_text("")
    (tmp_path / "f" / factory / "maker.py").write_text(textwrap.dedent(MAKER))
    _register(cluster, OWNER, OWNER_PW, f"gadgets_{suffix}", tmp_path / "g")
    _register(cluster, OWNER, OWNER_PW, factory, tmp_path / "f")
    cluster.dataclaycmd("PublishModel", OWNER, OWNER_PW, factory)
    body = """
        from importlib import import_module
        maker_module, gadgets = sys.argv[1], sys.argv[2]
        m = import_module(maker_module).Maker()
        m.make_persistent()
        print(json.dumps({"make": attempt(lambda: m.make(gadgets, 3)), "count": m.count()}))
    """
    # run
    by_plain = _as(cluster, PLAIN, PLAIN_PW, tmp_path / "f", body, f"{factory}.maker", module)
    by_owner = _as(cluster, OWNER, OWNER_PW, tmp_path / "f", body, f"{factory}.maker", module)
    # verify: pete's call fails whole (nothing of it stored): the code of a model he may not use is not
    # even in his environment process (each account's gets only its usable models), and a backend
    # would refuse the object anyway; olga's call makes the object
    assert by_plain["make"]["error"] in ("RemoteError", "ModuleNotFoundError", "PermissionDeniedError"), by_plain
    assert f"gadgets_{suffix}" in by_plain["make"]["message"], by_plain
    assert by_plain["count"] == 0
    assert by_owner == {"make": {"ok": 1}, "count": 1}


def test_revoking_registration_withdraws_the_code_from_every_backend_and_granting_restores_it(accounts, tmp_path):
    # setup: another modeller's published model, used on both backends (so both environments loaded it)
    cluster = accounts
    admin = cluster.admin_user()
    modeller, password = f"mo{uuid.uuid4().hex[:6]}", "modeller-password-1"
    cluster.dataclaycmd("NewAccount", modeller, password)
    cluster.dataclaycmd("GrantModelRegistration", admin, "-", modeller)
    package = f"gadgets_{uuid.uuid4().hex[:8]}"
    module = _gadget_model(tmp_path, package)
    _register(cluster, modeller, password, package, tmp_path)
    cluster.dataclaycmd("PublishModel", modeller, password, package)
    made = _as(cluster, modeller, password, tmp_path, """
        module = sys.argv[1]
        ids = []
        for b in sorted(api.get_backends()):
            g = importlib.import_module(module).Gadget(1)
            g.make_persistent(backend_id=b)
            g.get()
            ids.append(g.getID())
        print(json.dumps(ids))
    """, module)
    files_before = _model_files(cluster, package)
    ee_before = {b: cluster.ee_pid(b) for b in ("backend-1", "backend-2")}
    # run
    cluster.dataclaycmd("RevokeModelRegistration", admin, "-", modeller)
    by_owner = [_as(cluster, modeller, password, tmp_path, USE, module, oid) for oid in made]
    by_plain = _as(cluster, PLAIN, PLAIN_PW, tmp_path, MAKE, module, "2")
    files_after = _model_files(cluster, package)
    ee_after = {b: _ee_pid_other_than(cluster, b, ee_before[b]) for b in ee_before}
    listed = json.loads(cluster.dataclaycmd("ListModels", modeller, password, "--json").stdout)
    cluster.dataclaycmd("GrantModelRegistration", admin, "-", modeller)
    restored = [_as(cluster, modeller, password, tmp_path, USE, module, oid) for oid in made]
    # verify: refused to everyone saying why; the code is gone and the environments that had it restarted
    assert len(files_before) >= 2, files_before
    for seen in by_owner:
        assert seen["call"]["error"] == "ClassNotRegisteredError", seen
        assert "revoked" in seen["call"]["message"] and "GrantModelRegistration" in seen["call"]["message"], seen
    assert by_plain["error"] == "ClassNotRegisteredError", by_plain
    assert files_after == []
    assert all(ee_after[b] != ee_before[b] for b in ee_before), (ee_before, ee_after)
    assert next(m for m in listed if m["namespace"] == package)["withdrawn"] is True
    assert [r["call"] for r in restored] == [{"ok": 1}, {"ok": 1}], restored
    assert len(_model_files(cluster, package)) >= 2


def _ee_pid_other_than(cluster, backend: str, old: int, timeout: float = 30.0) -> int:
    """The pid of the backend's execution environment once it is not `old` (`old` after the timeout)."""
    def changed() -> int:
        pid = cluster.ee_pid(backend)  # LookupError between two processes
        return pid if pid != old else 0
    return wait_until(changed, timeout, f"a new execution environment of {backend} (not pid {old})", interval=0.1,
                      ignoring=(LookupError,))


def test_remove_model_is_refused_while_objects_exist_and_forced_removal_frees_the_namespace(accounts, tmp_path):
    # setup: three of olga's objects
    cluster = accounts
    package = f"gadgets_{uuid.uuid4().hex[:8]}"
    module = _gadget_model(tmp_path, package)
    _register(cluster, OWNER, OWNER_PW, package, tmp_path)
    ids = [_as(cluster, OWNER, OWNER_PW, tmp_path, MAKE, module, str(v))["ok"] for v in (1, 2, 3)]
    # run
    by_stranger = cluster.dataclaycmd("RemoveModel", PLAIN, PLAIN_PW, package, "--force", check=False)
    refused = cluster.dataclaycmd("RemoveModel", OWNER, OWNER_PW, package, check=False)
    still = _as(cluster, OWNER, OWNER_PW, tmp_path, USE, module, ids[0])
    cluster.dataclaycmd("PublishModel", OWNER, OWNER_PW, package)
    by_user = cluster.dataclaycmd("RemoveModel", PLAIN, PLAIN_PW, package, "--force", check=False)
    forced = cluster.dataclaycmd("RemoveModel", OWNER, OWNER_PW, package, "--force")
    after = _as(cluster, OWNER, OWNER_PW, tmp_path, USE, module, ids[0])
    listed = json.loads(cluster.dataclaycmd("ListModels", cluster.admin_user(), "-", "--json").stdout)
    files = _model_files(cluster, package)
    reused = _register(cluster, cluster.admin_user(), "-", package, tmp_path)
    usable_again = _as(cluster, PLAIN, PLAIN_PW, tmp_path, MAKE, module, "4")
    # verify
    assert by_stranger.returncode == 1 and "no model is registered under" in by_stranger.stderr, by_stranger.stderr
    assert refused.returncode == 1, refused.stderr
    assert "3 object(s)" in refused.stderr and "--force" in refused.stderr, refused.stderr
    assert still["call"] == {"ok": 1}, still
    assert by_user.returncode == 1 and "only the owner" in by_user.stderr, by_user.stderr
    assert "3 object(s) of its classes stay" in forced.stdout, forced.stdout
    assert after["call"]["error"] == "ClassNotRegisteredError", after
    assert package not in [m["namespace"] for m in listed]
    assert files == []
    assert "registered namespace" in reused.stdout
    assert "ok" in usable_again, usable_again


def test_hostile_or_malformed_model_commands_are_refused_clearly_and_change_nothing(accounts, tmp_path):
    # setup: olga's unpublished model; the administrator's published test models
    cluster = accounts
    package = f"gadgets_{uuid.uuid4().hex[:8]}"
    _gadget_model(tmp_path, package)
    _register(cluster, OWNER, OWNER_PW, package, tmp_path)
    # run
    outcomes = {
        "publish someone's hidden model": cluster.dataclaycmd("PublishModel", PLAIN, PLAIN_PW, package, check=False),
        "unpublish the administrator's": cluster.dataclaycmd("UnpublishModel", PLAIN, PLAIN_PW, "tests", check=False),
        "remove the administrator's": cluster.dataclaycmd("RemoveModel", READER, READER_PW, "tests", "--force",
                                                          check=False),
        "malformed namespace": cluster.dataclaycmd("PublishModel", OWNER, OWNER_PW, "bad name!", check=False),
        "unknown option": cluster.dataclaycmd("RemoveModel", OWNER, OWNER_PW, package, "--forse", check=False),
        "missing argument": cluster.dataclaycmd("PublishModel", OWNER, OWNER_PW, check=False),
        "unknown list option": cluster.dataclaycmd("ListModels", OWNER, OWNER_PW, "--yaml", check=False),
    }
    # verify: each refused with what went wrong; the models are as they were
    expected = {
        "publish someone's hidden model": (1, "no model is registered under"),
        "unpublish the administrator's": (1, "only the owner"),
        "remove the administrator's": (1, "only the owner"),
        "malformed namespace": (1, "namespace: must be 1-64 letters"),
        "unknown option": (2, "--force"),
        "missing argument": (2, "PublishModel takes 3 arguments"),
        "unknown list option": (2, "--json"),
    }
    wrong = {what: (r.returncode, r.stderr.splitlines()[:1]) for what, r in outcomes.items()
             if r.returncode != expected[what][0] or expected[what][1] not in r.stderr}
    assert wrong == {}
    models = {m["namespace"]: m for m in json.loads(cluster.dataclaycmd("ListModels", cluster.admin_user(), "-",
                                                                       "--json").stdout)}
    assert models["tests"]["published"] is True
    assert models[package]["published"] is False


MAKE_ON = """
    module, backend_name = sys.argv[1], sys.argv[2]
    backend = next(b for b, info in api.get_backends().items() if info.name == backend_name)
    def make():
        g = importlib.import_module(module).Gadget(1)
        g.make_persistent(backend_id=backend)
        return g.get()
    print(json.dumps(attempt(make)))
"""


def test_a_backend_that_missed_a_withdrawal_or_a_removal_applies_it_once_it_is_back(make_cluster, tmp_path):
    # setup: a modeller's model and an administrator's, installed on both backends
    cluster = make_cluster()
    admin = cluster.admin_user()
    cluster.dataclaycmd("NewAccount", OWNER, OWNER_PW)
    cluster.dataclaycmd("GrantModelRegistration", admin, "-", OWNER)
    withdrawn, removed = "gadgets_missed_w", "gadgets_missed_r"
    module = _gadget_model(tmp_path / "w", withdrawn)
    _gadget_model(tmp_path / "r", removed)
    _register(cluster, OWNER, OWNER_PW, withdrawn, tmp_path / "w")
    _register(cluster, admin, "-", removed, tmp_path / "r")
    lm = _lm(cluster, admin, cluster.admin_password())
    frozen = cluster.pids()["backend-1"]
    # run: backend-1 is unreachable (stopped) while the owner's right is revoked
    os.kill(frozen, signal.SIGSTOP)
    try:
        unreachable = _eventually(lambda: not next(b for b in lm.get_backends() if b.name == "backend-1").alive)
        cluster.dataclaycmd("RevokeModelRegistration", admin, "-", OWNER)
        kept_while_frozen = _model_files(cluster, withdrawn, "backend-1")
    finally:
        os.kill(frozen, signal.SIGCONT)
    caught_up = _eventually(lambda: _model_files(cluster, withdrawn, "backend-1") == [])
    refused = _as(cluster, OWNER, OWNER_PW, tmp_path / "w", MAKE_ON, module, "backend-1")
    # run: backend-2 is down while the administrator's model is removed, then starts again
    cluster.kill("backend-2")
    cluster.dataclaycmd("RemoveModel", admin, "-", removed)
    kept_while_down = _model_files(cluster, removed, "backend-2")
    cluster.start()
    cleaned_at_start = _eventually(lambda: _model_files(cluster, removed) == [])  # start returns once registered
    lm.close()
    # verify: each applies what it missed (a heartbeat, a start) and keeps no copy of the code
    assert unreachable
    assert kept_while_frozen, "the revocation reached the stopped backend: nothing was missed"
    assert caught_up, _model_files(cluster, withdrawn, "backend-1")
    assert refused["error"] == "ClassNotRegisteredError" and "revoked" in refused["message"], refused
    assert kept_while_down, "the removal reached the backend that was down: nothing was missed"
    assert cleaned_at_start, _model_files(cluster, removed)
