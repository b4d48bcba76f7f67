"""This project as a peer: a Counter of the test models (tests/models/people/model.py) on a
cluster's `kv` engine."""
from __future__ import annotations

PROMISES = {"update": "durable at return: the kv pool's transaction persisted before the reply",
            "read": "active method returning a field: the Data Service answers from its store once the "
                    "environment has vouched that the method only returns the field",
            "field": "GetField, served by the Data Service"}


def pmclay_operations() -> dict:
    """update / read / field on a new persistent Counter: `increment()` and `get()` are active
    methods run in the backend's execution environment; `counter.value` is a GetField to the
    Data Service. Needs api.init() first."""
    from people.model import Counter

    counter = Counter(0)
    counter.make_persistent()
    return {"update": counter.increment, "read": counter.get, "field": lambda: counter.value}


def pmclay_servers(cluster) -> dict[str, list[int]]:
    """Process kind -> pids: the Logic Module, the Data Service JVMs and, below a Data Service,
    its execution environments (each with its sandbox's processes)."""
    from _cpu_time import descendants

    pids = cluster.pids()
    services = [pid for name, pid in pids.items() if name != "logicmodule"]
    return {"logic module": [pids["logicmodule"]], "data service": services,
            "environment": [child for ds in services for child in descendants(ds)]}
