"""numpy, datetime, decimal, uuid, fractions and collections values load with no setting, on a client and in a
backend, and crafted pickles that would make numpy read or write memory it does not own, or run code, are
refused with a SerializationError."""
import collections
import datetime
import decimal
import fractions
import pickle
import uuid

import numpy
import pytest

from dataclay.exceptions import SerializationError
from dataclay._internal.serialization.decoder import loads
from dataclay._internal.serialization.encoder import dumps
from dataclay._internal.serialization.policy import BackendClassPolicy, ClientClassPolicy

core = getattr(numpy, "_core", None) or numpy.core
F8 = numpy.dtype("f8")

VALUES = [
    numpy.arange(10), numpy.zeros((3, 4), order="F"), numpy.arange(6).reshape(2, 3).T, numpy.array([], "f4"),
    numpy.zeros(3, dtype=[("a", "<i8"), ("b", "S3", (2,))]), numpy.array([(1, 2.5)], dtype=[("x", "<i4"), ("y", ">f8")]),
    numpy.array(["a", "bc"]), numpy.array([1, None, "x"], dtype=object), numpy.array([1 + 2j]),
    numpy.array(["2020-01-01"], dtype="M8[D]"), numpy.zeros(2, dtype=">f8"), numpy.ones((2, 2), dtype=bool),
    numpy.dtype([("a", "<i4"), ("b", "f8")], align=True), numpy.dtype("M8[ns]"), numpy.dtype(("i4", (2, 3))), F8,
    numpy.float64(1.5), numpy.int32(7), numpy.uint8(255), numpy.bool_(True), numpy.datetime64("2020-01-01T00:00"),
    numpy.str_("text"), numpy.float32,
    datetime.datetime(2024, 5, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=2))), datetime.date(2024, 5, 1),
    datetime.time(1, 2, 3), datetime.timedelta(days=3), decimal.Decimal("1.10"), uuid.UUID(int=7),
    fractions.Fraction(1, 3), collections.OrderedDict(a=1), collections.deque([1, 2], maxlen=5),
    collections.defaultdict(list, a=[1]), collections.Counter("abca"),
]


def same(a, b) -> bool:
    if isinstance(a, numpy.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and (
            list(a) == list(b) if a.dtype.hasobject else bool((a == b).all()))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("policy", [ClientClassPolicy(), BackendClassPolicy(None)], ids=["client", "backend"])
def test_scientific_values_load_with_no_setting(policy):
    for value in VALUES:
        decoded = loads(dumps(value)[0], policy)
        assert same(decoded, value), value
    assert loads(dumps({"a": numpy.arange(4)})[0], policy)["a"].sum() == 6


def test_arrays_decode_writable_and_in_band_buffers_of_both_kinds_load():
    # setup: a writable array pickles its data as a bytearray, a read-only one as bytes
    writable = numpy.arange(4.0)
    frozen = numpy.arange(4.0)
    frozen.flags.writeable = False
    # run
    decoded = loads(pickle.dumps(writable, 5), ClientClassPolicy())
    decoded[0] = 9
    # verify
    assert decoded.tolist() == [9, 1, 2, 3]
    assert loads(pickle.dumps(frozen, 5), ClientClassPolicy()).tolist() == [0, 1, 2, 3]


def test_out_of_band_buffers_are_refused_with_an_error():
    data = pickle.dumps(numpy.arange(4), 5, buffer_callback=lambda b: False)
    with pytest.raises(SerializationError, match="out-of-band"):
        loads(data, ClientClassPolicy())


def test_the_old_allow_list_entries_still_load_numpy():
    allow = ("numpy.dtype", "numpy.ndarray", "numpy._core.numeric._frombuffer", "numpy._core.multiarray._reconstruct",
             "numpy._core.multiarray.scalar")
    assert loads(dumps(numpy.arange(3))[0], ClientClassPolicy(allow)).tolist() == [0, 1, 2]


def test_numpy_1_names_load_with_the_installed_numpy():
    # numpy 1.x pickles write numpy.core.*: the same value, by those names, loads too
    # (protocol 3 writes names as text lines, so they can be swapped without re-framing)
    data = pickle.dumps([numpy.arange(3), numpy.float64(2)], 3)
    assert b"numpy._core.multiarray\n" in data
    decoded = loads(data.replace(b"numpy._core.multiarray\n", b"numpy.core.multiarray\n"), ClientClassPolicy())
    assert decoded[0].tolist() == [0, 1, 2] and decoded[1] == 2.0


# ---- crafted pickles -------------------------------------------------------------------------------------------


class Reduce:
    """Pickles as `function(*args)` with an optional BUILD state: how a crafted pickle is written."""

    def __init__(self, function, args, state=None):
        self.function, self.args, self.state = function, args, state

    def __reduce__(self):
        return (self.function, self.args) if self.state is None else (self.function, self.args, self.state)


def crafted_dtype(spec, state):
    return Reduce(numpy.dtype, (spec, False, True), state)


def refuse(value, match=None):
    for policy in (ClientClassPolicy(), BackendClassPolicy(None)):
        with pytest.raises(SerializationError, match=match):
            loads(pickle.dumps(value, 5), policy)


def test_a_dtype_field_outside_its_item_is_refused():
    crafted = crafted_dtype("V16", (3, "|", None, ("a",), {"a": (numpy.dtype("<i8"), 1000)}, 16, 1, 16))
    assert pickle.loads(pickle.dumps(crafted, 5)).fields["a"][1] == 1000  # numpy itself accepts it
    refuse(crafted, "dtype")


def test_an_object_field_in_a_dtype_cannot_read_raw_bytes_as_pointers():
    # setup: flags 0 claim the dtype holds no objects, so numpy would read the bytes b'AAAA...' as a PyObject*
    lying = crafted_dtype("V16", (3, "|", None, ("a",), {"a": (numpy.dtype("O"), 0)}, 16, 1, 0))
    assert not pickle.loads(pickle.dumps(lying, 5)).hasobject  # numpy itself believes it
    # run / verify: the dtype would hold objects, which its spec 'V16' does not: refused, alone or in use
    refuse(lying, "whether it holds objects")
    refuse(Reduce(core.numeric._frombuffer, (b"A" * 16, lying, (1,), "C")), "whether it holds objects")
    refuse(Reduce(core.multiarray.scalar, (lying, b"A" * 16)), "whether it holds objects")


def test_a_dtype_in_use_cannot_be_turned_into_one_holding_objects_afterwards():
    # setup: D = dtype('V16'); A = _frombuffer(b'A' * 16, D, (1,), 'C'); then BUILD D with an object field, so
    # that A's bytes would be read as a pointer (a pickle may BUILD a memoised dtype after using it)
    state = pickle.dumps((3, "|", None, ("a",), {"a": (numpy.dtype("O"), 0)}, 16, 1, 63), 3)[2:-1]
    data = (b"\x80\x03cnumpy\ndtype\nX\x03\x00\x00\x00V16\x89\x88\x87Rq\x640"
            b"cnumpy._core.numeric\n_frombuffer\n(C\x10" + b"A" * 16 + b"h\x64K\x01\x85X\x01\x00\x00\x00CtRq\x650"
            b"h\x64" + state + b"b0h\x65.")
    made = pickle.loads(data)  # what unrestricted unpickling makes of it (its items are not read: that would crash)
    assert made.dtype.hasobject and made.dtype.fields["a"][0] == numpy.dtype("O")
    # run / verify
    with pytest.raises(SerializationError, match="whether it holds objects"):
        loads(data, ClientClassPolicy())


def test_a_dtype_cannot_change_its_item_size():
    refuse(crafted_dtype("V16", (3, "|", None, ("a",), {"a": (numpy.dtype("<i8"), 0)}, 8, 1, 16)), "item size")


def test_a_dtype_size_that_lies_is_refused():
    refuse(crafted_dtype("S5", (3, "|", None, None, None, -5, 1, 0)), "dtype")


def test_a_dtype_state_never_changes_numpy_shared_dtypes():
    # setup: numpy.dtype('f8', False, False) is the process-wide float64 dtype; the state swaps its byte order
    value = Reduce(numpy.dtype, ("f8", False, False), (3, ">", None, None, None, -1, -1, 0))
    # run
    decoded = loads(pickle.dumps(value, 5), ClientClassPolicy())
    # verify
    assert decoded.str == ">f8" and decoded is not F8
    assert numpy.dtype("f8").str == "<f8" and numpy.arange(2.0).dtype.str == "<f8"


def test_an_object_array_with_fewer_items_than_its_shape_is_refused():
    array = Reduce(core.multiarray._reconstruct, (numpy.ndarray, (0,), b"b"),
                   (1, (1000,), numpy.dtype("O"), False, [1]))
    refuse(array, "1000 items")


def test_array_data_shorter_than_its_shape_is_refused():
    refuse(Reduce(core.multiarray._reconstruct, (numpy.ndarray, (0,), b"b"), (1, (1000,), F8, False, b"x" * 8)),
           "does not fit")
    refuse(Reduce(core.numeric._frombuffer, (b"x" * 8, F8, (1000,), "C")), "does not fit")
    refuse(Reduce(core.numeric._frombuffer, (b"x" * 8, F8, (1 << 62, 1 << 62), "C")), "too many items")


def test_reconstruct_with_arguments_numpy_never_writes_is_refused():
    refuse(Reduce(core.multiarray._reconstruct, (numpy.ndarray, (1 << 40,), b"b")), "_reconstruct")
    refuse(Reduce(core.multiarray._reconstruct, (collections.OrderedDict, (0,), b"b")), "_reconstruct")


def test_a_numpy_scalar_with_short_data_is_refused():
    refuse(Reduce(core.multiarray.scalar, (F8, b"\x00")), "8 bytes")


def test_state_is_given_only_to_what_this_pickle_just_made():
    # a second BUILD on the same dtype, and BUILD on a numpy scalar, are refused
    twice = Reduce(numpy.dtype, ("f8", False, True), (3, "<", None, None, None, -1, -1, 0))
    data = pickle.dumps(twice, 5)
    assert data.endswith(b"b.")
    # BUILD again on the memoised dtype: ...b then (state) b
    again = data[:-1] + pickle.dumps((3, ">", None, None, None, -1, -1, 0), 5)[2 + 9:-1] + b"b."
    with pytest.raises(SerializationError, match="did not just make"):
        loads(again, ClientClassPolicy())
    refuse(Reduce(numpy.float64, (1.0,), {"x": 1}), "did not just make")


def test_other_numpy_names_are_refused_and_the_error_names_the_setting():
    for function in (numpy.frombuffer, numpy.load, numpy.fromfile):
        with pytest.raises(SerializationError) as e:
            loads(pickle.dumps(Reduce(function, (b"",)), 5), ClientClassPolicy())
        name = f"{function.__module__}.{function.__qualname__}"
        assert f"DATACLAY_PICKLE_ALLOW={name}" in str(e.value)
        assert "on the clients and the backends" in str(e.value)


def test_a_defaultdict_factory_must_be_a_class_this_side_accepts():
    # accepted: built-in classes
    assert loads(pickle.dumps(collections.defaultdict(int, a=1), 5), ClientClassPolicy())["b"] == 0
    # refused: a numpy stand-in function, a refused global, a non-class value
    refuse(Reduce(collections.defaultdict, (core.multiarray.scalar,)), "default factory")
    refuse(Reduce(collections.defaultdict, (numpy.frombuffer,)), "DATACLAY_PICKLE_ALLOW")
    refuse(Reduce(collections.defaultdict, (numpy.float64(1),)), "default factory")
    refuse(Reduce(collections.defaultdict, (list, 1)), "default factory")


def test_array_classes_are_never_called_so_no_array_holds_uninitialised_memory():
    # numpy.ndarray((4,)) through REDUCE, NEWOBJ and protocol 0's OBJ: each an array of uninitialised memory
    crafted = [b"\x80\x02cnumpy\nndarray\nK\x04\x85R.", b"\x80\x02cnumpy\nndarray\nK\x04\x85\x81.",
               b"(cnumpy\nndarray\nI4\no."]
    for data in crafted:
        assert pickle.loads(data).shape == (4,)  # what unrestricted unpickling makes of it
        with pytest.raises(SerializationError, match="never so"):
            loads(data, ClientClassPolicy())


def test_truncated_array_data_is_refused():
    data = pickle.dumps(numpy.arange(100_000, dtype="f8"), 5)
    assert b"\x96" in data  # BYTEARRAY8, outside any frame
    for cut in (len(data) // 2, len(data) - 40):
        with pytest.raises(SerializationError):
            loads(data[:cut], ClientClassPolicy())
