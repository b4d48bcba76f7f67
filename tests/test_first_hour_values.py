"""numpy and the other common scientific values work with no setting on a real cluster: as fields, method
arguments and results, computed on in the backend; pandas works once DATACLAY_PICKLE_ALLOW lists what the
refusal names."""
import pathlib

import pytest

from conftest import started_cluster
from harness.models import run_with_model, write_model

pytestmark = pytest.mark.timeout(300)

MODEL = '''
import numpy
from dataclay import DataClayObject, activemethod


class Sample(DataClayObject):
    """A numpy array and the usual scientific values beside it."""

    values: numpy.ndarray
    meta: dict

    def __init__(self, values, meta=None):
        self.values = values
        self.meta = meta or {}

    @activemethod
    def total(self):
        return self.values.sum()

    @activemethod
    def scaled(self, factor):
        return self.values * factor

    @activemethod
    def add(self, other):
        self.values = self.values + other
        return self.values.dtype

    @activemethod
    def describe(self):
        return {key: type(value).__name__ for key, value in self.meta.items()}

    @activemethod
    def keep(self, value):
        self.meta["kept"] = value
        return value
'''

def pandas_allow() -> str:
    """The DATACLAY_PICKLE_ALLOW value docs/models.md gives for pandas (tested here, so it cannot rot)."""
    docs = (pathlib.Path(__file__).parent.parent / "docs" / "models.md").read_text()
    return next(line.split("=", 1)[1] for line in docs.splitlines() if line.startswith("DATACLAY_PICKLE_ALLOW=pandas"))



@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    return write_model(tmp_path_factory.mktemp("sci"), "labdata", MODEL)


def start(model_dir, **options):
    cluster = started_cluster(backends=1, **options)
    cluster.register_models("labdata", model_dir)
    return cluster


def run(cluster, model_dir, body: str) -> dict:
    return run_with_model(cluster, model_dir, """
        import collections, datetime, decimal, fractions, json, uuid
        import numpy
        from labdata.model import Sample
    """, body)


def test_numpy_fields_arguments_and_results_work_with_no_setting(model_dir):
    cluster = start(model_dir)
    try:
        assert not any(k.endswith("PICKLE_ALLOW") for k in cluster.env)
        out = run(cluster, model_dir, """
            s = Sample(numpy.arange(6, dtype="f8").reshape(2, 3))
            s.make_persistent("s1")
            again = Sample.get_by_alias("s1")
            read = again.values.tolist()
            total = again.total()
            scaled = again.scaled(numpy.float32(2))
            dtype = again.add(numpy.ones((2, 3), dtype="i4"))
            structured = numpy.array([(1, 2.5)], dtype=[("x", "<i4"), ("y", "<f8")])
            kept = again.keep(structured)
            print(json.dumps({
                "read": read, "after": again.values.tolist(), "total": [type(total).__name__, float(total)],
                "scaled": [type(scaled).__name__, scaled.dtype.str, scaled.tolist()], "dtype": dtype.str,
                "kept": [kept.dtype.names, kept["y"].tolist()],
            }))
        """)
        assert out == {
            "read": [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "after": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "total": ["float64", 15.0],
            "scaled": ["ndarray", "<f8", [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]], "dtype": "<f8",
            "kept": [["x", "y"], [2.5]],
        }
        # the scientific standard-library values, as fields, arguments and results
        out = run(cluster, model_dir, """
            meta = {"when": datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc), "day": datetime.date(2024, 5, 1),
                    "at": datetime.time(1, 2), "span": datetime.timedelta(hours=3), "price": decimal.Decimal("1.10"),
                    "id": uuid.UUID(int=5), "ratio": fractions.Fraction(1, 3), "order": collections.OrderedDict(a=1),
                    "queue": collections.deque([1, 2], maxlen=3), "groups": collections.defaultdict(list, a=[1]),
                    "counts": collections.Counter("abca"), "when64": numpy.datetime64("2024-05-01")}
            s = Sample(numpy.zeros(1), meta)
            s.make_persistent()
            back = s.keep(collections.Counter("xx"))
            print(json.dumps({"types": s.describe(), "back": dict(back), "price": str(s.meta["price"])}))
        """)
        assert out["types"] == {"when": "datetime", "day": "date", "at": "time", "span": "timedelta",
                                "price": "Decimal", "id": "UUID", "ratio": "Fraction", "order": "OrderedDict",
                                "queue": "deque", "groups": "defaultdict", "counts": "Counter",
                                "when64": "datetime64", "kept": "Counter"}
        assert out["back"] == {"x": 2} and out["price"] == "1.10"
    finally:
        cluster.stop()


def test_pandas_is_refused_with_the_setting_to_add_and_works_once_added(model_dir):
    pytest.importorskip("pandas")
    body = """
        import pandas
        from dataclay.exceptions import SerializationError
        frame = pandas.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"], "c": pandas.Categorical(["u", "v", "u"]),
                                  "t": pandas.to_datetime(["2020-01-01"] * 3)})
        s = Sample(numpy.zeros(1))
        s.make_persistent()
        try:
            kept = s.keep(frame)
            print(json.dumps({"sum": int(kept["a"].sum()), "b": list(kept["b"]), "same": bool(kept.equals(frame)),
                              "column": int(s.keep(frame["a"]).sum()),
                              "when": str(s.keep(pandas.Timestamp("2020-01-02")))}))
        except SerializationError as e:
            print(json.dumps({"refused": str(e)}))
    """
    cluster = start(model_dir)
    try:
        refused = run(cluster, model_dir, body)["refused"]
        assert "add it to DATACLAY_PICKLE_ALLOW (DATACLAY_PICKLE_ALLOW=pandas." in refused
        assert "on the clients and the backends" in refused
    finally:
        cluster.stop()
    cluster = start(model_dir, extra_env={"DATACLAY_PICKLE_ALLOW": pandas_allow()})
    try:
        assert run(cluster, model_dir, body) == {"sum": 6, "b": ["x", "y", "z"], "same": True, "column": 6,
                                           "when": "2020-01-02 00:00:00"}
    finally:
        cluster.stop()


def test_proxies_print_class_id_and_alias_and_objects_name_their_backend(model_dir):
    cluster = started_cluster(backends=2)
    cluster.register_models("labdata", model_dir)
    try:
        made = run(cluster, model_dir, """
            import asyncio
            s = Sample(numpy.zeros(1))
            volatile = repr(s)
            s.make_persistent("alice")
            backends = api.get_backends()
            name = s.get_location_name()
            print(json.dumps({"volatile": volatile, "stored": repr(s), "id": s.getID(), "name": name,
                              "expected": backends[s.get_location()].name,
                              "async": asyncio.run(s.a_get_location_name()),
                              "names": sorted(b.name for b in backends.values())}))
        """)
        assert made["volatile"].startswith("<labdata.model.Sample (volatile, not persistent) at 0x")
        assert made["stored"] == f"<labdata.model.Sample {made['id']} alias='alice'>"
        assert made["name"] == made["expected"] == made["async"] and made["name"] in made["names"]
        assert made["name"] in cluster.status()
        found = run(cluster, model_dir, f"""
            by_alias = Sample.get_by_alias("alice")
            print(json.dumps({{"alias": repr(by_alias), "name": by_alias.get_location_name()}}))
        """)
        assert found == {"alias": f"<labdata.model.Sample {made['id']} alias='alice'>", "name": made["name"]}
        by_id = run(cluster, model_dir, f"""
            print(json.dumps({{"id": repr(api.get_by_id({made['id']!r}))}}))
        """)
        assert by_id == {"id": f"<labdata.model.Sample {made['id']}>"}
    finally:
        cluster.stop()
