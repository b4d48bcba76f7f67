"""Reads a backend answers from its store without waking the caller's execution environment: field
reads, and methods whose whole body returns a field, once the environment vouched for them
(docs/internals.md "Reads served from the store"). Every answer must be the one the environment
would give: after updates, for classes with their own __getstate__/__setstate__, for methods that do
more, and after the model's code changes."""
import json
import textwrap

from dataclay._internal.proto import common_pb2
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient
from harness.models import run_with_model, write_model

MODEL = textwrap.dedent("""
    from dataclay import DataClayObject, activemethod

    class Plain(DataClayObject):
        n: int

        def __init__(self, n):
            self.n = n

        @activemethod
        def get(self) -> int:
            return self.n

        @activemethod
        def twice(self) -> int:
            return self.n * 2

        @activemethod
        def plus(self, k: int = 0) -> int:
            return self.n

        @activemethod
        def bump(self) -> int:
            self.n += 1
            return self.n

    class Shifted(DataClayObject):
        # stores n - 1000 and rebuilds n + 1000: a read must run this code, never return the stored value
        n: int

        def __init__(self, n):
            self.n = n

        def __getstate__(self):
            return {"n": self.n - 1000}

        def __setstate__(self, state):
            self.n = state["n"] + 1000

        @activemethod
        def get(self) -> int:
            return self.n
""")

READS = """
    p = Plain.get_by_alias("p"); s = Shifted.get_by_alias("s")
    print(json.dumps({"get": [p.get() for _ in range(20)], "n": [p.n for _ in range(20)],
                      "shifted": [s.get(), s.n]}))
"""


def environment_calls(cluster) -> int:
    """Calls the backend sent to the administrator's Python execution environment since it started."""
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    (backend,) = lm.get_backends()
    status = DataServiceClient(f"{backend.host}:{backend.port}", lm.token).get_status()
    (python,) = [e for e in status.environments if e.language == common_pb2.PYTHON]
    return sum(p.calls for p in python.processes if p.account == cluster.admin_user())


def register(cluster, root) -> None:
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "sr", str(root), "python")


def test_reads_the_environment_vouched_for_are_answered_from_the_store_and_stay_right(make_cluster, tmp_path):
    # setup: one backend; objects of both classes; one read of each kind teaches the backend
    cluster = make_cluster(backends=1)
    root = write_model(tmp_path / "v1", "sr", MODEL)
    register(cluster, root)
    first = run_with_model(cluster, root, "import json\nfrom sr.model import Plain, Shifted\n", """
        p = Plain(5); p.make_persistent(alias="p"); s = Shifted(7); s.make_persistent(alias="s")
        print(json.dumps([p.get(), p.n, p.twice(), p.plus(), s.get(), s.n]))
    """)
    assert first == [5, 5, 10, 5, 7, 7]
    before = environment_calls(cluster)

    # run: 20 reads through the getter and 20 of the field, then an update and the same reads again
    reads = run_with_model(cluster, root, "import json\nfrom sr.model import Plain, Shifted\n", READS)
    after_reads = environment_calls(cluster)
    updated = run_with_model(cluster, root, "import json\nfrom sr.model import Plain, Shifted\n", """
        p = Plain.get_by_alias("p")
        print(json.dumps([p.bump(), p.get(), p.n, p.twice(), p.plus(1)]))
    """)
    after_update = environment_calls(cluster)

    # verify: the plain class's 40 reads never reached the environment; the class whose state goes
    # through its own __setstate__ was read there, both times; after the update the store answers
    # with the new value, and methods that compute, or take arguments, still run in the environment
    assert reads == {"get": [5] * 20, "n": [5] * 20, "shifted": [7, 7]}
    assert after_reads - before == 2
    assert updated == [6, 6, 6, 12, 6]
    assert after_update - after_reads == 3  # bump, twice, plus(1)


def test_a_new_version_of_the_model_is_what_answers_reads_it_vouched_for_before(make_cluster, tmp_path):
    # setup: the getter returns the field, and the backend has learnt so
    cluster = make_cluster(backends=1)
    register(cluster, write_model(tmp_path / "v1", "sr", MODEL))
    assert run_with_model(cluster, tmp_path / "v1", "import json\nfrom sr.model import Plain\n", """
        p = Plain(5); p.make_persistent(alias="p")
        print(json.dumps([p.get(), p.get()]))
    """) == [5, 5]
    learnt = environment_calls(cluster)
    assert run_with_model(cluster, tmp_path / "v1", "import json\nfrom sr.model import Plain\n", """
        print(json.dumps(Plain.get_by_alias("p").get()))
    """) == 5
    assert environment_calls(cluster) == learnt

    # run: the owner registers a version whose getter computes
    v2 = write_model(tmp_path / "v2", "sr", MODEL.replace("def get(self) -> int:\n        return self.n",
                                                          "def get(self) -> int:\n        return self.n + 100", 1))
    register(cluster, v2)
    after = run_with_model(cluster, v2, "import json\nfrom sr.model import Plain\n", """
        p = Plain.get_by_alias("p")
        print(json.dumps([p.get(), p.get(), p.n]))
    """)

    # verify: the new code answers (the old promise was forgotten with the deployment)
    assert after == [105, 105, 5]
