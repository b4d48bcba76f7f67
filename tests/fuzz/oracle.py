"""What must hold while fuzzing, checked against the real cluster: every server process (the Logic
Module, each Data Service) is the same live process it was at the start and stays within a memory
bound, and no execution environment exits unasked; no crafted payload created the marker file;
known-good calls on objects the fuzzer never names still answer with the right values; a plain
user's model code, confined, is refused each read of the cluster's secrets and each connection
to its ports; the servers' logs hold no SEVERE line, Python traceback or JVM error; and no reply
to another identity carries the administrator's secrets."""
from __future__ import annotations

import pathlib
import pickle
import re

from dataclay._internal.rpc import DataServiceClient, LogicModuleClient

from fuzz.identities import USER, USER_PASSWORD
from fuzz.world import (JAVA_PROBE_ANSWER, JAVA_PROBE_ARGS, SECRET_NAME, SECRET_VAULT, SENTINEL_VALUE, World)

# Lines that mean a server hit something it did not handle. WARNING lines (one per malformed
# request, at most ten a kind per ten seconds, then one line counting the rest) are expected and
# only counted.
_BAD_LOG = re.compile(r" SEVERE |Traceback \(most recent call last\)|OutOfMemoryError|StackOverflowError|"
                      r"Exception in thread|FATAL|core dumped|A fatal error has been detected")
# the Data Service's line for an execution environment that exited without being asked to
_ENV_CRASH = re.compile(r"the execution environment .* exited with code")
_SECRETS = (SECRET_NAME.encode(), SECRET_VAULT.encode())
MiB = 1 << 20


def rss(pid: int) -> int:
    """Resident set size of a process in bytes (0 when it is gone)."""
    try:
        for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Oracle:
    """Checks the cluster's health; `rss_growth_limit`: how much any server may grow over its
    size at the start (a payload that makes a server allocate what it claims shows here)."""

    def __init__(self, cluster, world: World, rss_growth_limit: int = 768 * MiB):
        self.cluster = cluster
        self.world = world
        self.rss_growth_limit = rss_growth_limit
        # execution-environment processes come and go (one per account, restarted when a model they
        # ran is withdrawn): one that dies unasked shows in its Data Service's log (_ENV_CRASH)
        self.processes = dict(cluster.pids())
        self.rss_start = {name: rss(pid) for name, pid in self.processes.items()}
        self.rss_peak = dict(self.rss_start)
        self._log_offsets = {log: log.stat().st_size for log in self._logs()}
        self.warning_lines = 0
        lm = LogicModuleClient(world.lm_address)
        self._token = lm.new_session(*world.admin).token
        lm.close()
        self._lm = LogicModuleClient(world.lm_address, self._token)
        self._ds = {b.id: DataServiceClient(b.address, self._token) for b in world.backends}
        user = LogicModuleClient(world.lm_address)
        user_token = user.new_session(USER, USER_PASSWORD).token
        user.close()
        self._user_ds = {b.id: DataServiceClient(b.address, user_token) for b in world.backends}
        home = cluster.home
        # what the user's model code must never reach from its execution environment
        self._escapes = [("read", str(home / "client.properties")), ("read", str(home / "lm" / "metadata.db")),
                         *(("read", str(f)) for f in sorted(home.rglob("*.secret"))),
                         ("listdir", str(home)), ("connect", "127.0.0.1", cluster.port)]
        self.good_calls = 0

    def _logs(self) -> list[pathlib.Path]:
        return sorted((self.cluster.home / "logs").glob("*.log"))

    def leaks(self, identity: str, replies: list[bytes]) -> list[str]:
        """Problems when a reply to an identity other than the administrator holds a secret."""
        if identity in ("admin", "backend"):
            return []
        return [f"reply to {identity} holds the administrator's secret {s.decode()!r}"
                for s in _SECRETS for r in replies if s in r]

    def check(self) -> list[str]:
        """Every problem with the cluster right now (empty when healthy)."""
        problems = []
        for name, pid in self.processes.items():
            size = rss(pid)
            if not size:
                problems.append(f"{name} (pid {pid}) is gone")
                continue
            self.rss_peak[name] = max(self.rss_peak[name], size)
            if size - self.rss_start[name] > self.rss_growth_limit:
                problems.append(f"{name} grew from {self.rss_start[name] // MiB} MiB to {size // MiB} MiB")
        if self.world.marker.exists():
            problems.append(f"a crafted payload ran code: {self.world.marker} exists")
        problems += self._bad_log_lines()
        problems += self._good_calls()
        problems += self._confined()
        return problems

    def _bad_log_lines(self) -> list[str]:
        out = []
        for log in self._logs():
            start = self._log_offsets.get(log, 0)
            with log.open("rb") as f:
                f.seek(start)
                chunk = f.read()
            # only whole lines: a line being written is read next time
            end = chunk.rfind(b"\n") + 1
            self._log_offsets[log] = start + end
            for line in chunk[:end].decode(errors="replace").splitlines():
                if " WARNING " in line or line.startswith("WARNING"):
                    self.warning_lines += 1
                if _BAD_LOG.search(line) or _ENV_CRASH.search(line):
                    out.append(f"{log.name}: {line[:400]}")
        return out

    def _good_calls(self) -> list[str]:
        """The calls a user would make next, on objects the fuzzer never named."""
        problems = []
        try:
            self._lm.health()
        except Exception as e:
            problems.append(f"Logic Module Health failed: {e!r}")
        for backend in self.world.backends:
            sentinel = self.world.sentinels[backend.id]
            ds = self._ds[backend.id]
            try:
                value = pickle.loads(ds.get_field(sentinel["counter"], "value"))
                if value != SENTINEL_VALUE:
                    problems.append(f"{backend.name}: sentinel counter holds {value!r}, not {SENTINEL_VALUE}")
                answer = ds.call_method(sentinel["vault"], "size", JAVA_PROBE_ARGS)
                if answer != JAVA_PROBE_ANSWER:
                    problems.append(f"{backend.name}: Java probe answered {answer.hex()}, not {JAVA_PROBE_ANSWER.hex()}")
            except Exception as e:
                problems.append(f"{backend.name}: a good call failed: {e!r}")
        self.good_calls += 1
        return problems

    def _confined(self) -> list[str]:
        """The user's model code, on each backend, tries to read the cluster's secrets and reach the
        Logic Module: each attempt must report a refusal."""
        problems = []
        for backend in self.world.backends:
            ds = self._user_ds[backend.id]
            for method, *args in self._escapes:
                try:
                    outcome = pickle.loads(ds.call_method(self.world.probes[backend.id], method,
                                                          pickle.dumps((tuple(args), {}), protocol=5)))
                except Exception as e:
                    problems.append(f"{backend.name}: the probe's {method}{tuple(args)} failed: {e!r}")
                    continue
                if not str(outcome).startswith("refused"):
                    problems.append(f"{backend.name}: model code escaped: {method}{tuple(args)} -> {outcome!r}")
        return problems

    def close(self) -> None:
        """Closes the oracle's own session and channels."""
        for ds in [*self._ds.values(), *self._user_ds.values()]:
            ds.close()
        self._lm.close()
