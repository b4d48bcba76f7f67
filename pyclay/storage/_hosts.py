"""COMPSs names places by host name, dataClay by backend ID: this maps one to the other, as the Java
storage.StorageItf does. A name matches the backends of the first of these tiers that matches
any: the backend's ID, its name, its host (case-insensitive; "node1" also matches
"node1.example.org"), and last, when both denote this machine (localhost, a loopback address or
this machine's host name), every backend on this machine. No name is looked up in DNS."""
from __future__ import annotations

import ipaddress
import socket


def hosts_of(backends: dict, locations: list) -> list:
    """The host names of `locations` (backend IDs), in order, each once; unknown backends are left out."""
    hosts = []
    for backend_id in locations:
        backend = backends.get(backend_id)
        if backend is not None and backend.host not in hosts:
            hosts.append(backend.host)
    return hosts


def pick(backends: dict, name: str, preferred) -> str | None:
    """The ID of the backend `name` names: among the matches a live one first, then one `preferred(id)` accepts,
    then the first by name; None if it names none."""
    wanted = name.strip().lower()
    tiers = (lambda b: b.id.lower() == wanted,
             lambda b: b.name.lower() == wanted,
             lambda b: same_host(b.host.lower(), wanted),
             lambda b: is_this_machine(wanted) and is_this_machine(b.host))
    for tier in tiers:
        found = [b for b in backends.values() if tier(b)]
        if found:
            return min(found, key=lambda b: (not b.alive, not preferred(b.id), b.name, b.id)).id
    return None


def same_host(a: str, b: str) -> bool:
    """Equal, or one is the other's first label when neither is an address ("node1", "node1.example.org")."""
    if a == b:
        return True
    if _address(a) is not None or _address(b) is not None:
        return False
    return b.startswith(a + ".") if "." not in a else "." not in b and a.startswith(b + ".")


def is_this_machine(host: str) -> bool:
    """Whether a host name denotes this machine: localhost, a loopback or unspecified address, or its own name."""
    host = host.strip().lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = _address(host)
    if address is not None:
        return address.is_loopback or address.is_unspecified
    return same_host(socket.gethostname().lower(), host)


def _address(text: str):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None
