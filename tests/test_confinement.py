"""Issue 21: model code is confined, per account. A tenant's model (tests/hostile_models) tries from
inside its execution environment everything the issue found model code could do to the node, on a
real local cluster whose servers run as root; each attempt must be refused and the node go on
serving. Four accounts: a victim, a plain account, a reader with a read-only contract on the
victim's dataset, and the model's author (allowed to register models; the model is published, so
every account can make objects of its class)."""
import json
import os
import pathlib
import signal
import textwrap
import threading
import time
import uuid

import pytest

from conftest import started_cluster
from dataclay._internal.processes import runs
from harness.cluster import REPO
from harness.waiting import wait_until
from harness.scrapes import consecutive_free_ports

VICTIM, VICTIM_PW = "vera", "vera-password-123"
PLAIN, PLAIN_PW = "pat", "pat-password-1234"
READER, READER_PW = "rhea", "rhea-password-123"
AUTHOR, AUTHOR_PW = "ada", "ada-password-1234"
HOSTILE = REPO / "tests" / "hostile_models"
DEADLINE_S = 8

CLIENT = textwrap.dedent("""
    import json, sys
    from dataclay import api
    api.init()
    from hostile.probes import Probe

    def attempt(work):
        try:
            return work()
        except Exception as e:
            return {"error": type(e).__name__, "message": str(e)}
""")


@pytest.fixture(scope="module")
def cluster():
    """Two kv backends; an account may run 4 calls at once per backend, each for at most 8 s."""
    # with metrics on (so $DATACLAY_HOME/metrics.token exists) and an OpenTelemetry setting that may carry a
    # credential, which the servers see and model code must not
    shared = started_cluster(extra_env={"DATACLAY_EE_THREADS": "4", "DATACLAY_CALL_TIMEOUT_S": str(DEADLINE_S),
                                        "PYTHONPATH": f"{HOSTILE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                                        "DATACLAY_METRICS_PORT": str(consecutive_free_ports(3)),
                                        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer not-for-tenants"})
    admin = shared.admin_user()
    for user, password in ((VICTIM, VICTIM_PW), (PLAIN, PLAIN_PW), (READER, READER_PW), (AUTHOR, AUTHOR_PW)):
        shared.dataclaycmd("NewAccount", user, password)
    shared.dataclaycmd("GrantModelRegistration", admin, "-", AUTHOR)
    shared.dataclaycmd("NewModel", AUTHOR, AUTHOR_PW, "hostile", str(HOSTILE), "python")
    shared.dataclaycmd("PublishModel", AUTHOR, AUTHOR_PW, "hostile")
    shared.dataclaycmd("NewDataContract", VICTIM, VICTIM_PW, VICTIM, READER, "--read-only")
    yield shared
    shared.stop()


def as_user(cluster, user: str, password: str, body: str, *args: str) -> object:
    """Runs `body` as a client of `user`; it prints one JSON line, which is returned."""
    env = dict(cluster.env, DATACLAY_USER=user, DATACLAY_PASSWORD=password)
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-c", CLIENT + textwrap.dedent(body), *args], env=env,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def probe_of(cluster, user: str, password: str, backend: int = 0) -> str:
    """A new Probe of `user`'s, on the `backend`-th backend by name; returns its ID."""
    return as_user(cluster, user, password, f"""
        b = sorted(api.get_backends(), key=lambda i: api.get_backends()[i].name)[{backend}]
        p = Probe(); p.make_persistent(backend_id=b)
        print(json.dumps(p.getID()))
    """)


def attempts(cluster, user: str, password: str, probe: str, calls: list) -> list:
    """Calls (method, *args) on `user`'s probe in one client; returns what each reported."""
    return as_user(cluster, user, password, f"""
        p = Probe.get_by_id({probe!r})
        calls = json.loads({json.dumps(calls)!r})
        print(json.dumps([attempt(lambda c=c: getattr(p, c[0])(*c[1:])) for c in calls]))
    """)


def backend_pid(cluster, name: str = "backend-1") -> int:
    return cluster.pids()[name]


def test_model_code_cannot_read_the_clusters_files_or_the_pools(cluster):
    # setup: the files issue 21 saw read, and the other processes' memory
    probe = probe_of(cluster, PLAIN, PLAIN_PW)
    ds = backend_pid(cluster)
    home = cluster.home
    targets = [home / "client.properties", home / "cluster.json", home / "lm" / "metadata.db", home / "metrics.token",
               *sorted(home.rglob("*.secret")), *sorted((home / "logs").glob("*.log")),
               *sorted(p for p in cluster.pools.rglob("*") if p.is_file()),
               pathlib.Path(f"/proc/{ds}/environ"), pathlib.Path(f"/proc/{ds}/mem"), pathlib.Path("/proc/1/environ"),
               pathlib.Path("/etc/shadow"), pathlib.Path("/root/.bash_history")]
    assert len(targets) > 10 and any(str(t).endswith(".secret") for t in targets) and targets[3].is_file()
    # run
    reads = attempts(cluster, PLAIN, PLAIN_PW, probe, [["read", str(t)] for t in targets])
    listings = attempts(cluster, PLAIN, PLAIN_PW, probe, [["listdir", str(home)], ["listdir", str(cluster.pools)],
                                                          ["listdir", "/proc"], ["write", str(home / "planted")]])
    # verify: every read refused by the kernel; nothing of the host's /proc visible; nothing written
    assert all(r.startswith("refused: E") for r in reads), list(zip(map(str, targets), reads))
    assert listings[0].startswith("refused") and listings[1].startswith("refused") and listings[3].startswith("refused")
    assert str(ds) not in listings[2]
    assert not (home / "planted").exists()


def test_model_code_cannot_signal_or_trace_the_data_service(cluster):
    # setup
    probe = probe_of(cluster, PLAIN, PLAIN_PW)
    ds = backend_pid(cluster)
    # run
    outcomes = attempts(cluster, PLAIN, PLAIN_PW, probe, [
        ["signal", ds, signal.SIGKILL], ["signal", ds, signal.SIGSTOP], ["signal", -1, signal.SIGKILL],
        ["signal_parent", signal.SIGKILL], ["trace", ds], ["trace", 1]])
    # verify: refused (ESRCH: not even visible from the sandbox's PID namespace, or EPERM), and the
    # Data Service is alive and still serving this account
    assert all(o.startswith("refused: E") for o in outcomes[:2] + outcomes[4:]), outcomes
    assert runs(ds) and backend_pid(cluster) == ds
    assert attempts(cluster, PLAIN, PLAIN_PW, probe, [["sleep", 0]]) == [0]


def test_model_code_has_no_network(cluster):
    # setup: the Logic Module's port and both backends'
    probe = probe_of(cluster, PLAIN, PLAIN_PW)
    ports = [cluster.port, *(b["port"] for b in cluster.state()["backends"])]
    # run
    outcomes = attempts(cluster, PLAIN, PLAIN_PW, probe, [["connect", "127.0.0.1", p] for p in ports])
    # verify
    assert all(o.startswith("refused") for o in outcomes), outcomes


def test_environments_run_one_per_account_unprivileged_with_nothing_secret(cluster):
    # setup: two accounts' probes on one backend
    mine, theirs = probe_of(cluster, PLAIN, PLAIN_PW), probe_of(cluster, VICTIM, VICTIM_PW)
    # run
    [me] = attempts(cluster, PLAIN, PLAIN_PW, mine, [["whoami"]])
    [them] = attempts(cluster, VICTIM, VICTIM_PW, theirs, [["whoami"]])
    status = cluster.status()
    # verify: two processes of their own, not root, seeing only harmless settings
    assert me["uid"] != 0 and them["uid"] != 0 and me["uid"] != them["uid"]
    assert not any(k for k in me["environment"]
                   if any(w in k for w in ("PASSWORD", "SECRET", "TOKEN", "KEY", "TLS", "OTEL", "METRICS")))
    assert f"{PLAIN} (pid" in status and f"{VICTIM} (pid" in status and "confinement auto" in status


def test_no_model_code_sees_another_accounts_calls_or_any_token(cluster):
    # setup: the author's code wraps its own process's call entry, then the victim calls
    spy = probe_of(cluster, AUTHOR, AUTHOR_PW)
    victims = probe_of(cluster, VICTIM, VICTIM_PW)
    assert attempts(cluster, AUTHOR, AUTHOR_PW, spy, [["spy"]]) == ["installed"]
    # run
    attempts(cluster, VICTIM, VICTIM_PW, victims, [["whoami"], ["sleep", 0]])
    [seen] = attempts(cluster, AUTHOR, AUTHOR_PW, spy, [["seen"]])
    # verify: the spy saw only its own account's calls, and no call carries a token
    assert seen and {s["username"] for s in seen} == {AUTHOR}
    assert not any("token" in key for s in seen for key in s)


def test_model_code_cannot_use_its_callers_authority_beyond_the_call(cluster):
    # setup: the victim calls a method of the author's (published) model on the victim's own object
    probe = probe_of(cluster, VICTIM, VICTIM_PW)
    # run: the method asks, as the victim, for a read-write contract for its author on the victim's dataset
    [outcome] = attempts(cluster, VICTIM, VICTIM_PW, probe, [["grant_author_a_contract", VICTIM, AUTHOR]])
    contracts = cluster.dataclaycmd("GetDataContracts", AUTHOR, AUTHOR_PW).stdout
    # verify
    assert outcome.startswith("refused: PermissionDeniedError") and "only calls on data" in outcome, outcome
    assert VICTIM not in contracts


def test_model_code_is_told_listing_is_for_clients(cluster):
    # setup
    probe = probe_of(cluster, VICTIM, VICTIM_PW)
    # run: the method lists every object its caller may see
    [outcome] = attempts(cluster, VICTIM, VICTIM_PW, probe, [["list_every_object"]])
    # verify: refused by name, with what model code may do instead
    assert outcome.startswith("refused: PermissionDeniedError") and "ListObjects" in outcome, outcome
    assert "only calls on data" in outcome, outcome


def test_processes_model_code_starts_do_not_outlive_their_backend(cluster):
    # setup: a grandchild in a session of its own, on the second backend
    probe = probe_of(cluster, PLAIN, PLAIN_PW, backend=1)
    marker = f"survivor-{uuid.uuid4().hex}"
    [started] = attempts(cluster, PLAIN, PLAIN_PW, probe, [["leave_a_survivor", marker]])
    assert started.startswith("done"), started
    assert _processes_with(marker), "the grandchild did not start"
    # run: the backend is killed
    cluster.kill("backend-2")
    # verify: nothing it started is left; the backend comes back
    try:
        wait_until(lambda: not _processes_with(marker), 10, "the killed backend's grandchild to end", interval=0.1)
    finally:
        cluster.start()
    assert attempts(cluster, PLAIN, PLAIN_PW, probe, [["sleep", 0]]) == [0]


def test_memory_and_processes_of_an_environment_are_bounded(cluster):
    # setup
    probe = probe_of(cluster, PLAIN, PLAIN_PW)
    # run
    memory, forks, after = attempts(cluster, PLAIN, PLAIN_PW, probe, [["allocate", 64 * 1024], ["fork_bomb", 5000],
                                                                      ["allocate", 16]])
    # verify: the allocation past the bound failed inside the call, the forks stopped at the bound,
    # and the environment serves on
    assert memory.startswith("refused: MemoryError"), memory
    assert forks < 1000, forks
    assert after == "done: " + str(16 << 20)


def test_a_flood_of_slow_calls_by_one_account_does_not_delay_another(cluster):
    # setup: both accounts' processes started; the victim's quick call timed on an idle backend
    slow, quick = probe_of(cluster, PLAIN, PLAIN_PW), probe_of(cluster, VICTIM, VICTIM_PW)
    attempts(cluster, PLAIN, PLAIN_PW, slow, [["sleep", 0]])
    idle = _timed_sleep0(cluster, quick)
    # run: 12 calls of 5 s by one account (4 run, 8 wait), while the other account calls
    flood = threading.Thread(target=lambda: as_user(cluster, PLAIN, PLAIN_PW, f"""
        import concurrent.futures
        p = Probe.get_by_id({slow!r})
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            print(json.dumps(list(pool.map(lambda _: p.sleep(5), range(12)))))
    """))
    flood.start()
    time.sleep(1.5)
    busy = _timed_sleep0(cluster, quick)
    flood.join(60)
    # verify: the other account's call took about as long as on the idle backend
    assert busy < max(2 * idle, idle + 0.5), (idle, busy)


def _timed_sleep0(cluster, probe: str) -> float:
    return as_user(cluster, VICTIM, VICTIM_PW, f"""
        import time
        p = Probe.get_by_id({probe!r})
        p.sleep(0)
        began = time.perf_counter()
        for _ in range(5):
            p.sleep(0)
        print(json.dumps((time.perf_counter() - began) / 5))
    """)


def test_a_call_past_its_deadline_fails_and_its_account_goes_on(cluster):
    # setup
    probe = probe_of(cluster, PLAIN, PLAIN_PW)
    # run
    began = time.monotonic()
    [stuck] = attempts(cluster, PLAIN, PLAIN_PW, probe, [["sleep", 60]])
    took = time.monotonic() - began
    [after] = attempts(cluster, PLAIN, PLAIN_PW, probe, [["sleep", 0]])
    # verify
    assert stuck["error"] == "CallTimedOutError" and "DATACLAY_CALL_TIMEOUT_S" in stuck["message"], stuck
    assert DEADLINE_S <= took < DEADLINE_S + 20 and after == 0


def test_a_killed_environment_fails_only_its_own_calls_and_is_restarted(cluster):
    # setup: another account's call runs meanwhile, in its own process
    killer, other = probe_of(cluster, PLAIN, PLAIN_PW), probe_of(cluster, VICTIM, VICTIM_PW)
    attempts(cluster, VICTIM, VICTIM_PW, other, [["sleep", 0]])
    results = {}
    running = threading.Thread(target=lambda: results.update(other=attempts(cluster, VICTIM, VICTIM_PW, other,
                                                                           [["sleep", 3]])))
    running.start()
    time.sleep(1)
    # run
    [died] = attempts(cluster, PLAIN, PLAIN_PW, killer, [["die"]])
    running.join(30)
    [again] = attempts(cluster, PLAIN, PLAIN_PW, killer, [["sleep", 0]])
    # verify
    assert died["error"] == "BackendUnavailableError", died
    assert results["other"] == [3] and again == 0


def test_an_environment_that_stops_reading_its_calls_holds_up_no_other_accounts_call(cluster):
    # setup: an account's environment shrinks the pipe its calls arrive on to one page and stops; its client
    # then sends a call bigger than that page to another of its objects, which nothing will read before the
    # first call's deadline (before CallPipe, the network thread that wrote it stalled the whole backend)
    choker, other, quick = (probe_of(cluster, PLAIN, PLAIN_PW), probe_of(cluster, PLAIN, PLAIN_PW),
                            probe_of(cluster, VICTIM, VICTIM_PW))
    attempts(cluster, PLAIN, PLAIN_PW, choker, [["sleep", 0]])
    attacker = threading.Thread(target=lambda: as_user(cluster, PLAIN, PLAIN_PW, f"""
        import threading, time
        p, q = Probe.get_by_id({choker!r}), Probe.get_by_id({other!r})
        stuck = threading.Thread(target=lambda: attempt(p.choke_link))
        stuck.start()
        time.sleep(1)
        print(json.dumps([attempt(lambda: q.take(b"x" * 6000))]))
        stuck.join()
    """))
    attacker.start()
    time.sleep(3)
    # run: four other clients at once, so that their connections land on each of the server's network threads
    took = {}
    victims = [threading.Thread(target=lambda n=n: took.update({n: _timed_first_call(cluster, quick)}))
               for n in range(4)]
    for v in victims:
        v.start()
    for v in victims:
        v.join(60)
    attacker.join(60)
    # verify: none of them waited for the stopped environment
    assert len(took) == 4 and max(took.values()) < 2.5, took


def _timed_first_call(cluster, probe: str) -> float:
    return as_user(cluster, VICTIM, VICTIM_PW, f"""
        import time
        began = time.perf_counter()
        Probe.get_by_id({probe!r}).sleep(0)
        print(json.dumps(time.perf_counter() - began))
    """)


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found
