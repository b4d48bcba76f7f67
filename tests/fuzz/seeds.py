"""Recorded valid messages, one or more per RPC, that the mutators start from: each names real
objects, backends and accounts of the prepared world (the fodder of the identity's own dataset),
so a small mutation reaches the code behind the checks, not just the first field check.

A seed is (backend index, message): DataService seeds go to the backend holding the objects they
name; LogicModule seeds ignore the index."""
from __future__ import annotations

import hashlib
import hmac
import pickle
import time
import uuid

from dataclay._internal.proto import common_pb2, dataservice_pb2 as ds, logicmodule_pb2 as lm

from fuzz.identities import LOGIN, LOGIN_PASSWORD
from fuzz.payloads import kryo_args, kryo_string
from fuzz.world import COUNTER, JAVA_PROBE_ARGS, NODE, VAULT, World

OWNER_OF = {"none": "user", "bogus": "user", "user": "user", "admin": "admin", "backend": "admin"}
_ARGS_ONE = pickle.dumps(((1,), {}), protocol=5)
_MODEL_FILES = [
    lm.ModelFile(path="fuzzmod/__init__.py", content=b""),
    lm.ModelFile(path="fuzzmod/things.py", content=b"from dataclay import DataClayObject\n\n\n"
                 b"class Thing(DataClayObject):\n    n: int\n"),
]
_MODEL_CLASSES = [lm.ClassDescription(name="fuzzmod.things.Thing", fields=[lm.FieldDescription(name="n", type="int")])]


def _pickled_field(name: str, value) -> common_pb2.Field:
    return common_pb2.Field(name=name, value=pickle.dumps(value, protocol=5))


def _dataset(world: World, owner: str) -> str:
    return world.admin[0] if owner == "admin" else "fuzz-user"


def logic_module_seeds(world: World, identity: str, backend_identity_id: str, secret: bytes) -> dict[str, list]:
    """Seed messages of every LogicModule RPC for `identity`."""
    owner = OWNER_OF[identity]
    mine = world.fodder[owner]
    b0, b1 = world.backends[0].id, world.backends[1].id
    now, nonce = int(time.time() * 1000), uuid.uuid4().hex
    proof = hmac.new(secret, f"dataclay-backend-session\n{backend_identity_id}\n{now}\n{nonce}".encode(),
                     hashlib.sha256).digest()
    new_id = str(uuid.uuid4())
    empty = common_pb2.Empty()
    return {
        "Health": [empty],
        "NewSession": [lm.NewSessionRequest(username=LOGIN, password=LOGIN_PASSWORD),
                       lm.NewSessionRequest(username=LOGIN, password=LOGIN_PASSWORD, dataset=LOGIN)],
        "NewBackendSession": [lm.NewBackendSessionRequest(backend_id=backend_identity_id, issued_at_ms=now,
                                                          nonce=nonce, proof=proof)],
        "CloseSession": [empty],
        "ValidateSession": [lm.ValidateSessionRequest(token="x" * 43)],
        "NewAccount": [lm.NewAccountRequest(username="fz-account", password="fz-account-password")],
        "NewDataContract": [lm.NewDataContractRequest(dataset=_dataset(world, owner), beneficiary=LOGIN,
                                                      read_only=True)],
        "RevokeDataContract": [lm.RevokeDataContractRequest(dataset=_dataset(world, owner), beneficiary=LOGIN)],
        "ListDataContracts": [empty],
        "ListDatasets": [lm.ListDatasetsRequest(page_size=2, count_objects=True)],
        "ListAliases": [lm.ListAliasesRequest(pattern="fz-*", page_size=3),
                        lm.ListAliasesRequest(pattern="?%_\\'*", dataset=_dataset(world, owner))],
        "ListObjects": [lm.ListObjectsRequest(class_name=COUNTER, dataset=_dataset(world, owner), page_size=2),
                        lm.ListObjectsRequest()],
        "SetModelRegistration": [lm.SetModelRegistrationRequest(username=LOGIN, allowed=False)],
        "RegisterModel": [lm.Model(namespace="fuzzns", language=common_pb2.PYTHON, files=_MODEL_FILES,
                                   classes=_MODEL_CLASSES)],
        "GetModel": [lm.GetModelRequest(namespace="tests"), lm.GetModelRequest(namespace="fuzzjava")],
        "ListModels": [lm.ListModelsRequest(language=common_pb2.JAVA)],
        "SetModelPublished": [lm.SetModelPublishedRequest(namespace="fuzzns", published=True)],
        # a namespace nobody registers: removing a deployed model restarts the environments, which
        # the oracle would rightly count as a server gone
        "RemoveModel": [lm.RemoveModelRequest(namespace="fuzznone", force=True)],
        "RegisterBackend": [common_pb2.BackendInfo(id=backend_identity_id, name="fuzz-backend", host="127.0.0.1",
                                                   port=1, languages=[common_pb2.PYTHON], store_engine="kv")],
        "Heartbeat": [lm.HeartbeatRequest(backend_id=backend_identity_id, sessions_epoch=1, sessions_seen=1)],
        "GetBackends": [empty],
        "RegisterObjects": [lm.RegisterObjectsRequest(groups=[
            lm.RegistrationGroup(objects=[common_pb2.ObjectInfo(
                id=new_id, class_name=COUNTER, language=common_pb2.PYTHON, dataset=_dataset(world, owner),
                master_backend_id=b0)], alias="fz-registered", alias_object_id=new_id),
            # an ID registered already, from another master: refused alone
            lm.RegistrationGroup(objects=[common_pb2.ObjectInfo(
                id=mine["counter"][0], class_name=COUNTER, language=common_pb2.PYTHON,
                dataset=_dataset(world, owner), master_backend_id=b1)])])],
        "GetObjectInfo": [lm.ObjectIdRequest(id=mine["counter"][0])],
        "GetObjectByAlias": [lm.AliasRequest(alias=f"fz-{owner}-counter"),
                             lm.AliasRequest(alias="fz-admin-counter", dataset=world.admin[0])],
        "NewAlias": [lm.NewAliasRequest(alias="fz-new-alias", object_id=mine["counter"][1])],
        "DeleteAlias": [lm.AliasRequest(alias="fz-new-alias")],
        "AddReplicas": [lm.ObjectLocationsRequest(object_ids=[mine["node"][0]], backend_id=b1)],
        "RemoveReplicas": [lm.ObjectLocationsRequest(object_ids=[mine["node"][0]], backend_id=b1)],
        "SetMaster": [lm.ObjectLocationsRequest(object_ids=[mine["node"][1]], backend_id=b0)],
        "UnregisterObjects": [lm.ObjectIdsRequest(ids=[mine["node"][1]])],
        "GetReplicatedObjects": [lm.BackendIdRequest(backend_id=b0)],
        "CollectGarbage": [empty],
        "GetStats": [empty],
    }


def data_service_seeds(world: World, identity: str) -> dict[str, list]:
    """Seed (backend index, message) pairs of every DataService RPC for `identity`."""
    owner = OWNER_OF[identity]
    mine = world.fodder[owner]
    out: dict[str, list] = {}
    for i in (0, 1):
        other = world.backends[1 - i].id
        counter, person, node, vault = (mine[k][i] for k in ("counter", "person", "node", "vault"))
        python_object = common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
            class_name=COUNTER, language=common_pb2.PYTHON), fields=[_pickled_field("value", 3)])
        java_object = common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
            class_name=VAULT, language=common_pb2.JAVA))
        copy = common_pb2.ObjectData(id=str(uuid.uuid4()), header=common_pb2.ObjectHeader(
            class_name=NODE, language=common_pb2.PYTHON, dataset=_dataset(world, owner), master_backend_id=other),
            fields=[_pickled_field("value", 4), _pickled_field("next", None)])
        seeds = {
            "MakePersistent": [ds.MakePersistentRequest(objects=[python_object]),
                               ds.MakePersistentRequest(objects=[java_object], alias=f"fz-made-{i}")],
            "CallMethod": [ds.CallMethodRequest(object_id=counter, method="increment", args=_ARGS_ONE),
                           ds.CallMethodRequest(object_id=person, method="friend_names",
                                                args=pickle.dumps(((), {}), protocol=5)),
                           ds.CallMethodRequest(object_id=vault, method="size", args=JAVA_PROBE_ARGS),
                           ds.CallMethodRequest(object_id=vault, method="describe",
                                                args=kryo_args(kryo_string("hello")))],
            "GetField": [ds.GetFieldRequest(object_id=person, field="name"),
                         ds.GetFieldRequest(object_id=vault, field="kept")],
            "SetField": [ds.SetFieldRequest(object_id=counter, field="value", value=pickle.dumps(5, protocol=5)),
                         ds.SetFieldRequest(object_id=vault, field="kept", value=kryo_string("kept"))],
            "GetObjects": [ds.GetObjectsRequest(ids=[counter, person, vault])],
            "DeployModels": [lm.ModelList(models=[lm.Model(namespace="fuzzns", language=common_pb2.PYTHON,
                                                           owner=world.admin[0], files=_MODEL_FILES,
                                                           classes=_MODEL_CLASSES, version=1)])],
            "RemoveModels": [ds.RemoveModelsRequest(namespaces=["fuzzns"], revision=1)],
            "SessionsClosed": [ds.SessionsClosedRequest(token_sha256=[hashlib.sha256(b"nobody").hexdigest()]),
                               ds.SessionsClosedRequest(forget_all=True)],
            "GetStatus": [common_pb2.Empty()],
            "GetCallPort": [common_pb2.Empty()],
            "FlushAll": [common_pb2.Empty()],
            "NewReplica": [ds.NewReplicaRequest(object_ids=[node], backend_id=other, recursive=True)],
            "NewVersion": [ds.NewVersionRequest(object_id=counter)],
            "ConsolidateVersion": [ds.ConsolidateVersionRequest(version_id=counter)],
            "Move": [ds.MoveRequest(object_ids=[person], backend_id=other)],
            "StoreCopies": [ds.StoreCopiesRequest(objects=[ds.CopiedObject(object=copy)])],
            "ApplyDeltas": [ds.ApplyDeltasRequest(deltas=[common_pb2.ObjectDelta(
                id=counter, changed_fields=[_pickled_field("value", 9)], sequence=2**40)])],
            "DeleteObjects": [ds.DeleteObjectsRequest(object_ids=[node])],
            "BeginCollection": [ds.CollectionRequest(collection_id=7)],
            "GetReferences": [ds.CollectionRequest(collection_id=7)],
            "EndCollection": [ds.CollectionRequest(collection_id=7)],
        }
        for rpc, messages in seeds.items():
            out.setdefault(rpc, []).extend((i, m) for m in messages)
    return out
