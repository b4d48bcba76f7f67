"""Programs written for COMPSs' storage interface run unchanged on a real cluster: a program driving
storage.api the way a COMPSs master does (init from the storage configuration file, objects by ID,
versions, locations, finish), and a plain program that opened its session with dataclay.api.init()
or a dataclay.Client and then uses storage.api."""
import json
import textwrap

import pytest

# The master side of a COMPSs application: only storage.api names and StorageObject methods.
COMPSS_MASTER = textwrap.dedent("""
    import json, sys
    from storage.api import (init, finish, getByID, getLocations, newVersion, consolidateVersion,
                             StorageObject, StorageStateError)
    from dataclay.exceptions import DataClayException
    from people.model import Counter

    init(config_file_path=sys.argv[1])
    counter = Counter(1)
    counter.makePersistent()
    oid = counter.getID()
    assert isinstance(counter, StorageObject)
    # what a task does with an INOUT parameter: rename it, work on the version, consolidate at sync
    version_id = newVersion(oid, preserve_source=False)
    getByID(version_id).increment(9)
    before = getByID(oid).get()
    consolidateVersion(version_id)
    try:
        getByID(version_id).get()
        retired = None
    except DataClayException as e:
        retired = type(e).__name__
    out = {"before": before, "after": getByID(oid).get(), "retired": retired, "hosts": getLocations(oid)}
    counter.deletePersistent()
    finish()
    try:
        getByID(oid)
    except StorageStateError as e:
        out["after_finish"] = [type(e).__name__, isinstance(e, DataClayException)]
    print(json.dumps(out))
""")

# A plain program: its own dataClay session (argv[1]: "api" for dataclay.api.init(), "client" for a
# started dataclay.Client), then storage.api for what it offers (the gap of issue 15).
PLAIN_PROGRAM = textwrap.dedent("""
    import json, sys
    from dataclay import Client, api
    from storage import api as storage
    from people.model import Person

    client = Client()
    api.init() if sys.argv[1] == "api" else client.start()
    p = Person("sam", 40)
    p.make_persistent(alias="compat-sam-" + sys.argv[1])
    same = storage.getByID(p.getID())
    version = storage.getByID(storage.newVersion(p.getID()))
    version.birthday()
    storage.consolidateVersion(version.getID())
    print(json.dumps({"same": same is p, "age": Person.get_by_alias("compat-sam-" + sys.argv[1]).age,
                      "hosts": storage.getLocations(p.getID())}))
    api.finish() if sys.argv[1] == "api" else client.stop()
""")


@pytest.fixture
def storage_conf(cluster, tmp_path):
    """The storage configuration file COMPSs hands to init(): the client file of the cluster."""
    conf = tmp_path / "storage.properties"
    conf.write_text("".join(f"{k}={v}\n" for k, v in cluster.client_properties().items()))
    return conf


def test_a_compss_master_program_using_storage_api_runs_unchanged(cluster, storage_conf):
    # run
    out = json.loads(cluster.run_client(COMPSS_MASTER, str(storage_conf)).stdout.strip().splitlines()[-1])
    # verify
    assert (out["before"], out["after"]) == (1, 10)
    assert out["retired"] == "ObjectDoesNotExistError" and out["hosts"] == ["127.0.0.1"]
    assert out["after_finish"] == ["StorageStateError", True]


@pytest.mark.parametrize("session", ["api", "client"])
def test_a_program_with_its_own_session_uses_storage_api(cluster, session):
    # run
    out = json.loads(cluster.run_client(PLAIN_PROGRAM, session).stdout.strip().splitlines()[-1])
    # verify
    assert out == {"same": True, "age": 41, "hosts": ["127.0.0.1"]}
