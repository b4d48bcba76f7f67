"""Where `dataclay import` puts a snapshot's objects in a cluster whose size and engines may differ
from the source's: each master copy on the target backend holding the fewest bytes so far (the
source's placement is not kept: a snapshot may come from more or fewer backends), and as many of
its replicas as it had, on the backends after it in order, as far as there are other backends."""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field


@dataclass
class TargetLoad:
    """What one target backend stages: master copies (record indexes) and replicas (record, master)."""

    backend_id: str
    masters: list = field(default_factory=list)
    replicas: list = field(default_factory=list)
    replica_holders: dict = field(default_factory=dict)   # master record -> backends of its replicas
    bytes: int = 0


@dataclass
class Placement:
    """Every target's load, and how many objects got fewer replicas than they had."""

    targets: dict
    short_of_replicas: int = 0
    wanted_replicas: int = 0

    def staging(self) -> list:
        """The targets that stage anything, by backend ID."""
        return [t for _, t in sorted(self.targets.items()) if t.masters or t.replicas]


def place(index, backends: dict) -> Placement:
    """Places every object of the checked snapshot `index` on `backends` (backend ID -> the languages
    it runs: an object goes only where its language runs, replicas too)."""
    from dataclay.exceptions import BackendUnavailableError
    order = sorted(backends)
    targets = {b: TargetLoad(b) for b in order}
    loads = {b: 0 for b in order}
    heaps, eligible = {}, {}
    placement = Placement(targets)
    for object_id, record in sorted(index.chosen.items(), key=lambda item: item[1]):
        language = index.language_of(record)
        if language not in heaps:
            eligible[language] = [b for b in order if language in backends[b]]
            if not eligible[language]:
                raise BackendUnavailableError(f"no live backend of this cluster runs {index.language_name(language)} "
                                              f"objects, which the snapshot holds")
            heaps[language] = [(loads[b], position, b) for position, b in enumerate(eligible[language])]
            heapq.heapify(heaps[language])
        heap, candidates = heaps[language], eligible[language]
        size = index.record_bytes(record)
        while True:  # entries go stale when another language's object lands on a backend
            load, position, master = heapq.heappop(heap)
            if load == loads[master]:
                break
            heapq.heappush(heap, (loads[master], position, master))
        loads[master] += size
        heapq.heappush(heap, (loads[master], position, master))
        targets[master].masters.append(record)
        targets[master].bytes += size
        wanted = index.replicas_of(object_id)
        made = min(wanted, len(candidates) - 1)
        if made < wanted:
            placement.short_of_replicas += 1
            placement.wanted_replicas = max(placement.wanted_replicas, wanted)
        for step in range(1, made + 1):
            holder = candidates[(position + step) % len(candidates)]
            targets[holder].replicas.append((record, master))
            targets[holder].bytes += size
            targets[master].replica_holders.setdefault(record, []).append(holder)
    return placement
