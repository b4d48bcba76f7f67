"""Writers, faults and counts for failover runs over namespace hosts (tests/test_failover.py,
scripts/partition_soak.py, benchmarks/failover.py).

Four replicated counters c0..c3; one writer process per counter increments it as fast as it can and
counts what was acknowledged and what failed (a failed increment may or may not have happened: it
is "in doubt"). At the end every counter must hold at least its acknowledged increments and at most
those plus the ones in doubt: an acknowledged write lost, or one applied twice by two masters,
breaks it."""
from __future__ import annotations

import json
import uuid
import time
from dataclasses import dataclass
from typing import Callable

from harness.hosts import Host
from harness.multihost import MultiHostCluster

COUNTERS = [f"c{k}" for k in range(4)]

MAKE = """
import json, sys
from dataclay import api
api.init()
from people.model import Counter
ids = {b.name: b.id for b in api.get_backends().values()}
master, replicas = sys.argv[1], sys.argv[2].split(",")
for alias in sys.argv[3:]:
    c = Counter(0)
    c.make_persistent(alias=alias, backend_id=ids[master])
    for r in replicas:
        c.new_replica(ids[r])
"""

WRITE = """
import json, os, sys, time
from dataclay import api
from dataclay.exceptions import DataClayException
api.init()
from people.model import Counter
alias, seconds, stop = sys.argv[1], float(sys.argv[2]), sys.argv[3]
c = Counter.get_by_alias(alias)
acked = failed = refused = 0
stalls = []  # [wall-clock start, seconds, failed calls] of each time without an acknowledgement over 0.5 s
start = last = time.monotonic()
while time.monotonic() - start < seconds and not os.path.exists(stop):
    try:
        c.increment()
    except DataClayException:
        failed += 1
        refused += 1
        time.sleep(0.02)
        continue
    now = time.monotonic()
    if now - last > 0.5:
        stalls.append([round(time.time() - (now - last), 3), round(now - last, 3), refused])
    last = now
    refused = 0
    acked += 1
print(json.dumps({"acked": acked, "failed": failed, "stalls": stalls}))
"""

LOCATE = """
import json, sys
from dataclay import api
api.init()
from people.model import Counter
names = {b.id: b.name for b in api.get_backends().values()}
out = {}
for alias in sys.argv[1:]:
    c = Counter.get_by_alias(alias)
    out[alias] = [c.get(), [names[b] for b in c.get_all_locations()]]
print(json.dumps(out))
"""


def make_replicated_counters(cluster: MultiHostCluster, client: Host, master: str, replicas: list[str],
                             aliases: list[str] = COUNTERS) -> None:
    """Counters at 0 mastered on backend host `master`, with a replica on each of `replicas`."""
    cluster.run_python(client, MAKE, master, ",".join(replicas), *aliases)


def final_counts(cluster: MultiHostCluster, client: Host, aliases: list[str] = COUNTERS) -> dict:
    """alias -> [value, [backend host names holding a copy, master first]]."""
    return json.loads(cluster.run_python(client, LOCATE, *aliases, timeout=180).stdout.strip().splitlines()[-1])


def lost_or_doubled(results: dict, finals: dict) -> dict:
    """The counters whose final value breaks acknowledged <= value <= acknowledged + in doubt, as
    alias -> [acknowledged, in doubt, value] (empty when every counter holds)."""
    return {alias: [r["acked"], r["failed"], finals[alias][0]] for alias, r in results.items()
            if not r["acked"] <= finals[alias][0] <= r["acked"] + r["failed"]}


def master_host(cluster: MultiHostCluster, client: Host, aliases: list[str] = COUNTERS) -> Host:
    """The backend host that masters most of the counters now."""
    masters = [copies[0] for _, copies in final_counts(cluster, client, aliases).values()]
    return cluster.network[max(set(masters), key=masters.count)]


def wait_for_copies(cluster: MultiHostCluster, client: Host, copies: int, timeout: float = 60,
                    aliases: list[str] = COUNTERS) -> dict:
    """Polls until every counter has `copies` copies (an old master came back as a replica). A poll
    that cannot reach the cluster yet (a host healed a moment ago) is retried until the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            counts = final_counts(cluster, client, aliases)
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
            continue
        if all(len(c) == copies for _, c in counts.values()) or time.monotonic() > deadline:
            return counts
        time.sleep(1)


class Writers:
    """One writer process per counter on `client`, writing for `seconds` or until stop()."""

    def __init__(self, cluster: MultiHostCluster, client: Host, seconds: float, aliases: list[str] = COUNTERS):
        self.cluster, self.client, self.seconds, self.aliases = cluster, client, seconds, aliases
        self.stop_file = cluster.shared / f"stop-writers-{uuid.uuid4().hex}"
        self.processes = {}

    def start(self) -> "Writers":
        for alias in self.aliases:
            self.processes[alias] = self.cluster.popen_python(self.client, WRITE, alias, str(self.seconds),
                                                              str(self.stop_file))
        return self

    def wait(self) -> dict:
        """Stops the writers; alias -> {"acked", "failed", "stalls": [[wall-clock start, seconds, failed
        calls], ...]} once every writer ended."""
        self.stop_file.touch()
        out = {}
        for alias, process in self.processes.items():
            stdout, stderr = process.communicate(timeout=self.seconds + 120)
            if process.returncode != 0:
                raise RuntimeError(f"writer {alias} failed:\n{stderr[-3000:]}")
            out[alias] = json.loads(stdout.strip().splitlines()[-1])
        return out


@dataclass(frozen=True)
class Fault:
    """A way to make a host unreachable (`cut`) and to bring it back (`heal`)."""
    cut: Callable[[MultiHostCluster, Host], None]
    heal: Callable[[MultiHostCluster, Host], None]


def _restart(cluster: MultiHostCluster, host: Host) -> None:
    cluster.start_backend(host)


FAULTS = {
    "link": Fault(lambda c, h: h.link_down(), lambda c, h: h.link_up()),
    "freeze": Fault(lambda c, h: h.freeze(), lambda c, h: h.thaw()),
    "kill": Fault(lambda c, h: c.kill(h.name), _restart),
}
