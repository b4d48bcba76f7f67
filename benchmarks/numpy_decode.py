"""Decode time of numpy values (issue 23): the checked stand-ins every client and backend now use by
default, against numpy's own functions through the C unpickler (what listing numpy's names in
DATACLAY_PICKLE_ALLOW gave before), in the same run. Median of 7 runs of n decodes each.

    .venv/bin/python benchmarks/numpy_decode.py

On the development VM (2 vCPUs, shared, see README.md), 2026-11-26:

    array 1M f8 (8 MB)           checked    1194.8 us   numpy's own (C)     671.0 us   ratio  1.78
    array 1k f8                  checked      39.7 us   numpy's own (C)       7.2 us   ratio  5.50
    structured 10k               checked      92.5 us   numpy's own (C)      12.4 us   ratio  7.44
    list of 1000 numpy scalars   checked    3799.8 us   numpy's own (C)     159.3 us   ratio 23.86
    dict of 100 small arrays     checked     931.5 us   numpy's own (C)     135.7 us   ratio  6.86

A numpy value costs about 30 us more to decode (the pure-Python checked unpickler), and each numpy scalar
about 3.5 us; large arrays are bound by one copy of their data, as before."""
import io
import pickle
import statistics
import time

import numpy

from dataclay._internal.serialization import decoder
from dataclay._internal.serialization.policy import ClientClassPolicy

ALLOW = ("numpy.dtype", "numpy.ndarray", "numpy._core.numeric._frombuffer", "numpy._core.multiarray._reconstruct",
         "numpy._core.multiarray.scalar")
cases = {"array 1M f8 (8 MB)": numpy.arange(1_000_000, dtype="f8"), "array 1k f8": numpy.arange(1000, dtype="f8"),
         "structured 10k": numpy.zeros(10_000, dtype=[("a", "i4"), ("b", "f8")]),
         "list of 1000 numpy scalars": [numpy.float64(i) for i in range(1000)],
         "dict of 100 small arrays": {str(i): numpy.arange(10) for i in range(100)}}
checked, raw = ClientClassPolicy(), ClientClassPolicy(ALLOW)



class Raw(pickle.Unpickler):
    """The old path: the C unpickler, numpy's own functions."""

    def find_class(self, module, name):
        return raw.find_class(module, name)


def t(f, n):
    runs = []
    for _ in range(7):
        s = time.perf_counter()
        for _ in range(n): f()
        runs.append((time.perf_counter() - s) / n)
    return statistics.median(runs)


for name, v in cases.items():
    data = pickle.dumps(v, 5)
    n = 20 if "1M" in name else 200
    a = t(lambda: decoder.loads(data, checked), n)
    b = t(lambda: Raw(io.BytesIO(data)).load(), n)
    print(f"{name:28s} checked {a*1e6:9.1f} us   numpy's own (C) {b*1e6:9.1f} us   ratio {a/b:5.2f}")
