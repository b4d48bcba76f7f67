"""Issue 21, requirement 7: data never makes a client import or run anything. A dataset's owner
plants pickles that name modules whose import runs code (a module that marks a file and exits the
program, and pygments' command line) in fields, in a model method's result and in a remote
exception; a reader with a read-only contract reads them on a real cluster. The reader's program
survives with SerializationError (or RemoteError), and those modules were never imported in it,
nor in the execution environment."""
import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

from dataclay._internal.records import FieldRecord, ObjectRecord
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

OWNER, OWNER_PW = "odette", "odette-password-1"
READER, READER_PW = "rhea", "rhea-password-12"
COUNTER = "people.model.Counter"

ON_IMPORT = """
    import pathlib
    pathlib.Path({marker!r}).write_text(__name__)
    raise SystemExit("imported " + __name__)
"""

# The owner's model: its results and exceptions pickle as globals of modules that the model fakes in
# its own process (the execution environment), so that the reader's client is the one asked to import them.
TRAP = """
    import sys
    import types

    from dataclay import DataClayObject, activemethod


    def _as_global(module, name):
        fake = sys.modules.setdefault(module, types.ModuleType(module))

        def target(*args):
            return None

        target.__module__, target.__qualname__, target.__name__ = module, name, name
        setattr(fake, name, target)
        return target


    class Planted:
        def __init__(self, module, name):
            self.target = _as_global(module, name)

        def __reduce__(self):
            return self.target, ()


    class Trap(DataClayObject):
        label: str

        def __init__(self):
            self.label = "trap"

        @activemethod
        def result(self):
            return [Planted("evil_on_import", "boom")]

        @activemethod
        def fail_as_planted_type(self):
            boom = type("Boom", (Exception,), {"__module__": "evil_on_import"})
            raise boom(Planted("evil_on_import", "boom"))

        @activemethod
        def fail_with_planted_args(self):
            raise ValueError("planted args", Planted("pygments.__main__", "main"))
"""

# Runs as the reader: every read of what the owner planted, each outcome recorded; one JSON line.
READ = textwrap.dedent("""
    import json, sys
    from dataclay import api
    from dataclay.exceptions import DataClayException
    api.init()
    planted_ids, trap_id = sys.argv[1].split(","), sys.argv[2]

    def outcome(read):
        try:
            value = read()
            return {"value": repr(value)}
        except ValueError as e:
            return {"error": "ValueError", "args": [repr(a) for a in e.args]}
        except DataClayException as e:
            return {"error": type(e).__name__, "message": str(e), "remote_type": getattr(e, "remote_type", None)}

    out = {"planted": []}
    for oid in planted_ids:
        obj = api.get_by_id(oid)
        out["planted"].append({"dc_clone": outcome(obj.dc_clone), "get_properties": outcome(obj.get_properties),
                               "field": outcome(lambda: obj.value)})
    trap = api.get_by_id(trap_id)
    out["trap_class"] = type(trap).__module__
    out["result"] = outcome(trap.result)
    out["planted_type"] = outcome(trap.fail_as_planted_type)
    out["planted_args"] = outcome(trap.fail_with_planted_args)
    out["label"] = outcome(lambda: trap.label)
    out["imported"] = sorted(m for m in ("evil_on_import", "pygments.__main__") if m in sys.modules)
    print(json.dumps(out))
""")


def crafted(module: str, name: str) -> bytes:
    """A pickle (protocol 4) whose value is `module.name()`."""
    def text(value):
        data = value.encode()
        return b"\x8c" + bytes([len(data)]) + data
    return b"\x80\x04" + text(module) + text(name) + b"\x93)R."


@pytest.fixture(scope="module")
def planted(cluster, tmp_path_factory):
    """The owner's planted Counters (one naming the marker module, one pygments' command line), its
    published Trap model and one Trap; the reader's path with the marker module and the model's code."""
    # setup: the accounts
    admin = cluster.admin_user()
    cluster.dataclaycmd("NewAccount", OWNER, OWNER_PW)
    cluster.dataclaycmd("NewAccount", READER, READER_PW)
    cluster.dataclaycmd("GrantModelRegistration", admin, "-", OWNER)
    cluster.dataclaycmd("NewDataContract", OWNER, OWNER_PW, OWNER, READER, "--read-only")
    # the owner's model, published so that the reader may use it
    root = tmp_path_factory.mktemp("trap")
    (root / "trapdoor").mkdir()
    (root / "trapdoor" / "__init__.py").write_text("")
    (root / "trapdoor" / "model.py").write_text(textwrap.dedent(TRAP))
    cluster.dataclaycmd("NewModel", OWNER, OWNER_PW, "trapdoor", str(root), "python")
    cluster.dataclaycmd("PublishModel", OWNER, OWNER_PW, "trapdoor")
    # the raw plant: objects whose stored field is a crafted pickle, made through the public RPC
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(OWNER, OWNER_PW, "").token
    backend = sorted(lm.get_backends(), key=lambda b: b.name)[0]
    ds = DataServiceClient(f"{backend.host}:{backend.port}", lm.token)
    ids = []
    for module, name in (("evil_on_import", "boom"), ("pygments.__main__", "main")):
        oid = str(uuid.uuid4())
        ds.make_persistent([ObjectRecord(oid, COUNTER, (FieldRecord("value", crafted(module, name)),))])
        ids.append(oid)
    ds.close()
    lm.close()
    trap = _run(cluster, OWNER, OWNER_PW, root, "", textwrap.dedent("""
        import json
        from dataclay import api
        api.init()
        from trapdoor.model import Trap
        t = Trap(); t.make_persistent()
        print(json.dumps(t.getID()))
    """))
    # the reader's path: the marker module (which exits on import) and the model's code, as GetStubs writes it
    reader_path = tmp_path_factory.mktemp("reader")
    markers = tmp_path_factory.mktemp("markers")
    (reader_path / "evil_on_import.py").write_text(textwrap.dedent(ON_IMPORT.format(marker=str(markers / "x"))))
    cluster.dataclaycmd("GetStubs", READER, READER_PW, "trapdoor", str(reader_path))
    return {"ids": ids, "trap": trap, "reader_path": reader_path, "markers": markers}


def _run(cluster, user, password, path, extra_path, code, *args):
    env = dict(cluster.env, DATACLAY_USER=user, DATACLAY_PASSWORD=password,
               PYTHONPATH=os.pathsep.join(filter(None, [str(path), extra_path, cluster.env["PYTHONPATH"]])))
    result = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{result.returncode}\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_reader_survives_planted_fields_results_and_exceptions_and_imports_nothing(cluster, planted):
    # run: the reader, with the marker module importable, reads everything the owner planted
    out = _run(cluster, READER, READER_PW, planted["reader_path"], "", READ, ",".join(planted["ids"]),
               planted["trap"])
    # verify: every planted field refused by every read, naming the global and saying nothing was imported
    for reads, named in zip(out["planted"], ("evil_on_import.boom", "pygments.__main__.main")):
        for what, seen in reads.items():
            assert seen["error"] == "SerializationError", (what, seen)
            assert named in seen["message"] and "nothing was imported" in seen["message"], (what, seen)
            assert "DATACLAY_PICKLE_ALLOW" in seen["message"], (what, seen)
    # the model's class loaded on demand (the reader never imported it); its planted result refused
    assert out["trap_class"] == "trapdoor.model"
    assert out["result"]["error"] == "SerializationError" and "evil_on_import.boom" in out["result"]["message"]
    # a planted exception type stays a RemoteError; a built-in one with planted arguments keeps its message
    assert out["planted_type"]["error"] == "RemoteError", out["planted_type"]
    assert out["planted_type"]["remote_type"] == "evil_on_import.Boom"
    assert out["planted_args"]["error"] == "ValueError", out["planted_args"]
    assert "planted args" in out["planted_args"]["args"][0]
    # the program went on, and neither module was imported in it
    assert out["label"] == {"value": "'trap'"}
    assert out["imported"] == [] and list(planted["markers"].iterdir()) == []


def test_a_planted_field_refused_in_the_execution_environment_leaves_it_serving(cluster, planted):
    # run: the owner calls a method of the Counter planted with pygments' command line (importable there)
    code = textwrap.dedent("""
        import json, sys
        from dataclay import api
        from dataclay.exceptions import DataClayException
        api.init()
        from people.model import Counter
        try:
            api.get_by_id(sys.argv[1]).get()
            outcome = "ran"
        except DataClayException as e:
            outcome = f"{type(e).__name__}: {e}"
        fresh = Counter(4); fresh.make_persistent(backend_id=api.get_by_id(sys.argv[1]).get_location())
        print(json.dumps({"outcome": outcome, "fresh": fresh.increment(1)}))
    """)
    out = _run(cluster, OWNER, OWNER_PW, planted["reader_path"], "", code, planted["ids"][1])
    # verify: refused in the backend, which still serves (pygments' command line did not run and exit it)
    assert out["outcome"].startswith("SerializationError") and "pygments.__main__.main" in out["outcome"]
    assert out["fresh"] == 5
