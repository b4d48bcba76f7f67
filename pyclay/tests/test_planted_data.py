"""What a dataset's owner can plant for its readers (a field's bytes, a method's result, a remote
exception, an object's class name) reaches a client through its real runtime, over gRPC peers: a
refused global raises SerializationError (or the exception stays a RemoteError), the program goes
on, and the named module is never imported. A class of a model the Logic Module lists loads on
demand."""
import pickle
from types import SimpleNamespace

import pytest

from dataclay import api
from dataclay.exceptions import ClassNotRegisteredError, RemoteError, SerializationError
from dataclay._internal.proto import common_pb2, dataservice_pb2
from peers import DataServicePeer
from storage import api as storage_api
from test_pickle_policy import (  # noqa: F401 (evil and vendored are fixtures)
    assert_nothing_imported, crafted, crafted_args, evil, python_model, vendored, with_reference)
from unitmodels.shop import Item


@pytest.fixture
def cluster(peer_cluster):
    """A Logic Module peer with one Data Service peer (`.ds`), and an initialised client."""
    peers = peer_cluster(DataServicePeer, 1)
    api.init(str(peers.config))
    return SimpleNamespace(lm=peers.lm, ds=peers.ds[0])


def planted(cluster, field: str, value: bytes) -> Item:
    """A persistent Item whose stored `field` the peer answers as `value` (GetField and GetObjects)."""
    item = Item("pen", 1)
    item.make_persistent()
    stored = cluster.ds.stored[item.getID()]
    for f in stored.fields:
        if f.name == field:
            f.value = value
    cluster.ds.on_get_field = lambda request: dataservice_pb2.GetFieldResponse(value=value)
    return item


def test_a_planted_field_is_refused_by_every_read_and_imports_nothing(cluster, evil):
    item = planted(cluster, "name", crafted("evil_on_import", "boom"))
    for read in (lambda: item.name, item.dc_clone, lambda: item.dc_clone(recursive=True), item.get_properties):
        with pytest.raises(SerializationError, match="evil_on_import.boom") as refused:
            read()
        assert "field Item.name" in str(refused.value) and "nothing was imported" in str(refused.value)
    assert_nothing_imported(evil)
    cluster.ds.on_get_field = lambda request: dataservice_pb2.GetFieldResponse(value=pickle.dumps(2, 5))
    assert item.price == 2  # the program goes on


def test_a_planted_reference_to_a_refused_class_is_refused_by_dc_clone(cluster, evil):
    item = planted(cluster, "tags", with_reference("evil_pkg.sub.Thing"))
    for read in (item.dc_clone, lambda: item.dc_clone(recursive=True), item.get_properties):
        with pytest.raises(SerializationError, match="evil_pkg.sub.Thing"):
            read()
    assert_nothing_imported(evil)


def test_a_planted_method_result_is_refused_and_imports_nothing(cluster, evil):
    item = Item("pen", 1)
    item.make_persistent()
    cluster.ds.on_call = lambda request: dataservice_pb2.CallMethodResponse(result=crafted("pygments.__main__", "main"))
    with pytest.raises(SerializationError, match="result of Item.describe.*pygments.__main__.main"):
        item.describe()
    assert_nothing_imported(evil)


def test_a_planted_remote_exception_stays_a_remote_error_and_imports_nothing(cluster, evil):
    # setup
    item = Item("pen", 1)
    item.make_persistent()
    # run: a type naming the module, then a built-in type whose arguments name it
    cluster.ds.fail_with = RemoteError("evil_on_import.Boom", "boom", crafted_args("evil_pkg.sub", "x"), "Traceback")
    with pytest.raises(RemoteError) as as_type:
        item.describe()
    cluster.ds.fail_with = RemoteError("builtins.ValueError", "bad", crafted_args("evil_on_import", "boom"), "")
    with pytest.raises(ValueError) as as_args:
        item.describe()
    # verify
    assert as_type.value.remote_type == "evil_on_import.Boom" and as_type.value.remote_message == "boom"
    assert as_args.value.args == ("bad",)
    assert_nothing_imported(evil)


def test_an_object_whose_metadata_names_a_refused_class_is_refused_by_get_by_id(cluster, evil):
    # setup: the Logic Module's metadata says what the storer wrote as the class
    item = Item("pen", 1)
    item.make_persistent()
    oid = "0b0e3c5e-0000-4000-8000-000000000001"
    cluster.lm.objects[oid] = common_pb2.ObjectInfo(id=oid, class_name="evil_on_import.Thing",
                                                    language=common_pb2.PYTHON, master_backend_id=cluster.ds.backend_id)
    # run / verify: the API, and COMPSs' storage API
    for get in (api.get_by_id, storage_api.getByID):
        with pytest.raises(ClassNotRegisteredError, match="evil_on_import.Thing.*nothing was imported"):
            get(oid)
    assert_nothing_imported(evil)


def test_a_reference_to_a_class_of_a_listed_model_loads_it_on_demand(cluster, vendored):
    # setup: the Logic Module lists the model; a field references one of its objects
    package, files, markers = vendored
    cluster.lm.models.append(python_model("vendored", files))
    item = planted(cluster, "tags", with_reference(f"{package}.things.Thing"))
    # run
    [thing] = item.get_properties()["tags"]
    [again] = item.dc_clone().tags
    # verify
    assert type(thing).__module__ == f"{package}.things" and type(thing).__name__ == "Thing"
    assert again is thing and (markers / "imported").exists()
    assert cluster.lm.calls["ListModels"] == 1
