"""The COMPSs storage interface on a real two-backend cluster: storage.api's object calls, the local
COMPSs stand-in with 4 forked workers running tasks on versions of shared objects (the result and
every intermediate read equal a sequential run), a chain of many INOUT tasks that leaves no version
behind once consolidated and collected (collections running all along), and the COMPSs-style
wordcount example end to end."""
import collections
import json
import pathlib
import subprocess
import sys
import textwrap
import threading
import uuid

import pytest

from dataclay.exceptions import ObjectDoesNotExistError
from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

REPO = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "wordcount"

# Tasks on shared persistent objects: INOUT updates (renamed with newVersion in the workers) interleaved
# with reads and with an INOUT task that also returns a value. argv[1]: workers (0: the sequential run).
SHARED_OBJECTS = textwrap.dedent("""
    import json, os, sys
    from dataclay import api as dataclay_api
    from dataclay.exceptions import InvalidArgumentError
    from storage import api
    from storage.local_runtime import INOUT, LocalRuntime, compss_barrier, compss_wait_on, task
    from people.model import Account, Counter

    @task(counter=INOUT)
    def add(counter, n):
        counter.increment(n)

    @task(returns=int)
    def read(counter):
        return counter.get()

    @task(account=INOUT, returns=int)
    def deposit(account, amount):
        return account.deposit(amount)

    @task(returns=list)
    def whereabouts():
        return [os.getpid(), os.getppid()]

    def program():
        backends = sorted(dataclay_api.get_backends())
        counters = [Counter(0) for _ in range(3)]
        for i, counter in enumerate(counters):
            counter.make_persistent(backend_id=backends[i % len(backends)])
        account = Account("acme", 0)
        account.make_persistent(backend_id=backends[-1])
        reads, balances = [], []
        for step in range(24):
            counter = counters[step % 3]
            add(counter, step + 1)
            if step % 4 == 0:
                reads.append(read(counter))
            balances.append(deposit(account, step))
        original_before_sync = counters[0].get()
        reads, balances = compss_wait_on(reads), compss_wait_on(balances)
        compss_barrier()
        return account, {"reads": reads, "balances": balances, "counters": [c.get() for c in counters],
                         "balance": account.balance, "history": account.history, "audit": account.audit(),
                         "original_before_sync": original_before_sync}

    if __name__ == "__main__":  # workers load this script to find the tasks: only the master runs this part
        workers = int(sys.argv[1])
        if workers == 0:
            api.init()
            _, out = program()
            api.finish()
        else:
            with LocalRuntime(workers=workers) as runtime:
                account, out = program()
                out["places"] = compss_wait_on([whereabouts() for _ in range(12)])
                try:
                    deposit(account, lambda: 1)  # refused at the call: a lambda cannot travel to a worker
                except InvalidArgumentError as e:
                    out["refused"] = str(e)
                out["after_refusal"] = compss_wait_on(account).balance  # a refused call left nothing to wait for
                out["executors"] = runtime.executor_pids
                out["master"] = os.getpid()
        print(json.dumps(out))
""")

STORAGE_API = textwrap.dedent("""
    import json
    from dataclay import api as dataclay_api
    from dataclay.exceptions import BackendDoesNotExistError, NotAVersionError, ObjectDoesNotExistError
    from storage import api
    from people.model import Counter

    api.init()
    backends = {b.name: b.id for b in dataclay_api.get_backends().values()}
    counter = Counter(5)
    counter.make_persistent(backend_id=backends["backend-1"])
    oid = counter.getID()
    same = api.getByID(" " + oid + " ")
    located = api.getLocations(oid)
    replicated = api.newReplica(oid, "backend-2")
    copies = sorted(counter.get_all_locations())
    version_id = api.newVersion(oid, preserve_source=False, backend="backend-2")
    version = api.getByID(version_id)
    version.increment(10)
    seen = {"original": counter.get(), "version": version.get(), "version_at": version.get_location()}
    api.consolidateVersion(version_id)
    errors = {}
    for name, call in [("retired", lambda: api.getByID(version_id).get()),
                       ("not_a_version", lambda: api.consolidateVersion(oid)),
                       ("unknown_host", lambda: api.newReplica(oid, "no-such-host")),
                       ("unknown_object", lambda: api.getByID("00000000-0000-4000-8000-000000000000").get())]:
        try:
            call()
            errors[name] = None
        except (BackendDoesNotExistError, NotAVersionError, ObjectDoesNotExistError) as e:
            errors[name] = [type(e).__name__, str(e)]
    print(json.dumps({"same": same is counter, "class": type(same).__name__, "located": located,
                      "replicated": replicated, "copies": copies, "backends": backends, "seen": seen,
                      "after": counter.get(), "errors": errors}))
    api.finish()
""")


READ_COUNTS = textwrap.dedent("""
    import json
    from dataclay import api
    api.init()
    from WordCount.classes import TextStats
    print(json.dumps({w: TextStats.get_by_alias(f"CompssCounts{w}").counts for w in ("2", "0")}))
""")


def run_script(cluster, tmp_path: pathlib.Path, name: str, code: str, *args: str, env: dict | None = None,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """Runs `code` as the script `name` (tasks must live in a file workers can load) against the cluster."""
    script = tmp_path / name
    script.write_text(code)
    result = subprocess.run([sys.executable, str(script), *args], env=env or cluster.env, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, f"{name} failed:\n{result.stdout}\n{result.stderr}"
    return result


def last_json(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_storage_api_reaches_copies_versions_and_names_what_is_wrong(cluster, tmp_path):
    # run
    out = last_json(run_script(cluster, tmp_path, "storage_api.py", STORAGE_API))
    # verify
    assert out["same"] is True and out["class"] == "Counter"
    assert out["located"] == ["127.0.0.1"] and out["replicated"] == ["127.0.0.1"]
    assert out["copies"] == sorted(out["backends"].values())
    assert out["seen"] == {"original": 5, "version": 15, "version_at": out["backends"]["backend-2"]}
    assert out["after"] == 15
    assert out["errors"]["retired"][0] == "ObjectDoesNotExistError"
    assert out["errors"]["not_a_version"][0] == "NotAVersionError"
    assert out["errors"]["unknown_host"][0] == "BackendDoesNotExistError"
    assert "no-such-host" in out["errors"]["unknown_host"][1]
    assert out["errors"]["unknown_object"][0] == "ObjectDoesNotExistError"


def test_four_forked_workers_on_versions_of_shared_objects_equal_a_sequential_run(cluster, tmp_path):
    # run: the same program on 4 worker processes and sequentially in one process
    parallel = last_json(run_script(cluster, tmp_path, "shared.py", SHARED_OBJECTS, "4"))
    sequential = last_json(run_script(cluster, tmp_path, "shared.py", SHARED_OBJECTS, "0"))
    # verify: every read and every returned balance saw the state of its point in the program
    for key in ("reads", "balances", "counters", "balance", "history"):
        assert parallel[key] == sequential[key], key
    assert sequential["counters"] == [sum(s + 1 for s in range(24) if s % 3 == i) for i in range(3)]
    assert parallel["audit"] is True and parallel["balance"] == sum(range(24))
    # the tasks changed versions: the original stayed as it was until compss_barrier consolidated it
    assert parallel["original_before_sync"] == 0 and sequential["original_before_sync"] > 0
    # 4 executors forked from one worker process that is not the master ran the tasks
    executors = set(parallel["executors"])
    parents = {ppid for _, ppid in parallel["places"]}
    assert len(executors) == 4 and {pid for pid, _ in parallel["places"]} <= executors
    assert len(parents) == 1 and parallel["master"] not in parents | executors
    assert "parameter 'amount' cannot be sent to a worker" in parallel["refused"]
    assert parallel["after_refusal"] == sum(range(24))


def test_wordcount_example_on_two_backends_equals_the_sequential_run_and_a_local_count(cluster, tmp_path):
    # setup: the model registered, its stubs, 6 texts spread over the 2 backends
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "wordcount", str(EXAMPLE / "model"), "python")
    cluster.dataclaycmd("GetStubs", cluster.admin_user(), "-", "wordcount", str(tmp_path / "stubs"))
    env = dict(cluster.env, PYTHONPATH=f"{tmp_path / 'stubs'}:{cluster.env['PYTHONPATH']}")
    prepared = subprocess.run([sys.executable, str(EXAMPLE / "prepare.py"), "--texts", "6", "--size", "64K",
                               "--alias", "CompssWords"], env=env, capture_output=True, text=True, timeout=300)
    assert prepared.returncode == 0, prepared.stderr
    # run
    runs = {}
    for workers in ("2", "0"):
        runs[workers] = subprocess.run(
            [sys.executable, str(EXAMPLE / "wordcount.py"), "CompssWords", "--workers", workers,
             "--result-alias", f"CompssCounts{workers}"], env=env, capture_output=True, text=True, timeout=300)
        assert runs[workers].returncode == 0, runs[workers].stdout + runs[workers].stderr
    counts = last_json(subprocess.run([sys.executable, "-c", READ_COUNTS], env=env, capture_output=True, text=True,
                                      timeout=120))
    # verify
    assert "Ready to count words from 6 different texts" in runs["2"].stdout
    assert "local runtime, 2 worker processes" in runs["2"].stdout and "sequential" in runs["0"].stdout
    sys.path.insert(0, str(EXAMPLE))
    from prepare import generated_texts
    expected = collections.Counter()
    for text in generated_texts(6, 64 * 1024, 1):
        expected.update(text.split())
    assert counts["2"] == counts["0"] == dict(expected)
    top = runs["2"].stdout.split("# Top 10:\n", 1)[1].strip()
    assert top == str(sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))[:10])


# Many INOUT tasks on one persistent object (COMPSs renames it once per task). argv[1]: tasks.
INOUT_CHAIN = textwrap.dedent("""
    import json, sys
    from storage.local_runtime import INOUT, LocalRuntime, compss_barrier, task
    from people.model import Counter

    @task(counter=INOUT)
    def add(counter, n):
        counter.increment(n)

    if __name__ == "__main__":
        tasks = int(sys.argv[1])
        with LocalRuntime(workers=2):
            counter = Counter(0)
            counter.make_persistent(alias="compss-inout-chain")
            for n in range(1, tasks + 1):
                add(counter, n)
            compss_barrier()
            print(json.dumps({"value": counter.get(), "id": counter.getID()}))
""")


def object_counts(cluster, lm) -> tuple:
    """(objects the Logic Module has registered, objects stored in every backend's pool)."""
    stored = 0
    for b in lm.get_backends():
        ds = DataServiceClient(f"{b.host}:{b.port}", lm.token)
        try:
            stored += ds.get_status().store.objects
        finally:
            ds.close()
    return lm.get_stats().objects, stored


def test_a_workflow_of_many_inout_tasks_leaves_only_the_live_object_behind(cluster, tmp_path):
    # setup: an administrator collecting garbage, with nothing collectable left before the run
    tasks = 400
    lm = LogicModuleClient(f"127.0.0.1:{cluster.port}")
    lm.token = lm.new_session(cluster.admin_user(), cluster.admin_password(), "").token
    stop = threading.Event()
    during = []

    def collect():
        while not stop.is_set():
            during.append(lm.collect_garbage())

    collector = threading.Thread(target=collect)
    try:
        lm.collect_garbage()
        before = object_counts(cluster, lm)
        # run: the workflow, with collections back to back while it runs, then one after it
        collector.start()
        try:
            out = last_json(run_script(cluster, tmp_path, "chain.py", INOUT_CHAIN, str(tasks)))
        finally:
            stop.set()
            collector.join(timeout=120)
        with pytest.raises(ObjectDoesNotExistError):
            lm.get_object_info(str(uuid.uuid4()))  # every backend's registrations flushed
        report = lm.collect_garbage()
        after = object_counts(cluster, lm)
    finally:
        lm.close_session()
        lm.close()
    # verify: every task saw the previous one's version (none was collected while needed); afterwards
    # the counter is the only new object, in the metadata and in the pools
    assert out["value"] == tasks * (tasks + 1) // 2
    assert len(during) >= 1
    assert after == (before[0] + 1, before[1] + 1), (before, after, report)
    assert sum(r.collected for r in during) + report.collected >= tasks - 1
