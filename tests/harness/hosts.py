"""Hosts for multi-node tests: Linux network namespaces on a bridge, each with its own address,
host name and /etc/hosts, built and removed by the test itself.

A `HostNetwork` makes a bridge `dcbr<N>` with 10.77.<N>.1/24 in the root namespace and, per host,
a namespace `dc<N>-<name>` joined to it by a veth pair, holding 10.77.<N>.<i+2>. Commands run in
a host through `ip netns exec` (which bind-mounts /etc/netns/<namespace>/hosts over /etc/hosts,
so every host resolves every other by name) inside a UTS namespace of their own whose host name is
the host's name, so `hostname` answers it as on a real node. Processes of all hosts share the
file system, which stands for a cluster's shared file system.

Everything made is removed by `close()`, also after a failed test; a network left by a killed
test run is removed by the next one (its owner process is gone). `unavailable()` says why hosts
cannot be made on this machine (not root, no iproute2, namespaces refused), for tests to skip."""
from __future__ import annotations

import contextlib
import os
import pathlib
import shutil
import signal
import subprocess
import time

from dataclay._internal.processes import await_exit, runs

SUBNET = "10.77"
OWNERS = pathlib.Path("/run/dataclay-test-hosts")
ETC_NETNS = pathlib.Path("/etc/netns")


def unavailable() -> str | None:
    """Why network-namespace hosts cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "network-namespace hosts need root (ip netns add)"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (iproute2 / util-linux)"
    probe = f"dcprobe{os.getpid() % 100000}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {result.stderr.strip()}")
    return result


class Host:
    """One host of a HostNetwork: a name, an address, and a way to run commands there."""

    def __init__(self, network: "HostNetwork", name: str, index: int):
        self.network = network
        self.name = name
        self.ip = f"{SUBNET}.{network.number}.{index + 2}"
        self.namespace = f"dc{network.number}-{name}"
        self.veth = f"dc{network.number}v{index}"  # the root namespace's end, on the bridge

    def command(self, argv: list[str]) -> list[str]:
        """`argv` as run on this host: in its namespace, under its host name."""
        return ["ip", "netns", "exec", self.namespace, "unshare", "--uts", "--",
                "sh", "-c", 'hostname "$0" && exec "$@"', self.name, *argv]

    def run(self, argv: list[str], env: dict | None = None, timeout: float = 120, check: bool = True,
            input: str | None = None) -> subprocess.CompletedProcess:
        """Runs `argv` here to its end; with `check`, a failure raises with its output."""
        result = subprocess.run(self.command(argv), env=env, capture_output=True, text=True, timeout=timeout,
                                input=input)
        if check and result.returncode != 0:
            raise RuntimeError(f"on {self.name}: {' '.join(argv)} exited {result.returncode}:\n"
                               f"{result.stdout}\n{result.stderr}")
        return result

    def popen(self, argv: list[str], env: dict | None = None, **kwargs) -> subprocess.Popen:
        """Starts `argv` here and returns at once (in a new session, so it can be signalled as a group)."""
        return subprocess.Popen(self.command(argv), env=env, start_new_session=True, **kwargs)

    def pids(self) -> list[int]:
        """Every process running in this host's namespace."""
        out = _ip("netns", "pids", self.namespace, check=False).stdout.split()
        return [int(p) for p in out if p.isdigit()]

    def processes(self) -> set[int]:
        """Every process of this host: those in its namespace and all their descendants (an execution
        environment runs in a network namespace of its own, yet on this host)."""
        found = set(self.pids())
        children: dict[int, list[int]] = {}
        for pid, (_, parent) in _process_table().items():
            children.setdefault(parent, []).append(pid)
        todo = list(found)
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found

    def link_down(self) -> None:
        """Cuts this host off the network (its processes keep running, unreachable)."""
        _ip("link", "set", self.veth, "down")

    def link_up(self) -> None:
        """Connects this host again. Address resolutions that failed or were still pending while it
        was cut off are forgotten on every host: a pending one would otherwise fail a connection
        made right after the heal with "No route to host" once its last probe goes unanswered."""
        _ip("link", "set", self.veth, "up")
        self.network.forget_neighbours()

    def signal_all(self, sig: int) -> None:
        """Sends `sig` to every process of this host."""
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def freeze(self, timeout: float = 10) -> None:
        """Stops every process of this host, and returns once every thread of each has stopped: a
        SIGSTOP is only pending when kill() returns, and on a busy machine a thread may serve a call
        for milliseconds after it. A process started meanwhile is stopped too."""
        deadline = time.monotonic() + timeout
        while True:
            sent = self.processes()
            for pid in sent:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
            running = [pid for pid in sent if not _stopped(pid)]
            if not running and self.processes() <= sent:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: processes did not stop within {timeout} s of SIGSTOP:\n"
                                   + "\n".join(map(_described, running)))
            time.sleep(0.01)

    def thaw(self) -> None:
        """Lets every process of this host run again."""
        self.signal_all(signal.SIGCONT)

    def __repr__(self) -> str:
        return f"Host({self.name}, {self.ip})"


class HostNetwork:
    """Hosts named `names` on a private bridge; use as a context manager (or call close())."""

    def __init__(self, names: list[str]):
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"host names must be distinct and at least one: {names}")
        self.number = 0
        self.hosts: list[Host] = []
        self._names = names
        self.bridge = ""

    def __enter__(self) -> "HostNetwork":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def __getitem__(self, name: str) -> Host:
        return next(h for h in self.hosts if h.name == name)

    @property
    def gateway(self) -> str:
        """The root namespace's address on the bridge (the test process reaches hosts from it)."""
        return f"{SUBNET}.{self.number}.1"

    def start(self) -> "HostNetwork":
        """Makes the bridge, the namespaces, the links and each host's /etc/hosts."""
        self.number = self._claim_subnet()
        try:
            _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
            _ip("link", "set", self.bridge, "up")
            self.hosts = [Host(self, name, i) for i, name in enumerate(self._names)]
            hosts_file = "127.0.0.1 localhost\n::1 localhost\n" + "".join(
                f"{h.ip} {h.name}\n" for h in self.hosts)
            for h in self.hosts:
                _ip("netns", "add", h.namespace)
                _ip("link", "add", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.namespace)
                _ip("link", "set", h.veth, "master", self.bridge, "up")
                _ip("-n", h.namespace, "addr", "add", f"{h.ip}/24", "dev", "eth0")
                _ip("-n", h.namespace, "link", "set", "eth0", "up")
                _ip("-n", h.namespace, "link", "set", "lo", "up")
                etc = ETC_NETNS / h.namespace
                etc.mkdir(parents=True, exist_ok=True)
                (etc / "hosts").write_text(hosts_file)
        except BaseException:
            self.close()
            raise
        return self

    def restore(self) -> None:
        """Every host thawed and connected again (after a test that froze or cut some off)."""
        for host in self.hosts:
            host.signal_all(signal.SIGCONT)
            host.link_up()

    def forget_neighbours(self) -> None:
        """Drops the address-resolution entries of the bridge and of every host."""
        _ip("neigh", "flush", "dev", self.bridge, check=False)
        for host in self.hosts:
            _ip("-n", host.namespace, "neigh", "flush", "dev", "eth0", check=False)

    def close(self) -> None:
        """Kills every process of every host and removes the namespaces, links, bridge and files."""
        if not self.number:
            return
        _remove_network(self.number)
        self.number = 0

    def _claim_subnet(self) -> int:
        """The first free network number; a bridge made first decides between concurrent test runs."""
        OWNERS.mkdir(parents=True, exist_ok=True)
        for number in range(1, 250):
            bridge = f"dcbr{number}"
            owner = OWNERS / str(number)
            if _ip("link", "add", bridge, "type", "bridge", check=False).returncode == 0:
                owner.write_text(str(os.getpid()))
                self.bridge = bridge
                return number
            try:
                stale = not runs(int(owner.read_text()))
            except (OSError, ValueError):
                stale = False  # being made right now by another run, or not ours
            if stale:
                _remove_network(number)
                if _ip("link", "add", bridge, "type", "bridge", check=False).returncode == 0:
                    owner.write_text(str(os.getpid()))
                    self.bridge = bridge
                    return number
        raise RuntimeError("no free test network number (10.77.1-249.0/24 all taken)")


def end_process_group(process: subprocess.Popen, timeout: float = 15) -> None:
    """Ends a process started in a session of its own, and its group: SIGTERM, then SIGKILL after
    `timeout` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGCONT)  # a frozen process cannot handle SIGTERM
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)


def _process_table() -> dict[int, tuple[str, int]]:
    """Every process of this machine: pid -> (state, parent pid)."""
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(f"/proc/{entry}/stat")
            if fields:
                table[int(entry)] = (fields[0], int(fields[1]))
    return table


def _stat_fields(path: str) -> list[str] | None:
    """The fields of a /proc stat file after the command name (state first), or None when the
    process or thread is gone; the name is in parentheses and may hold spaces and parentheses."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def thread_states(pid: int) -> dict[int, str]:
    """thread id -> state letter (R, S, T, ...) of each live thread of `pid` (empty when it is gone)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    states = {}
    for task in tasks:
        fields = _stat_fields(f"/proc/{pid}/task/{task}/stat")
        if fields:
            states[int(task)] = fields[0]
    return states


# Where a thread waits for its vfork child to exec or exit (the kernel's names, old and new). Such a
# thread takes no signal until then: with the child stopped (it is a descendant: stopped too) it
# stays in D, unable to run, and counts as stopped.
VFORK_WAITS = ("kernel_clone", "wait_for_vfork_done", "_do_fork")


def _stopped(pid: int) -> bool:
    """Whether every thread of `pid` is stopped (or gone), or blocked until its vfork child goes on."""
    return all(state in "TtZX" or state == "D" and _wchan(pid, tid) in VFORK_WAITS
               for tid, state in thread_states(pid).items())


def _wchan(pid: int, tid: int) -> str:
    """The kernel function thread `tid` of `pid` waits in ("" when unknown)."""
    try:
        return pathlib.Path(f"/proc/{pid}/task/{tid}/wchan").read_text()
    except OSError:
        return ""


def _described(pid: int) -> str:
    """`pid`, its command line and each thread's state and wait, for a failure message."""
    try:
        command = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        command = "(gone)"
    threads = ", ".join(f"{tid} {state} {_wchan(pid, tid) or '-'}" for tid, state in thread_states(pid).items())
    return f"  {pid} {command[:120]}: {threads}"


def _remove_network(number: int) -> None:
    """Removes network `number` whatever state it is in: processes, namespaces, links, files."""
    prefix = f"dc{number}-"
    # the root namespace's ends of the links, first: a deleted namespace is destroyed by the kernel
    # later (seconds to minutes on a busy machine), and until then its links would keep their names
    # and make the next network with this number fail ("File exists")
    for line in _ip("-br", "link", check=False).stdout.splitlines():
        name = line.split()[0].split("@")[0] if line.strip() else ""
        if name.startswith(f"dc{number}v") and name[len(f"dc{number}v"):].isdigit():
            _ip("link", "del", name, check=False)
    namespaces = [line.split()[0] for line in _ip("netns", "list", check=False).stdout.splitlines() if line.strip()]
    for ns in (n for n in namespaces if n.startswith(prefix)):
        pids = [int(p) for p in _ip("netns", "pids", ns, check=False).stdout.split() if p.isdigit()]
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # a frozen process must be able to die
                os.kill(pid, signal.SIGKILL)
        await_exit(pids, 10)
        _ip("netns", "del", ns, check=False)
        shutil.rmtree(ETC_NETNS / ns, ignore_errors=True)
    _ip("link", "del", f"dcbr{number}", check=False)
    with contextlib.suppress(OSError):
        (OWNERS / str(number)).unlink()
