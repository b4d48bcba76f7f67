"""Serialisation: persistent IDs, graph naming, and the restricted unpicklers."""
import builtins
import collections
import datetime
import decimal
import fractions
import io
import os
import pickle
import threading
import uuid

import numpy
import pytest

from dataclay.exceptions import ClassNotRegisteredError, InvalidArgumentError, SerializationError
from dataclay._internal.model.identity import IDENTITY
from dataclay._internal.model.states import PROXY, STATE_KEY
from dataclay._internal.runtime.base import become_proxy
from dataclay._internal.serialization.decoder import loads, loads_args, loads_call
from dataclay._internal.serialization.encoder import NO_ARGS, dumps, dumps_args
from dataclay._internal.serialization.graph import GraphWriter
from dataclay._internal.serialization.policy import BackendClassPolicy, ClientClassPolicy
from unitmodels.shop import Basket, Item, Node
from pickles import pickle_with_pid

BACKEND = str(uuid.uuid4())


def persisted(obj):
    """Makes a volatile object a PROXY as make_persistent would (without a cluster)."""
    oid = str(uuid.uuid4())
    become_proxy(obj, oid, BACKEND)
    return obj


def persistent_ids(data: bytes) -> list:
    """The persistent IDs a pickle holds, in order (an unpickler that loads no global at all)."""
    found = []

    class Recorder(pickle.Unpickler):
        def persistent_load(self, pid):
            found.append(pid)

        def find_class(self, module, name):
            raise AssertionError(f"unexpected global {module}.{name}")

    Recorder(io.BytesIO(data)).load()
    return found


class _Touch:
    """Unpickling this would create a file (os.system via REDUCE)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return os.system, (f"touch {self.path}",)


def test_persistent_object_inside_a_value_becomes_a_persistent_id_listed_in_references():
    item = persisted(Item("pen", 2))
    data, refs = dumps({"best": item, "n": 1})
    assert refs == (item.getID(),)
    assert persistent_ids(data) == [("dc", item.getID(), "unitmodels.shop.Item", BACKEND)]


def test_value_without_dataclay_objects_has_no_references_and_round_trips():
    value = {"a": [1, 2.5, "x", b"y", None], "b": (True, complex(1, 2))}
    data, refs = dumps(value)
    assert refs == ()
    assert loads(data, BackendClassPolicy(None)) == value


def test_volatile_object_in_arguments_travels_by_value_with_its_fields(models_dir):
    item = Item("pen", 2)
    payload = dumps_args((item,), {"by": 3})
    (args, kwargs) = loads_args(payload, BackendClassPolicy(models_dir))
    copy = args[0]
    assert copy is not item and isinstance(copy, Item) and not copy.is_persistent
    assert (copy.name, copy.price, copy.tags, kwargs) == ("pen", 2, [], {"by": 3})


def test_call_without_arguments_uses_the_shared_empty_encoding(models_dir):
    assert dumps_args((), {}) is NO_ARGS
    assert pickle.loads(NO_ARGS) == ((), {})
    # decoded without an unpickler, as any other encoding of no arguments is, each call its own kwargs
    policy = BackendClassPolicy(models_dir)
    first, second = loads_call(NO_ARGS, policy), loads_call(NO_ARGS, policy)
    assert first == second == ((), {}, False) and first[1] is not second[1]
    assert loads_call(dumps_args((), {}, plain_flags=True), policy) == ((), {}, True)
    assert loads_call(pickle.dumps(((), {}), 2), policy) == ((), {}, False)


def test_persistent_id_decodes_to_the_one_instance_of_the_identity_map(models_dir):
    item = persisted(Item("pen", 2))
    data, _ = dumps([item, item])
    first, second = loads(data, BackendClassPolicy(models_dir))
    assert first is item and second is item


def test_unknown_persistent_id_becomes_a_proxy_of_its_class(models_dir):
    oid = str(uuid.uuid4())
    data = pickle_with_pid(("dc", oid, "unitmodels.shop.Node", BACKEND))
    node = loads(data, BackendClassPolicy(models_dir))
    assert isinstance(node, Node) and node.__dict__[STATE_KEY] is PROXY and node.getID() == oid
    assert IDENTITY.get(oid) is node


def test_graph_with_a_cycle_and_a_shared_object_names_each_object_once():
    a, b, c = Node(1), Node(2), Node(3)
    a.next, b.next, c.next = b, c, a
    shared = Item("shared", 1)
    basket = Basket("x", [shared, Item("other", 2), shared])
    writer = GraphWriter(BACKEND)
    writer.add_root(a)
    ring = writer.drain()
    writer2 = GraphWriter(BACKEND)
    writer2.add_root(basket)
    graph = writer2.drain()
    assert len(ring) == 3 and len({r.id for r in ring}) == 3
    assert [r.fields[1].references for r in ring] == [(ring[1].id,), (ring[2].id,), (ring[0].id,)]
    assert len(graph) == 3
    items_field = next(f for f in graph[0].fields if f.name == "items")
    assert items_field.references == (graph[1].id, graph[2].id)
    assert [pid[1] for pid in persistent_ids(items_field.value)] == [graph[1].id, graph[2].id, graph[1].id]


def test_graph_refers_to_already_persistent_objects_without_rewriting_them():
    old = persisted(Item("old", 1))
    writer = GraphWriter(BACKEND)
    writer.add_root(Basket("x", [old]))
    records = writer.drain()
    assert len(records) == 1 and records[0].fields[1].references == (old.getID(),)


def test_not_recursive_graph_refuses_a_reachable_volatile_object():
    writer = GraphWriter(BACKEND, recursive=False)
    writer.add_root(Node(1, Node(2)))
    with pytest.raises(InvalidArgumentError, match="recursive=False"):
        writer.drain()


@pytest.mark.parametrize("value", [
    [1, 2, {"x": (3, 4)}], {1, 2}, frozenset({3}), bytearray(b"ab"), range(1, 9, 2), slice(1, 5),
    complex(1, -1), datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone.utc), datetime.date(2020, 1, 2),
    datetime.time(3, 4), datetime.timedelta(days=2), decimal.Decimal("1.25"), fractions.Fraction(3, 7),
    uuid.UUID(int=7), collections.OrderedDict(a=1), collections.defaultdict(list, a=[1]),
    collections.deque([1, 2], maxlen=5), collections.Counter("hello"), ValueError("bad", 3), KeyError("k"),
    Ellipsis,
])
def test_backend_unpickler_accepts_the_safe_builtins(value):
    decoded = loads(pickle.dumps(value, 5), BackendClassPolicy(None))
    if isinstance(value, BaseException):
        assert type(decoded) is type(value) and decoded.args == value.args
    else:
        assert decoded == value and type(decoded) is type(value)


def test_backend_unpickler_accepts_model_classes_from_the_models_dir(models_dir):
    from unitmodels.shop import OutOfStock
    decoded = loads(pickle.dumps(OutOfStock("none left"), 5), BackendClassPolicy(models_dir))
    assert type(decoded) is OutOfStock and decoded.args == ("none left",)


def test_backend_refuses_a_model_class_when_its_module_is_not_under_the_models_dir(tmp_path):
    with pytest.raises(SerializationError, match="unitmodels.shop.OutOfStock"):
        from unitmodels.shop import OutOfStock
        loads(pickle.dumps(OutOfStock("x"), 5), BackendClassPolicy(tmp_path))


@pytest.mark.parametrize("crafted", [
    lambda path: pickle.dumps(_Touch(path), 5),
    lambda path: pickle.dumps(_Touch(path), 0),
    lambda path: b"cbuiltins\neval\n(V__import__('os').system('touch " + str(path).encode() + b"')\ntR.",
    lambda path: b"cbuiltins\ngetattr\n(cos\nsystem\nVx\ntR.",
    lambda path: b"ccopyreg\n_reconstructor\n(cos\nsystem\nc__builtin__\nobject\nNtR.",
    lambda path: b"\x80\x02cposix\nsystem\nq\x00X\x05\x00\x00\x00touchq\x01\x85q\x02Rq\x03.",
    lambda path: b"(S'touch " + str(path).encode() + b"'\nios\nsystem\n.",
])
def test_crafted_pickles_are_refused_and_run_nothing(tmp_path, models_dir, crafted):
    target = tmp_path / "pwned"
    data = crafted(target)
    for policy in (BackendClassPolicy(models_dir), ClientClassPolicy()):
        with pytest.raises(SerializationError):
            loads(data, policy)
    assert not target.exists()


def test_a_refused_argument_inside_method_arguments_is_a_serialization_error(tmp_path, models_dir):
    target = tmp_path / "pwned"
    with pytest.raises(SerializationError, match="posix.system|os.system"):
        loads_args(pickle.dumps(((_Touch(target),), {}), 5), BackendClassPolicy(models_dir))
    assert not target.exists()


def test_a_dataclay_4_callers_flag_is_read_and_any_other_third_element_is_refused(models_dir):
    policy = BackendClassPolicy(models_dir)
    # verify: the flag a Client's call carries, and without it
    assert loads_call(dumps_args((1,), {"a": 2}, plain_flags=True), policy) == ((1,), {"a": 2}, True)
    assert loads_call(dumps_args((), {}, plain_flags=True), policy) == ((), {}, True)
    assert loads_call(dumps_args((1,), {}), policy) == ((1,), {}, False)
    for crafted in (((), {}, False), ((), {}, 1), ((), {}, "yes"), ((), {}, True, True)):
        with pytest.raises(SerializationError, match="args_tuple, kwargs_dict"):
            loads_call(pickle.dumps(crafted, 5), policy)


def test_malformed_arguments_and_references_are_refused(models_dir):
    policy = BackendClassPolicy(models_dir)
    with pytest.raises(SerializationError, match="args_tuple"):
        loads_args(pickle.dumps([1, 2], 5), policy)
    with pytest.raises(SerializationError, match="malformed object reference"):
        loads(pickle_with_pid(("dc", "x")), policy)
    with pytest.raises(SerializationError, match="bad ID"):
        loads(pickle_with_pid(("dc", "not-a-uuid", "unitmodels.shop.Item", "")), policy)
    with pytest.raises(SerializationError):
        loads(pickle_with_pid(("dc", str(uuid.uuid4()), "os.system", "")), policy)
    with pytest.raises(SerializationError):
        loads(b"\x80\x05garbage", policy)


def test_numpy_arrays_load_with_no_setting_and_other_globals_only_when_allowed():
    array = numpy.arange(5)
    assert numpy.array_equal(loads(dumps(array)[0], BackendClassPolicy(None)), array)
    import ipaddress
    data, _ = dumps(ipaddress.ip_address("10.0.0.1"))
    with pytest.raises(SerializationError, match="DATACLAY_PICKLE_ALLOW=ipaddress.IPv4Address"):
        loads(data, BackendClassPolicy(None))
    allowed = BackendClassPolicy(None, allow=("ipaddress.IPv4Address",))
    assert loads(data, allowed) == ipaddress.ip_address("10.0.0.1")


def test_client_policy_loads_importable_dataclay_classes_and_model_exceptions():
    from unitmodels.shop import OutOfStock
    policy = ClientClassPolicy()
    assert policy.dataclay_class("unitmodels.shop.Basket") is Basket
    assert policy.find_class("unitmodels.shop", "OutOfStock") is OutOfStock
    with pytest.raises(SerializationError):
        policy.find_class("pytest", "fail")
    with pytest.raises(ClassNotRegisteredError):
        policy.dataclay_class("unitmodels.shop.OutOfStock")
    with pytest.raises(ClassNotRegisteredError):
        policy.dataclay_class("no_such_module_here.Thing")


def test_unpicklable_values_raise_serialization_error_naming_the_value():
    with pytest.raises(SerializationError, match="field Item.price"):
        dumps(lambda: 1, what="field Item.price")
    item = Item("pen", 1)
    item.tags = [threading.Lock()]
    writer = GraphWriter(BACKEND)
    writer.add_root(item)
    with pytest.raises(SerializationError, match="Item.tags"):
        writer.drain()


def test_volatile_state_with_unknown_fields_is_refused(models_dir):
    data = pickle.dumps(Item("pen", 1), 5).replace(b"price", b"pwned")
    with pytest.raises(SerializationError, match="no persistent field"):
        loads(data, BackendClassPolicy(models_dir))


def test_builtin_exception_names_cover_every_builtin_exception_type():
    from dataclay._internal.serialization.safe_names import SAFE_GLOBALS
    exceptions = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    assert {("builtins", n) for n in exceptions} <= SAFE_GLOBALS
    assert ("builtins", "eval") not in SAFE_GLOBALS and ("builtins", "getattr") not in SAFE_GLOBALS
