"""Durability on a real cluster: restarts, and kill -9 of Data Services, the Logic Module and
execution environments while clients update objects. Acknowledged means stored."""
import json
import os
import signal
import textwrap
import threading

from harness.waiting import wait_until
from test_core_acceptance import PRELUDE, client

WRITER = PRELUDE + textwrap.dedent("""
    import os, time
    from dataclay.exceptions import DataClayException
    me, stop_file = int(sys.argv[1]), sys.argv[2]
    backends = sorted(api.get_backends())
    account = Account(f"client-{me}")
    account.make_persistent(alias=f"acct-{me}", backend_id=backends[me % len(backends)])
    attempt, last_error = 0, None
    while not os.path.exists(stop_file):
        attempt += 1
        amount = me * 1_000_000 + attempt
        try:
            account.deposit(amount)
        except DataClayException as e:
            seen = f"{type(e).__name__}: {e}"[:300]
            if seen != last_error:  # what a stalled writer met, for the test's message
                print(f"{time.monotonic():.1f} {seen}", file=sys.stderr, flush=True)
                last_error = seen
            time.sleep(0.05)
            continue
        print(json.dumps({"ack": amount, "at": time.monotonic()}), flush=True)
""")

VERIFY = """
    out = {}
    for me in range(int(sys.argv[1])):
        a = Account.get_by_alias(f"acct-{me}")
        out[me] = {"history": a.history, "audit": a.audit(), "balance": a.balance}
    print(json.dumps(out))
"""


class Writers:
    """Client processes updating their accounts; collects what each had acknowledged."""

    def __init__(self, cluster, count, stop_file):
        self.cluster = cluster
        self.stop_file = stop_file
        self.procs = [cluster.popen_client(WRITER, str(n), str(stop_file)) for n in range(count)]
        self.lines = [[] for _ in self.procs]
        self.errors = [[] for _ in self.procs]
        # stderr is drained too: a writer must never block on a full pipe nobody reads
        self.readers = [threading.Thread(target=self._read, args=(p, out), daemon=True)
                        for p, out in zip(self.procs, self.lines)]
        self.readers += [threading.Thread(target=self._drain, args=(p, err), daemon=True)
                         for p, err in zip(self.procs, self.errors)]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(proc, sink):
        """Parses as lines arrive, so that polling the counts stays cheap however long the run."""
        for line in proc.stdout:
            if '"ack"' in line:
                ack = json.loads(line)
                sink.append((ack["ack"], ack["at"]))

    @staticmethod
    def _drain(proc, sink):
        for line in proc.stderr:
            sink.append(line)
            del sink[:-40]

    def acked(self, n):
        return [amount for amount, _ in self.acked_at(n)]

    def acked_at(self, n):
        """(amount, when the client got the acknowledgement), oldest first.

        The time is the client's CLOCK_MONOTONIC, the clock time.monotonic() reads in every process
        on the machine, so it compares with this process's own readings however late a loaded
        machine lets this process read the client's output."""
        return list(self.lines[n])

    def wait_for_progress(self, more, timeout=90):
        """Waits until every writer acknowledged `more` updates beyond what it had."""
        goal = [len(self.lines[n]) + more for n in range(len(self.procs))]

        def stalled() -> list[int]:
            return [n for n in range(len(self.procs)) if len(self.lines[n]) < goal[n]]

        def report() -> str:
            return (f"writers stalled: {[len(lines) for lines in self.lines]}{self._exits()}" + "".join(
                f"\nwriter {n} last met:\n{''.join(self.errors[n][-10:])}" for n in stalled())
                + f"\n{self.cluster.logs()}")
        wait_until(lambda: not stalled(), timeout, f"every writer to acknowledge {more} more updates",
                   details=report)

    def _exits(self) -> str:
        """How the writers that ended did so (a writer only ends when it is told to, or fails)."""
        ended = [(n, p.poll()) for n, p in enumerate(self.procs) if p.poll() is not None]
        return "".join(f"\nwriter {n} exited with {code}:\n{''.join(self.errors[n])}" for n, code in ended)

    def audited_accounts(self):
        """Each writer's account as the cluster has it now (`VERIFY`), after checking it is not torn."""
        state = client(self.cluster, VERIFY, str(len(self.procs)))
        for me in range(len(self.procs)):
            account = state[str(me)]
            assert account["audit"], f"account {me} is torn: balance {account['balance']}"
            yield me, account

    def finish(self):
        self.stop_file.touch()
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except Exception:
                proc.kill()
                proc.wait()
        for reader in self.readers:
            reader.join(timeout=10)


def test_a_second_start_finds_earlier_objects_and_aliases(make_cluster):
    cluster = make_cluster()
    client(cluster, """
        p = Person("dora", 50); p.make_persistent(alias="dora"); p.birthday()
        print(json.dumps({}))
    """)
    cluster.stop_processes()
    assert cluster.pids() == {}
    cluster.start()
    seen = client(cluster, """
        p = Person.get_by_alias("dora")
        print(json.dumps({"name": p.name, "age": p.age}))
    """)
    assert seen == {"name": "dora", "age": 51}


def test_kill_9_of_services_under_four_writers_loses_no_acknowledged_update(make_cluster, tmp_path):
    cluster = make_cluster()
    # setup
    writers = Writers(cluster, 4, tmp_path / "stop")
    try:
        writers.wait_for_progress(20)
        # run: a Data Service dies mid-update and comes back
        cluster.kill("backend-1")
        cluster.start()
        writers.wait_for_progress(20)
        # the Logic Module dies: warm clients keep working; then it comes back
        cluster.kill("logicmodule")
        writers.wait_for_progress(20)
        cluster.start()
        writers.wait_for_progress(20)
        # every server process dies at once
        for name in list(cluster.pids()):
            cluster.kill(name)
        cluster.start()
        writers.wait_for_progress(20)
    finally:
        writers.finish()
    # verify
    for me, account in writers.audited_accounts():
        missing = set(writers.acked(me)) - set(account["history"])
        assert not missing, f"account {me} lost acknowledged deposits {sorted(missing)[:5]}"


def test_killed_execution_environment_is_restarted_by_its_data_service(make_cluster):
    cluster = make_cluster()
    # setup
    made = client(cluster, """
        b = sorted(api.get_backends(), key=lambda i: api.get_backends()[i].name)[0]
        c = Counter(0); c.make_persistent(backend_id=b); c.increment()
        print(json.dumps({"id": c.getID()}))
    """)
    # run
    os.kill(cluster.ee_pid("backend-1"), signal.SIGKILL)
    seen = client(cluster, """
        import time
        from dataclay.exceptions import BackendUnavailableError
        c = api.get_by_id(sys.argv[1])
        deadline = time.monotonic() + 30
        while True:
            try:
                print(json.dumps({"value": c.increment()}))
                break
            except BackendUnavailableError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    """, made["id"])
    # verify
    assert seen["value"] == 2
    assert "1 restarts" in cluster.status()
