"""What the fuzzer prepares on a running cluster before it sends anything: accounts, a Java model,
objects for the fuzzed messages to aim at (per owner and backend: "fodder"), objects only the
oracle uses ("sentinels", whose IDs the fuzzer never sees), secrets of the administrator's
dataset that no other identity may read, and a plain user's probe per backend: an object of a
hostile model (tests/hostile_models) whose methods try, from inside their execution environment,
to read the cluster's secrets and reach its ports. Setup goes through the ordinary clients from 127.0.0.1."""
from __future__ import annotations

import dataclasses
import pathlib
import pickle
import subprocess
import tempfile
import uuid

from dataclay._internal.proto import common_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

from fuzz.identities import LOGIN, LOGIN_PASSWORD, USER, USER_PASSWORD
from fuzz.payloads import kryo_args, kryo_string

JAVA_SOURCE = pathlib.Path(__file__).with_name("java") / "fuzzjava" / "Vault.java"
HOSTILE = pathlib.Path(__file__).resolve().parents[1] / "hostile_models"
PROBE = "hostile.probes.Probe"
JARS = pathlib.Path(__file__).resolve().parents[2] / "pyclay" / "dataclay" / "_internal" / "jars"
COUNTER, PERSON, NODE, VAULT = "people.model.Counter", "people.model.Person", "people.model.Node", "fuzzjava.Vault"
SENTINEL_VALUE = 41
SECRET_NAME, SECRET_VAULT = "TOP-SECRET-PERSON-NAME", "TOP-SECRET-VAULT-TEXT"
JAVA_PROBE_ARGS = bytes.fromhex("160102170104010203")   # Object[]{byte[]{1, 2, 3}}
JAVA_PROBE_ANSWER = bytes.fromhex("0206")               # the int 3


@dataclasses.dataclass
class Backend:
    """A real backend of the cluster."""
    id: str
    name: str
    address: str


@dataclasses.dataclass
class World:
    """Everything the seeds, the corpus and the oracle refer to."""
    lm_address: str
    backends: list[Backend]
    admin: tuple[str, str]
    fodder: dict[str, dict[str, list[str]]]      # owner -> kind -> one object ID per backend
    sentinels: dict[str, dict[str, str]]         # backend ID -> kind -> object ID
    secret_person: str                           # a Person of the administrator's dataset, on backends[0]
    secret_vault: str                            # a Vault of the administrator's dataset, on backends[0]
    probes: dict[str, str]                       # backend ID -> the user's Probe there
    marker: pathlib.Path                         # created only if a crafted payload ran code

    def backend(self, object_owner: str, kind: str, index: int) -> tuple[Backend, str]:
        """The backend and ID of an owner's fodder object of `kind` on backend `index`."""
        return self.backends[index], self.fodder[object_owner][kind][index]


def _python_object(class_name: str, **fields) -> common_pb2.ObjectData:
    return common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
        class_name=class_name, language=common_pb2.PYTHON),
        fields=[common_pb2.Field(name=k, value=pickle.dumps(v, protocol=5)) for k, v in fields.items()])


def _java_object() -> common_pb2.ObjectData:
    return common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
        class_name=VAULT, language=common_pb2.JAVA))


def register_java_model(cluster, workdir: pathlib.Path) -> None:
    """Compiles the fuzzer's Java model against the Data Service jar and registers it."""
    classes = workdir / "java-classes"
    subprocess.run(["javac", "-d", str(classes), "-cp", str(JARS / "dataservice.jar"), str(JAVA_SOURCE)],
                   check=True, timeout=300, capture_output=True)
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "fuzzjava", str(classes), "java")


def _store(ds: DataServiceClient, obj: common_pb2.ObjectData) -> str:
    ds.make_persistent([obj])
    return obj.id


def _owned_objects(ds_by_backend: list[DataServiceClient]) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {"counter": [], "person": [], "node": [], "vault": []}
    for ds in ds_by_backend:
        kinds["counter"].append(_store(ds, _python_object(COUNTER, value=1)))
        kinds["person"].append(_store(ds, _python_object(PERSON, name="fodder", age=30, friends=[])))
        kinds["node"].append(_store(ds, _python_object(NODE, value=2, next=None)))
        kinds["vault"].append(_store(ds, _java_object()))
    return kinds


def prepare(cluster, workdir: pathlib.Path | None = None) -> World:
    """Prepares `cluster` (started, test models registered) for fuzzing."""
    workdir = workdir or pathlib.Path(tempfile.mkdtemp(prefix="dataclay-fuzz-"))
    admin = (cluster.admin_user(), cluster.admin_password())
    lm_address = f"127.0.0.1:{cluster.port}"
    lm = LogicModuleClient(lm_address)
    lm.token = lm.new_session(*admin).token
    lm.new_account(USER, USER_PASSWORD)
    lm.new_account(LOGIN, LOGIN_PASSWORD)
    register_java_model(cluster, workdir)
    # the administrator's models are every account's: the user may call the probes'
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "hostile", str(HOSTILE), "python")
    backends = [Backend(b.id, b.name, f"{b.host}:{b.port}") for b in sorted(lm.get_backends(), key=lambda b: b.name)]
    user_token = LogicModuleClient(lm_address).new_session(USER, USER_PASSWORD).token
    admin_ds = [DataServiceClient(b.address, lm.token) for b in backends]
    user_ds = [DataServiceClient(b.address, user_token) for b in backends]
    fodder = {"admin": _owned_objects(admin_ds), "user": _owned_objects(user_ds)}
    probes = {b.id: _store(ds, _python_object(PROBE, note="fuzz")) for b, ds in zip(backends, user_ds)}
    sentinels = {}
    for b, ds in zip(backends, admin_ds):
        vault = _store(ds, _java_object())
        sentinels[b.id] = {"counter": _store(ds, _python_object(COUNTER, value=SENTINEL_VALUE)), "vault": vault}
    secret_person = _store(admin_ds[0], _python_object(PERSON, name=SECRET_NAME, age=50, friends=[]))
    secret_vault = _store(admin_ds[0], _java_object())
    admin_ds[0].call_method(secret_vault, "setSecret", kryo_args(kryo_string(SECRET_VAULT)))
    # aliases make every prepared object a root: a fuzzed CollectGarbage must leave them be
    user_lm = LogicModuleClient(lm_address, user_token)
    user_lm.new_alias("fz-user-counter", fodder["user"]["counter"][0])
    for n, oid in enumerate([*(oid for ids in fodder["user"].values() for oid in ids), *probes.values()]):
        user_lm.new_alias(f"fz-root-{n}", oid)
    user_lm.close()
    lm.new_alias("fz-admin-counter", fodder["admin"]["counter"][0])
    admins = [oid for ids in fodder["admin"].values() for oid in ids] + [secret_person, secret_vault]
    admins += [oid for kinds in sentinels.values() for oid in kinds.values()]
    for n, oid in enumerate(admins):
        lm.new_alias(f"fz-root-{n}", oid)
    for ds in admin_ds + user_ds:
        ds.close()
    lm.close()
    marker = workdir / "pwned-marker"
    return World(lm_address, backends, admin, fodder, sentinels, secret_person, secret_vault, probes, marker)
