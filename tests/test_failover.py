"""Failover across network-namespace hosts: reads reach a replica within 2 s whatever made the
master unreachable (link down, host frozen, process killed); a call on an unreplicated object
there fails within 2 s; and while 4 writers increment counters, the master's host, the Logic
Module's host and the clients' host are cut off, frozen or killed in turn, replicas are promoted,
old masters come back as replicas, and every acknowledged increment is in the final values.
The long runs (20 partitions of each kind) are scripts/partition_soak.py."""
import json
import subprocess
import sys
import time

import pytest

from harness.cluster import started_with_models
from harness.hosts import HostNetwork, end_process_group, thread_states, unavailable
from harness.multihost import FAILOVER_BOUND_S, MultiHostCluster
from harness.waiting import wait_until
from harness.writers import FAULTS, Writers, lost_or_doubled, make_replicated_counters, master_host, wait_for_copies

# Shorter than the defaults (heartbeat 1 s, dead after 5 s, promotion after 6 s) so that the suite
# sees several promotions in a minute; scripts/partition_soak.py measures the defaults.
FAST = {"DATACLAY_BACKEND_TIMEOUT_MS": "1500", "DATACLAY_PROMOTE_AFTER_MS": "3000"}

READ_AFTER_SIGNAL = """
import json, sys, time
from dataclay import api
from dataclay.exceptions import DataClayException
api.init()
from people.model import Counter
counters = [Counter.get_by_alias(alias) for alias in sys.argv[1:]]
print(json.dumps([c.get() for c in counters]), flush=True)  # warm: hints on the masters
sys.stdin.readline()                                         # the test cuts the master off here
out = []
for c in counters:
    started = time.monotonic()
    try:
        value = c.get()
    except DataClayException as e:
        value = type(e).__name__
    out.append([value, round(time.monotonic() - started, 3)])
print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def network():
    reason = unavailable()
    if reason:
        pytest.skip(f"multi-host test: {reason}")
    with HostNetwork(["node0", "node1", "node2", "node3", "node4"]) as hosts:
        yield hosts


def start(network, backends: list, **env) -> MultiHostCluster:
    return started_with_models(MultiHostCluster(network, "node0", backends, extra_env={**FAST, **env}))


def test_a_frozen_host_has_every_thread_stopped_including_processes_in_namespaces_of_their_own(hosts):
    # setup: on one host, a busy process with threads and, below it, one in a network namespace of
    # its own, as an execution environment runs
    host = hosts("solo")["solo"]
    busy = host.popen([sys.executable, "-c", BUSY_THREADS])
    try:
        wait_until(lambda: len(host.processes()) >= 2 and len(_tasks(host)) >= 5, 30, what="the processes to start")
        # run
        host.freeze()
        frozen = _tasks(host)
        host.thaw()
        thawed = wait_until(lambda: (states := _tasks(host)) and "T" not in states.values() and states, 10,
                            what="the host to run again")
    finally:
        end_process_group(busy)
    # verify: every thread of every process, the child in its own namespace too, stopped and ran again
    assert len(frozen) >= 5 and set(frozen.values()) == {"T"}, frozen
    assert set(thawed) == set(frozen), (thawed, frozen)


def test_a_host_with_a_process_waiting_on_its_vfork_child_freezes(hosts):
    # setup: a process blocked in vfork() until its child execs or exits, and the child stopped
    # before either, as a JVM spawning an execution environment may be when the host is frozen
    host = hosts("solo")["solo"]
    waiting = host.popen([sys.executable, "-c", VFORK_STOPPED])
    try:
        wait_until(lambda: len(host.processes()) >= 2 and "D" in _tasks(host).values(), 30,
                   what="the vfork child to stop itself")
        # run: the parent takes no signal, yet cannot run either
        host.freeze()
        frozen = _tasks(host)
    finally:
        host.thaw()
        end_process_group(waiting)
    # verify
    assert sorted(frozen.values()) == ["D", "T"], frozen


# The child of vfork() runs in its parent's memory until it execs or exits: it only stops itself.
VFORK_STOPPED = """
import ctypes, signal, time
libc = ctypes.CDLL(None)
if libc.vfork() == 0:
    libc.kill(libc.syscall(39), signal.SIGSTOP)  # getpid(2), uncached
    libc._exit(0)
time.sleep(600)
"""

BUSY_THREADS = """
import subprocess, sys, threading, time
child = subprocess.Popen(["unshare", "--net", sys.executable, "-c", "import time; time.sleep(600)"])
threading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()  # always running
for _ in range(2):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
child.wait()
"""


def _tasks(host) -> dict:
    """Every thread of every process of `host`: (pid, tid) -> its state letter."""
    return {(pid, tid): state for pid in host.processes() for tid, state in thread_states(pid).items()}


@pytest.mark.parametrize("fault", ["link", "freeze", "kill"])
def test_a_read_is_served_by_a_replica_and_an_unreplicated_object_fails_within_the_silence_bound(network, fault):
    # setup: a replicated and an unreplicated counter mastered on node1; a client warm on node4.
    # Promotion is off: this is the read path alone.
    cluster = start(network, ["node1", "node2"], DATACLAY_PROMOTE_AFTER_MS="0")
    try:
        cluster.run_python(network["node4"], """
from dataclay import api
api.init()
from people.model import Counter
ids = {b.name: b.id for b in api.get_backends().values()}
replicated, alone = Counter(5), Counter(7)
replicated.make_persistent(alias="replicated", backend_id=ids["node1"])
replicated.new_replica(ids["node2"])
alone.make_persistent(alias="alone", backend_id=ids["node1"])
""")
        reader = cluster.popen_python(network["node4"], READ_AFTER_SIGNAL, "replicated", "alone",
                                      stdin=subprocess.PIPE)
        warm = json.loads(reader.stdout.readline())
        # run
        FAULTS[fault].cut(cluster, network["node1"])
        out, err = reader.communicate(input="\n", timeout=60)
        (value, read_s), (error, failed_s) = json.loads(out.strip().splitlines()[-1])
        FAULTS[fault].heal(cluster, network["node1"])
    finally:
        network.restore()
        cluster.stop()
    # verify
    assert warm == [5, 7]
    assert value == 5 and read_s < FAILOVER_BOUND_S, (value, read_s, err[-2000:])
    assert error == "BackendUnavailableError" and failed_s < FAILOVER_BOUND_S, (error, failed_s)


def test_writes_go_on_through_partitions_freezes_and_kills_and_no_acknowledged_write_is_lost(network):
    # setup: 4 counters mastered on node1, replicated on node2 and node3; 4 writers on node4
    cluster = start(network, ["node1", "node2", "node3"])
    try:
        make_replicated_counters(cluster, network["node4"], master="node1", replicas=["node2", "node3"])
        writers = Writers(cluster, network["node4"], seconds=300).start()
        time.sleep(3)
        # run: each fault in turn, on whichever backend masters most counters then
        timeline = []
        for fault, target, hold in (("link", "master", 6), ("freeze", "master", 6), ("link", "node0", 4),
                                    ("link", "node4", 3), ("kill", "master", 5)):
            host = master_host(cluster, network["node4"]) if target == "master" else network[target]
            started = time.monotonic()
            FAULTS[fault].cut(cluster, host)
            time.sleep(hold)
            FAULTS[fault].heal(cluster, host)
            timeline.append((fault, host.name, round(time.monotonic() - started, 1)))
            cluster.wait_for_backends(3)
            wait_for_copies(cluster, network["node4"], 3)
        results = writers.wait()
        finals = wait_for_copies(cluster, network["node4"], 3)
    finally:
        network.restore()
        logs = cluster.log_tail(30)
        cluster.stop()
    # verify: every acknowledged increment is there, and nothing beyond the ones in doubt
    assert lost_or_doubled(results, finals) == {}, (results, finals, timeline, logs)
    missing = {alias: copies for alias, (_, copies) in finals.items() if len(copies) != 3}
    assert missing == {}, f"an old master did not come back as a replica: {missing}\n{logs}"
    # writes went on: each writer's longest stall is a promotion, not the whole outage
    assert all(r["acked"] > 200 for r in results.values()), results
    assert "promoted replicas" in logs, logs
