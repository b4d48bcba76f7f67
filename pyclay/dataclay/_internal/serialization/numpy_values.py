"""numpy arrays, scalars and dtypes in restricted unpickling, accepted by default and checked.

numpy's own reconstruction functions trust their arguments: `dtype.__setstate__` accepts a field at any
offset, or an object field in a dtype that says it holds no objects (its bytes then read as pointers), and
`ndarray.__setstate__` fills an object array from a list without checking its length. A crafted pickle could
so read or write memory it does not own. The globals numpy's pickles use are therefore never numpy's own
functions here but the checked stand-ins of this module, and the state that pickle's BUILD applies to a
dtype or an array goes through `set_state` (the decoder's checked unpickler calls it), which:

- applies a dtype's state to a scratch copy, rebuilds that dtype with numpy's public constructor (which
  checks offsets, sizes and object fields) and gives the new dtype only the state numpy itself produces
  for the rebuilt one;
- fills an array only if it is a fresh `_reconstruct` result, the dtype is a numpy dtype and the data is
  exactly as long as shape and dtype say (a list of that many items for object dtypes);
- refuses BUILD on anything else numpy made (scalars, dtypes or arrays not fresh from this pickle).

`np.dtype` is always called with copy=True: a state may never reach numpy's shared built-in dtypes.
Both numpy 1.x (`numpy.core.*`) and 2.x (`numpy._core.*`) names map to the installed numpy."""
from __future__ import annotations

import importlib
import math
import pickle
import sys
import types

from dataclay.exceptions import SerializationError

_MULTIARRAY = ("numpy.core.multiarray", "numpy._core.multiarray")
_NUMERIC = ("numpy.core.numeric", "numpy._core.numeric")
_SCALAR_TYPES = (
    "bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intp", "uintp",
    "float16", "float32", "float64", "longdouble", "complex64", "complex128", "clongdouble", "str_", "bytes_",
    "datetime64", "timedelta64",
)

RECONSTRUCT, FROMBUFFER, SCALAR, DTYPE, NDARRAY = "reconstruct", "frombuffer", "scalar", "dtype", "ndarray"

GLOBALS: dict = {
    **{(m, "_reconstruct"): RECONSTRUCT for m in _MULTIARRAY},
    **{(m, "scalar"): SCALAR for m in _MULTIARRAY},
    **{(m, "_frombuffer"): FROMBUFFER for m in _NUMERIC},
    ("numpy", "dtype"): DTYPE,
    ("numpy", "ndarray"): NDARRAY,
    **{("numpy", name): "type" for name in _SCALAR_TYPES},
}
"""(module, name) as numpy's pickles write them -> what stands for it here. Every other numpy name (numpy.load,
numpy.frombuffer, numpy.ma, ...) is refused unless DATACLAY_PICKLE_ALLOW lists it."""

MAX_ITEMS = 1 << 48
MAX_DEPTH = 32


def _numpy():
    try:
        return importlib.import_module("numpy")
    except ImportError as e:
        raise SerializationError(f"the value holds numpy data but numpy cannot be imported here ({e}): install "
                                 f"numpy where this program runs") from None


def _multiarray():
    np = _numpy()
    core = getattr(np, "_core", None) or importlib.import_module("numpy.core")
    return core.multiarray


class Fresh:
    """What one unpickling made with the stand-ins: the only dtypes and arrays a BUILD may give state to."""

    def __init__(self):
        self._made: dict = {}

    def add(self, value):
        self._made[id(value)] = value  # kept alive, so an ID is not reused while this unpickling runs
        return value

    def take(self, value) -> bool:
        return self._made.pop(id(value), None) is value


def stand_in(kind: str, module: str, name: str, fresh: Fresh):
    """The callable or type that a numpy global `module.name` of `kind` loads as in one unpickling."""
    np = _numpy()
    if kind == "type":
        found = getattr(np, name, None)
        if not isinstance(found, type):
            raise SerializationError(f"refused {module}.{name}: not a numpy scalar type in this numpy")
        return found
    if kind == NDARRAY:
        return np.ndarray
    if kind == DTYPE:
        def dtype(spec, align=False, copy=True):
            if type(spec) is not str or type(align) is not bool:
                raise SerializationError(f"refused numpy.dtype{(spec, align)!r}: numpy pickles a dtype as a type "
                                         f"string and flags")
            return fresh.add(np.dtype(spec, align, True))
        return dtype
    if kind == RECONSTRUCT:
        reconstruct = _multiarray()._reconstruct

        def _reconstruct(subtype, shape, code):
            if not (isinstance(subtype, type) and issubclass(subtype, np.ndarray)) or shape != (0,) \
                    or code not in (b"b", "b"):
                raise SerializationError("refused numpy _reconstruct with arguments numpy never pickles")
            return fresh.add(reconstruct(subtype, (0,), b"b"))
        return _reconstruct
    if kind == SCALAR:
        scalar = _multiarray().scalar

        def _scalar(dtype, data=None):
            dtype = _checked_dtype(np, dtype)
            if dtype.hasobject:
                if dtype.kind != "O" or dtype.fields is not None:
                    raise SerializationError(f"refused a numpy scalar of dtype {dtype}: object fields")
                return scalar(dtype, data)
            if type(data) is not bytes or len(data) != dtype.itemsize:
                raise SerializationError(f"refused a numpy scalar of dtype {dtype}: its data is not "
                                         f"{dtype.itemsize} bytes")
            return scalar(dtype, data)
        return _scalar
    if kind == FROMBUFFER:
        def _frombuffer(buf, dtype, shape, order):
            dtype = _checked_dtype(np, dtype)
            if dtype.hasobject:
                raise SerializationError(f"refused a numpy array of dtype {dtype} from raw bytes: it holds objects")
            if not isinstance(buf, (bytes, bytearray, memoryview, pickle.PickleBuffer)):
                raise SerializationError(f"refused a numpy array from a {type(buf).__name__}, not a buffer")
            items = _items(shape)
            if order not in ("C", "F") or memoryview(buf).nbytes != items * dtype.itemsize:
                raise SerializationError(f"refused a numpy array whose data does not fit shape {shape!r} and "
                                         f"dtype {dtype}")
            return np.frombuffer(buf, dtype=dtype).reshape(shape, order=order)
        return _frombuffer
    raise SerializationError(f"refused {module}.{name}")


def guards(inst) -> bool:
    """True if a BUILD on `inst` must go through set_state (a numpy object)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(inst, (np.dtype, np.ndarray, np.generic))


def set_state(inst, state, fresh: Fresh) -> None:
    """Applies pickle state to a numpy object, checked as the module docstring says."""
    np = _numpy()
    if not fresh.take(inst):
        raise SerializationError(f"refused to set the state of a {type(inst).__name__} this pickle did not just "
                                 f"make with numpy's own pickle functions")
    if isinstance(inst, np.dtype):
        _set_dtype_state(np, inst, state)
    elif isinstance(inst, np.ndarray):
        _set_array_state(np, inst, state)
    else:
        raise SerializationError(f"refused to set the state of a numpy {type(inst).__name__}")


_REBUILT: dict = {}
"""(dtype class, dtype text, state) -> the state numpy gives its rebuild: a state decides its rebuild alone, so
plain dtypes (whose state is hashable) are rebuilt once per process."""
_REBUILT_MAX = 1024


def _set_dtype_state(np, inst, state) -> None:
    if type(state) is not tuple:
        raise SerializationError("refused a numpy dtype state that is not a tuple")
    try:
        key = (type(inst), inst.str, state)
        known = _REBUILT.get(key)
    except TypeError:  # a structured dtype's state holds a dict
        key = known = None
    if known is not None:
        inst.__setstate__(known)  # cached only after passing every check below for this very key
        return
    # a new dtype of the same text: np.dtype(inst, copy=True) returns inst itself
    scratch = np.dtype(inst.str, False, True)
    if scratch is inst or type(scratch) is not type(inst):
        raise SerializationError(f"refused to set the state of numpy dtype {inst}")
    try:
        scratch.__setstate__(state)  # stores what it is given: nothing reads it as memory before the rebuild
        rebuilt = np.dtype(_spec(np, scratch, 0), align=bool(scratch.isalignedstruct))
    except SerializationError:
        raise
    except Exception as e:
        raise SerializationError(f"refused a numpy dtype state numpy cannot rebuild: {type(e).__name__}: {e}") \
            from None
    if type(rebuilt) is not type(inst):
        raise SerializationError(f"refused a numpy dtype state that turns {inst} into {rebuilt}")
    # Arrays or scalars may already use `inst` (a pickle can pass it on before its BUILD): its state may
    # then change only what is safe for data laid out for it, never the item size or whether it holds objects.
    if rebuilt.itemsize != inst.itemsize or rebuilt.hasobject != inst.hasobject:
        raise SerializationError(f"refused a numpy dtype state that turns {inst} into {rebuilt}, changing its item "
                                 f"size or whether it holds objects (dataClay does not load structured dtypes "
                                 f"with object fields)")
    rebuilt_state = rebuilt.__reduce__()[2]
    inst.__setstate__(rebuilt_state)
    if key is not None and len(_REBUILT) < _REBUILT_MAX:
        _REBUILT[key] = rebuilt_state


def _spec(np, d, depth: int):
    """The public-constructor description of dtype `d` (whose state may be crafted)."""
    if depth > MAX_DEPTH:
        raise SerializationError("refused a numpy dtype nested too deep")
    if d.fields is not None:
        names, fields = d.names, d.fields
        if type(names) is not tuple or type(fields) not in (dict, types.MappingProxyType) or not names:
            raise SerializationError("refused a numpy dtype state with malformed fields")
        spec: dict = {"names": [], "formats": [], "offsets": [], "titles": [], "itemsize": d.itemsize}
        for name in names:
            entry = fields.get(name) if type(name) is str else None
            if type(entry) is not tuple or len(entry) not in (2, 3) or not isinstance(entry[0], np.dtype) \
                    or type(entry[1]) is not int:
                raise SerializationError(f"refused a numpy dtype state with a malformed field {name!r}")
            spec["names"].append(name)
            spec["formats"].append(_spec(np, entry[0], depth + 1))
            spec["offsets"].append(entry[1])
            spec["titles"].append(entry[2] if len(entry) == 3 else None)
        if not any(t is not None for t in spec["titles"]):
            del spec["titles"]
        return spec
    if d.subdtype is not None:
        base, shape = d.subdtype
        if not isinstance(base, np.dtype) or type(shape) is not tuple:
            raise SerializationError("refused a numpy dtype state with a malformed sub-array")
        _items(shape)
        return _spec(np, base, depth + 1), shape
    if d.itemsize < 0:
        raise SerializationError("refused a numpy dtype state with a negative size")
    if d.kind == "V" and d.itemsize == 0:
        return "V"
    return d.str


def _checked_dtype(np, dtype):
    if not isinstance(dtype, np.dtype):
        raise SerializationError(f"refused a numpy value whose dtype is a {type(dtype).__name__}")
    return dtype


def _items(shape) -> int:
    if type(shape) is not tuple or not all(type(n) is int and 0 <= n for n in shape) or len(shape) > 64:
        raise SerializationError(f"refused a numpy shape {shape!r}")
    items = math.prod(shape)
    if items > MAX_ITEMS:
        raise SerializationError(f"refused a numpy shape {shape!r}: too many items")
    return items


def _set_array_state(np, inst, state) -> None:
    if not (type(state) is tuple and len(state) == 5 and type(state[0]) is int and type(state[3]) is bool):
        raise SerializationError("refused a numpy array state that is not (version, shape, dtype, fortran, data)")
    _, shape, dtype, _, data = state
    dtype = _checked_dtype(np, dtype)
    items = _items(shape)
    if dtype.hasobject:
        if type(data) is not list or len(data) != items:
            raise SerializationError(f"refused a numpy object array state: {items} items need a list of {items}")
    elif type(data) not in (bytes, bytearray) or len(data) != items * dtype.itemsize:
        raise SerializationError(f"refused a numpy array state whose data does not fit shape {shape!r} and dtype "
                                 f"{dtype}")
    inst.__setstate__(state)


def guards_type(cls: type) -> bool:
    """True if instances of `cls` are numpy objects whose state set_state must check."""
    np = sys.modules.get("numpy")
    return np is not None and issubclass(cls, (np.dtype, np.ndarray, np.generic))


def check_callable(target) -> None:
    """Refuses to call an array class from a pickle (the result would hold uninitialised memory)."""
    np = sys.modules.get("numpy")
    if np is not None and isinstance(target, type) and issubclass(target, np.ndarray):
        raise SerializationError(f"refused to call {target.__module__}.{target.__qualname__} from a pickle: numpy "
                                 f"pickles arrays through _reconstruct or _frombuffer, never so")
