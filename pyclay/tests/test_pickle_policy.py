"""The unpickling policies decide from the module and name as written, before importing anything:
a refused global's module is never imported (its import-time code never runs), on a client, in a
backend, and wherever names from data are resolved (object references, remote exceptions)."""
import hashlib
import importlib.util
import pathlib
import pickle
import sys
import textwrap
import uuid
from types import SimpleNamespace

import pytest

from dataclay.exceptions import ClassNotRegisteredError, RemoteError, SerializationError
from dataclay._internal.proto import common_pb2, logicmodule_pb2
from dataclay._internal.serialization import exceptions as remote_exceptions
from dataclay._internal.serialization.decoder import loads, loads_args
from dataclay._internal.serialization.encoder import dumps
from dataclay._internal.serialization.model_catalog import RETRY_SECONDS, ModelCatalog
from dataclay._internal.serialization.policy import BackendClassPolicy, ClientClassPolicy
from pickles import pickle_with_pid

# Modules whose import would run code: each writes a marker file, then exits the program (as
# `pygments.__main__` runs pygments' command line and exits).
ON_IMPORT = """
    import pathlib
    pathlib.Path({marker!r}).write_text(__name__)
    raise SystemExit("imported " + __name__)
"""
EVIL_MODULES = ("evil_on_import", "evil_pkg", "evil_pkg.sub", "pygments.__main__")

REFUSED_GLOBALS = [
    ("pygments.__main__", "main"), ("os", "system"), ("posix", "system"), ("subprocess", "Popen"),
    ("builtins", "eval"), ("builtins", "getattr"), ("importlib", "import_module"),
    ("evil_on_import", "boom"), ("evil_pkg.sub", "Thing"),
]

NUMPY_ALLOW = ("numpy.dtype", "numpy.ndarray", "numpy._core.numeric._frombuffer",
               "numpy._core.multiarray._reconstruct", "numpy._core.multiarray.scalar")


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """A directory on sys.path holding modules that mark and exit when imported; yields the marker files'
    directory and whether pygments was imported before. Any of them imported (a failed test) is removed
    from sys.modules afterwards."""
    path, markers = tmp_path / "path", tmp_path / "markers"
    (path / "evil_pkg").mkdir(parents=True)
    markers.mkdir()
    for module, file in (("evil_on_import", "evil_on_import.py"), ("evil_pkg", "evil_pkg/__init__.py"),
                         ("evil_pkg.sub", "evil_pkg/sub.py")):
        (path / file).write_text(textwrap.dedent(ON_IMPORT.format(marker=str(markers / module))))
    monkeypatch.syspath_prepend(str(path))
    assert not [m for m in EVIL_MODULES if m in sys.modules]
    yield SimpleNamespace(markers=markers, pygments_loaded="pygments" in sys.modules)
    for module in EVIL_MODULES:
        sys.modules.pop(module, None)


def assert_nothing_imported(evil) -> None:
    assert [m for m in EVIL_MODULES if m in sys.modules] == []
    assert ("pygments" in sys.modules) == evil.pygments_loaded
    assert list(evil.markers.iterdir()) == []


def _text(value: str) -> bytes:
    data = value.encode()
    return b"\x8c" + bytes([len(data)]) + data


def call_of(module: str, name: str) -> bytes:
    """Pickle opcodes (protocol 4) that load global `module.name` and call it with no arguments."""
    return _text(module) + _text(name) + b"\x93)R"


def crafted(module: str, name: str) -> bytes:
    """A whole pickle whose value is `module.name()`."""
    return b"\x80\x04" + call_of(module, name) + b"."


def crafted_args(module: str, name: str) -> bytes:
    """Method arguments ((module.name(),), {})."""
    return b"\x80\x04" + call_of(module, name) + b"\x85}\x86."


def with_reference(class_name: str) -> bytes:
    """A pickle holding one object reference ("dc", id, class_name, "")."""
    return pickle_with_pid(("dc", str(uuid.uuid4()), class_name, ""), in_list=True)


def python_model(namespace: str, files: dict, withdrawn: bool = False) -> logicmodule_pb2.Model:
    """A Model message as ListModels returns it (Python, with files path -> bytes)."""
    model = logicmodule_pb2.Model(namespace=namespace, language=common_pb2.PYTHON, withdrawn=withdrawn)
    for path, content in files.items():
        model.files.add(path=path, content=content)
    return model


def claiming_evil_modules():
    """A model (as a published one could be) whose files claim the names of the evil modules, with
    other content: the client must not import the local modules of those names."""
    return [python_model("squatter", {
        "evil_on_import.py": b"class boom: pass\n", "evil_pkg/__init__.py": b"", "evil_pkg/sub.py": b"",
        "pygments/__init__.py": b"", "pygments/__main__.py": b"class main: pass\n"})]


def policies(models_dir):
    return {
        "backend": BackendClassPolicy(models_dir),
        "client": ClientClassPolicy(),
        "client with a model list": ClientClassPolicy(list_models=lambda: []),
        "client with a squatting model": ClientClassPolicy(list_models=claiming_evil_modules),
    }


@pytest.mark.parametrize("module, name", REFUSED_GLOBALS)
def test_a_refused_global_is_refused_before_its_module_is_imported(evil, models_dir, module, name):
    for side, policy in policies(models_dir).items():
        # run
        with pytest.raises(SerializationError) as refused:
            loads(crafted(module, name), policy, "field Item.name")
        with pytest.raises(SerializationError):
            loads_args(crafted_args(module, name), policy)
        # verify
        assert f"{module}.{name}" in str(refused.value) and "field Item.name" in str(refused.value), side
        assert "nothing was imported" in str(refused.value), side
        assert_nothing_imported(evil)


def test_the_refusal_says_what_to_do(evil, models_dir):
    with pytest.raises(SerializationError) as refused:
        loads(crafted("evil_on_import", "boom"), ClientClassPolicy(list_models=lambda: []))
    message = str(refused.value)
    assert "evil_on_import.boom" in message and "nothing was imported" in message
    assert "DATACLAY_PICKLE_ALLOW" in message and "clients and the backends" in message
    assert "GetStubs" in message and "NewModel" in message
    assert_nothing_imported(evil)


def test_a_squatting_model_does_not_make_the_client_import_a_module_of_the_same_name(evil):
    policy = ClientClassPolicy(list_models=claiming_evil_modules)
    with pytest.raises(SerializationError, match="not that model's registered code") as refused:
        policy.find_class("evil_on_import", "boom")
    assert "squatter" in str(refused.value) and "GetStubs" in str(refused.value)
    with pytest.raises(SerializationError, match="this Python's installation"):
        policy.find_class("pygments.__main__", "main")
    assert_nothing_imported(evil)


def test_a_model_copying_an_installed_package_byte_for_byte_does_not_make_the_client_import_it(evil):
    # setup: a model whose files are pygments' own (its command line runs and exits when imported)
    spec = importlib.util.find_spec("pygments")
    if spec is None:
        pytest.skip("pygments is not installed")
    installed = pathlib.Path(spec.origin).parent
    files = {f"pygments/{n}": (installed / n).read_bytes() for n in ("__init__.py", "__main__.py")}
    policy = ClientClassPolicy(list_models=lambda: [python_model("copycat", files)])
    # run
    with pytest.raises(SerializationError) as refused:
        loads(crafted("pygments.__main__", "main"), policy)
    # verify
    assert "this Python's installation" in str(refused.value) and "nothing was imported" in str(refused.value)
    assert_nothing_imported(evil)


@pytest.mark.parametrize("class_name", ["evil_on_import.Thing", "evil_pkg.sub.Thing", "pygments.__main__.main",
                                        "os.system"])
def test_object_references_naming_a_refused_class_import_nothing(evil, models_dir, class_name):
    for policy in policies(models_dir).values():
        with pytest.raises(SerializationError, match="refused an object reference"):
            loads(with_reference(class_name), policy)
        with pytest.raises(ClassNotRegisteredError):
            policy.dataclay_class(class_name)
    assert_nothing_imported(evil)


@pytest.mark.parametrize("remote_type", ["evil_on_import.Boom", "evil_pkg.sub.Boom", "pygments.__main__.main",
                                         "os.system", "builtins.SystemExit", "", "evil_on_import.__class__"])
def test_a_remote_exception_naming_a_refused_type_stays_a_remote_error(evil, models_dir, remote_type):
    for policy in policies(models_dir).values():
        error = RemoteError(remote_type, "boom", b"", "Traceback (remote)")
        assert remote_exceptions.rebuild(error, policy) is error
    assert_nothing_imported(evil)


def test_a_remote_exception_whose_arguments_are_refused_keeps_its_type_and_message(evil, models_dir):
    for policy in policies(models_dir).values():
        error = RemoteError("builtins.ValueError", "bad value", crafted("evil_on_import", "boom"), "")
        rebuilt = remote_exceptions.rebuild(error, policy)
        assert type(rebuilt) is ValueError and rebuilt.args == ("bad value",)
    assert_nothing_imported(evil)


# ---- backends: model modules only from the models directory, checked before importing ------------


def test_backend_refuses_a_models_dir_module_shadowed_by_an_earlier_path_entry(tmp_path, monkeypatch):
    # setup: the same package in the models directory and, ahead of it on sys.path, elsewhere
    package = f"shadowed_{uuid.uuid4().hex[:8]}"
    models, elsewhere, markers = tmp_path / "models", tmp_path / "elsewhere", tmp_path / "markers"
    for root in (models, elsewhere):
        (root / package).mkdir(parents=True)
        (root / package / "things.py").write_text("class Thing:\n    pass\n")
    markers.mkdir()
    (models / package / "__init__.py").write_text("")
    (elsewhere / package / "__init__.py").write_text(textwrap.dedent(ON_IMPORT.format(marker=str(markers / "x"))))
    monkeypatch.syspath_prepend(str(models))
    monkeypatch.syspath_prepend(str(elsewhere))
    policy = BackendClassPolicy(models)
    try:
        # run
        with pytest.raises(SerializationError, match="nothing was imported"):
            policy.find_class(f"{package}.things", "Thing")
        # verify
        assert package not in sys.modules and list(markers.iterdir()) == []
        # run: with the models directory first, the same name is model code
        monkeypatch.syspath_prepend(str(models))
        found = policy.find_class(f"{package}.things", "Thing")
        assert found.__name__ == "Thing" and found.__module__ == f"{package}.things"
    finally:
        for name in (package, f"{package}.things"):
            sys.modules.pop(name, None)


def test_backend_refuses_a_models_dir_module_that_a_frozen_module_shadows(tmp_path, monkeypatch):
    # `__hello__` is a frozen module that prints when run; one in the models directory would not be what loads
    (tmp_path / "__hello__.py").write_text("class main:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("__hello__", None)
    with pytest.raises(SerializationError, match="nothing was imported"):
        BackendClassPolicy(tmp_path).find_class("__hello__", "main")
    assert "__hello__" not in sys.modules


def test_backend_accepts_classes_of_model_modules_it_has_not_imported_yet(tmp_path, monkeypatch):
    package = f"deployed_{uuid.uuid4().hex[:8]}"
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "errors.py").write_text("class Problem(Exception):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert f"{package}.errors" not in sys.modules
        data = b"\x80\x04" + _text(f"{package}.errors") + _text("Problem") + b"\x93" + _text("late") + b"\x85R."
        problem = loads(data, BackendClassPolicy(tmp_path))
        assert type(problem).__module__ == f"{package}.errors" and problem.args == ("late",)
    finally:
        for name in (package, f"{package}.errors"):
            sys.modules.pop(name, None)


# ---- clients: model classes decided by the Logic Module's list, imported only if the code is the model's ----


@pytest.fixture
def vendored(tmp_path, monkeypatch):
    """A model package on sys.path that this process has not imported: its name, its files and a marker
    directory its `__init__` writes to when imported."""
    package = f"vendored_{uuid.uuid4().hex[:8]}"
    markers = tmp_path / "markers"
    markers.mkdir()
    files = {
        f"{package}/__init__.py": f"import pathlib\npathlib.Path({str(markers / 'imported')!r}).write_text('yes')\n",
        f"{package}/things.py": textwrap.dedent("""
            from dataclay import DataClayObject

            class Problem(Exception):
                pass

            class Thing(DataClayObject):
                label: str
        """),
    }
    for path, text in files.items():
        (tmp_path / "path" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "path" / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path / "path"))
    yield package, {path: text.encode() for path, text in files.items()}, markers
    for name in (package, f"{package}.things"):
        sys.modules.pop(name, None)


def test_client_loads_a_class_of_a_listed_model_it_had_not_imported(vendored):
    # setup
    package, files, markers = vendored
    asked = []
    policy = ClientClassPolicy(list_models=lambda: asked.append(1) or [python_model("vendored", files)])
    assert f"{package}.things" not in sys.modules
    # run: an object reference to a Thing, and a model exception
    [thing] = loads(with_reference(f"{package}.things.Thing"), policy)
    problem = policy.find_class(f"{package}.things", "Problem")
    # verify
    assert type(thing).__module__ == f"{package}.things" and type(thing).__name__ == "Thing"
    assert problem.__name__ == "Problem" and issubclass(problem, Exception)
    assert (markers / "imported").exists() and asked == [1]


def test_client_refuses_a_listed_model_whose_local_code_differs_and_imports_nothing(vendored):
    package, files, markers = vendored
    files = dict(files, **{f"{package}/things.py": b"class Thing: pass\n"})
    policy = ClientClassPolicy(list_models=lambda: [python_model("vendored", files)])
    with pytest.raises(ClassNotRegisteredError, match="not that model's registered code"):
        policy.dataclay_class(f"{package}.things.Thing")
    assert package not in sys.modules and list(markers.iterdir()) == []


def test_client_asks_again_after_a_refusal_and_loads_a_model_registered_again(vendored, monkeypatch):
    # setup: the Logic Module first lists an older version of the model, then the one on the path
    package, files, markers = vendored
    older = dict(files, **{f"{package}/things.py": b"class Thing: pass\n"})
    listed = [[python_model("vendored", older)], [python_model("vendored", files)]]
    now = [0.0]
    monkeypatch.setattr("dataclay._internal.serialization.model_catalog.time.monotonic", lambda: now[0])
    policy = ClientClassPolicy(list_models=lambda: listed.pop(0))
    # run
    with pytest.raises(SerializationError, match="not that model's registered code"):
        policy.find_class(f"{package}.things", "Thing")
    now[0] += RETRY_SECONDS + 1
    found = policy.find_class(f"{package}.things", "Thing")
    # verify
    assert found.__module__ == f"{package}.things" and listed == []


def test_client_refuses_a_package_whose_init_differs_from_the_models(vendored):
    package, files, markers = vendored
    files = dict(files, **{f"{package}/__init__.py": b""})
    policy = ClientClassPolicy(list_models=lambda: [python_model("vendored", files)])
    with pytest.raises(SerializationError, match="__init__.py"):
        policy.find_class(f"{package}.things", "Thing")
    assert package not in sys.modules and list(markers.iterdir()) == []


def test_client_says_how_to_get_the_code_of_a_listed_model_it_cannot_find():
    module = f"absent_{uuid.uuid4().hex[:8]}.things"
    files = {module.replace(".", "/") + ".py": b"class Thing: pass\n"}
    policy = ClientClassPolicy(list_models=lambda: [python_model("faraway", files)])
    with pytest.raises(SerializationError) as refused:
        policy.find_class(module, "Thing")
    message = str(refused.value)
    assert "faraway" in message and "dataclaycmd GetStubs" in message and "PYTHONPATH" in message
    assert "nothing was imported" in message


def test_client_ignores_withdrawn_models(vendored):
    package, files, markers = vendored
    policy = ClientClassPolicy(list_models=lambda: [python_model("vendored", files, withdrawn=True)])
    with pytest.raises(SerializationError, match="nothing was imported"):
        policy.find_class(f"{package}.things", "Thing")
    assert package not in sys.modules


def test_client_accepts_classes_defined_in_this_process_without_asking():
    from unitmodels.shop import Item, OutOfStock
    policy = ClientClassPolicy(list_models=lambda: pytest.fail("the Logic Module was asked"))
    assert policy.dataclay_class("unitmodels.shop.Item") is Item
    assert policy.find_class("unitmodels.shop", "OutOfStock") is OutOfStock


def test_client_does_not_ask_the_logic_module_about_standard_library_names(evil):
    asked = []
    policy = ClientClassPolicy(list_models=lambda: asked.append(1) or [])
    for module, name in (("os", "system"), ("subprocess", "Popen"), ("importlib", "import_module")):
        with pytest.raises(SerializationError, match="nothing was imported"):
            policy.find_class(module, name)
    with pytest.raises(SerializationError, match="nothing was imported"):
        policy.find_class("evil_on_import", "boom")
    assert asked == [1]
    assert_nothing_imported(evil)


def test_catalog_asks_once_per_unknown_module_until_the_retry_time():
    # setup
    now = [0.0]
    asked = []
    catalog = ModelCatalog(lambda: asked.append(1) or [], clock=lambda: now[0])
    # run
    for _ in range(3):
        assert catalog.models_defining("nowhere.mod") == []
    catalog.models_defining("elsewhere.mod")
    now[0] += RETRY_SECONDS + 1
    catalog.models_defining("nowhere.mod")
    # verify
    assert len(asked) == 3


def test_catalog_knows_modules_by_file_and_keeps_digests():
    content = b"class Thing: pass\n"
    catalog = ModelCatalog(lambda: [python_model("m", {"pkg/__init__.py": b"", "pkg/mod.py": content,
                                                       "README.txt": b"x"})])
    [code] = catalog.models_defining("pkg.mod")
    assert code.namespace == "m" and code.digests["pkg/mod.py"] == hashlib.sha256(content).hexdigest()
    assert catalog.models_defining("pkg")[0].namespace == "m" and catalog.models_defining("README") == []


def test_a_failing_model_list_is_a_serialization_error_and_imports_nothing(evil):
    from dataclay.exceptions import BackendUnavailableError

    def down():
        raise BackendUnavailableError("the Logic Module is down")

    with pytest.raises(SerializationError, match="could not ask the Logic Module"):
        ClientClassPolicy(list_models=down).find_class("evil_on_import", "boom")
    assert_nothing_imported(evil)


# ---- DATACLAY_PICKLE_ALLOW: exact names -------------------------------------------------------------


def test_numpy_values_round_trip_with_or_without_the_old_allow_entries(models_dir):
    numpy = pytest.importorskip("numpy")
    values = [numpy.arange(5), numpy.arange(6).reshape(2, 3).T, numpy.array([1, "a", None], dtype=object),
              numpy.float64(1.5), numpy.int32(3), numpy.dtype("f8")]
    for policy in (BackendClassPolicy(models_dir, NUMPY_ALLOW), ClientClassPolicy(NUMPY_ALLOW),
                   BackendClassPolicy(models_dir), ClientClassPolicy()):
        for value in values:
            decoded = loads(dumps(value)[0], policy)
            assert type(decoded) is type(value)
            assert numpy.array_equal(decoded, value) if isinstance(value, numpy.ndarray) else decoded == value
    with pytest.raises(SerializationError, match="DATACLAY_PICKLE_ALLOW=numpy.load"):
        loads(pickle.dumps(_Calls(numpy.load, ("x",)), 5), ClientClassPolicy(NUMPY_ALLOW))


class _Calls:
    def __init__(self, function, args):
        self.function, self.args = function, args

    def __reduce__(self):
        return self.function, self.args


def test_an_allow_entry_admits_its_exact_name_only(evil):
    policy = ClientClassPolicy(allow=("collections.ChainMap",))
    assert policy.find_class("collections", "ChainMap").__name__ == "ChainMap"
    for module, name in (("collections", "namedtuple"), ("collections.abc", "ChainMap"), ("evil_on_import", "x")):
        with pytest.raises(SerializationError, match="nothing was imported"):
            policy.find_class(module, name)
    assert_nothing_imported(evil)
