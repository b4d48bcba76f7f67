"""Where a backend runs: DATACLAY_CPUS names the CPUs of each backend's Data Service, and its
execution environments run on the same ones (a child keeps its parent's CPUs).

The value is `numa` (backend i runs on the CPUs of the i-th NUMA node with CPUs, mod their count: one
backend per socket, next to that socket's memory and persistent memory, as dataClay 4 places them), or Linux
CPU lists such as `0-3,8` separated by `;` (backend i takes list i mod their count). Unset, the
operating system places every process.

The launchers start a server inside `placed(cpus)`: the starting thread takes those CPUs for the
moment of the start, so the server has them from its first instruction on, threads and children
included, and nothing else in the launcher moves."""
from __future__ import annotations

import contextlib
import os
import pathlib

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.settings_table import NUMA, cpu_list

NODES = pathlib.Path("/sys/devices/system/node")


def shown(cpus) -> str:
    """A CPU set as a Linux CPU list ("0-3,8")."""
    ranges, ordered = [], sorted(cpus)
    start = previous = ordered[0]
    for cpu in ordered[1:] + [None]:
        if cpu is not None and cpu == previous + 1:
            previous = cpu
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if cpu is not None:
            start = previous = cpu
    return ",".join(ranges)


def numa_nodes(root: pathlib.Path = NODES) -> list[tuple[int, frozenset[int]]]:
    """(node number, CPU set) of each NUMA node with CPUs, in node order; [] where the kernel shows no
    nodes. A node of memory only (CXL, persistent memory onlined as system RAM) takes no backend."""
    nodes = []
    for path in sorted(root.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        try:
            cpus = cpu_list((path / "cpulist").read_text())
        except OSError:
            continue
        if cpus:
            nodes.append((int(path.name[4:]), cpus))
    return nodes


def cpus_for(spec, index: int, allowed: frozenset[int] | None = None,
             nodes: list[tuple[int, frozenset[int]]] | None = None) -> frozenset[int] | None:
    """The CPUs of backend `index` (from 0) under DATACLAY_CPUS's value `spec` (None: the OS
    places it), checked against `allowed`, the CPUs this process may use (its own, by default).
    InvalidArgumentError names what is wrong: CPUs this process may not use, or `numa` on a machine
    that shows no NUMA node."""
    if spec is None:
        return None
    allowed = frozenset(os.sched_getaffinity(0)) if allowed is None else allowed
    if spec == NUMA:
        nodes = numa_nodes() if nodes is None else nodes
        if not nodes:
            raise InvalidArgumentError(f"DATACLAY_CPUS=numa, but {NODES} shows no NUMA node: give the CPUs as a list "
                                       f"instead (this process may use {shown(allowed)})")
        number, node = nodes[index % len(nodes)]
        cpus = node & allowed
        if not cpus:
            raise InvalidArgumentError(f"DATACLAY_CPUS=numa puts backend {index + 1} on NUMA node {number} (CPUs "
                                       f"{shown(node)}), none of which this process may use (it may use "
                                       f"{shown(allowed)})")
        return cpus
    cpus = spec[index % len(spec)]
    refused = cpus - allowed
    if refused:
        raise InvalidArgumentError(f"DATACLAY_CPUS gives backend {index + 1} the CPU list {shown(cpus)}, but this "
                                   f"process may not use {shown(refused)} (it may use {shown(allowed)}): name CPUs "
                                   f"it may use")
    return cpus


@contextlib.contextmanager
def placed(cpus: frozenset[int] | None):
    """Runs its body on `cpus` (None: as it is): a process started in it keeps them. Only the calling
    thread moves, and it moves back after."""
    if cpus is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
