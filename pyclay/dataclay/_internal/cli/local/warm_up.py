"""The warm-up pass of a starting cluster (`dataclay start --warm-up CALLS`, `dataclay slurm run|start
--warm-up CALLS`, or DATACLAY_WARMUP): once every server is up, and before the launcher says so,
CALLS calls go to each backend along the path a program's calls take, so that the Data Services'
JIT has compiled that path before the first real call. Without it, the first 20,000 calls of a
fresh cluster had a p99 of 10-13x the warm median on a 2-CPU VM; after 20,000 warm-up calls,
2.7-3.5x (benchmarks/README.md, "Environment threads").

It is an ordinary client of the cluster, with the account of the cluster's client configuration
and no other power: it registers a model of one class under a fresh namespace
(dataclay_warm_up_<random>), makes one object without an alias on each backend and calls it from a
process per backend, all at once (durable updates, a read-only method and a field read). It waits
until each Data Service's JIT has compiled what those calls queued (GetStatus' jit_compile_ms stops
growing; on two CPUs the compilers lag the calls by seconds). Then, on a cluster that held no
object before, it runs a garbage collection, which removes those objects (elsewhere they are left
to the cluster's own collections), and it removes the model. A warm-up that fails is reported and
leaves the cluster running: it costs only speed. Run as a module, it is that
pass (`--calls N`), or one backend's share of it (`--worker BACKEND_ID`)."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import secrets
import signal
import subprocess
import sys
import tempfile
import time

from dataclay.exceptions import DataClayException, InvalidArgumentError, PermissionDeniedError
from dataclay._internal import processes
from dataclay._internal import settings_table as table
from dataclay._internal.config import DATACLAY4_KEYS, KEYS

MODULE = "dataclay._internal.cli.local.warm_up"  # what runs the pass and its workers (`python -m`)
SECONDS_PER_CALL = 0.01   # a generous bound, for the pass's timeout (a warm call takes 0.1-0.5 ms)
FIXED_SECONDS = 120.0     # registering, the environments' start, the JIT's wait, the collection
JIT_WINDOW = 0.5          # seconds between two looks at a backend's JIT time
JIT_QUIET_MS = 25         # at most this many ms of compiling in a window: the JIT is done with the calls' code
JIT_WAIT_MAX = 30.0       # the longest wait for it
STOP_SECONDS = 10.0       # the longest wait for a stopped pass's processes to exit
# Three calls in four are durable updates (the path the JIT needs most calls to compile); the fourth
# is a read-only method or a field read, in turn (both answered by the store).
MODEL = '''\
from dataclay import DataClayObject, activemethod


class WarmUpCounter(DataClayObject):
    value: int

    def __init__(self):
        self.value = 0

    @activemethod
    def increment(self) -> int:
        self.value += 1
        return self.value

    @activemethod
    def get(self) -> int:
        return self.value
'''


class WarmUpError(DataClayException):
    """The warm-up pass failed; the message says where, and what of it may be left."""

    code = "INTERNAL"


def calls_option(text: str) -> int:
    """A --warm-up value (argparse type): calls per backend, 0 for none."""
    kind = table.setting("DATACLAY_WARMUP").kind
    calls = kind.parse(text)
    if calls is None:
        raise argparse.ArgumentTypeError(f"must be {kind.what}, not {text!r} (20000 makes programs' first calls as "
                                         f"fast as warm ones)")
    return calls


def run(calls: int, home: pathlib.Path) -> str:
    """Runs the pass against the cluster whose client configuration is `home`/client.properties (and
    nothing else: no connection setting of this process's environment, nor a .env file, can point it
    elsewhere); returns its report (one line). WarmUpError when it failed."""
    env = {k: v for k, v in os.environ.items() if k not in KEYS and k not in DATACLAY4_KEYS}
    env["DATACLAY_HOME"] = str(home)
    timeout = FIXED_SECONDS + calls * SECONDS_PER_CALL
    # a process group of its own: a pass past its time is ended with its workers
    process = subprocess.Popen([sys.executable, "-m", MODULE, "--calls", str(calls)], env=env, cwd=home,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        out, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop_group(process)
        raise WarmUpError(f"the warm-up did not end within {timeout:.0f} s and was stopped; its model may be left: "
                          f"`dataclaycmd ListModels <user> -` shows it as dataclay_warm_up_<random>, and "
                          f"`dataclaycmd RemoveModel <user> - <namespace> --force` removes it") from None
    except BaseException:
        _stop_group(process)
        raise
    if process.returncode != 0:
        lines = [line for line in errors.splitlines() if line.strip()][-8:]
        raise WarmUpError("the warm-up failed:\n" + "\n".join(lines))
    report = json.loads(out.strip().splitlines()[-1])
    done = (f"warmed up in {report['seconds']:.1f} s: {calls:,} calls on each of {report['backends']} backend(s), "
            f"then {report['compiling']:.1f} s for the JIT to finish; ")
    if report["left"]:
        return done + (f"its model removed, and its {report['left']} object(s) (unreachable: no alias) left to the "
                       f"cluster's next garbage collection, as the cluster already held objects")
    return done + f"its model and {report['collected']} object(s) removed"


def _stop_group(process: subprocess.Popen) -> None:
    """Kills the pass and its workers (its process group), and returns once none of them runs: a
    SIGKILL is delivered at once but a process takes a moment to exit (each of its threads, and its
    memory), and only the pass is this process's child to wait for (its workers, orphaned, are
    reaped by init)."""
    members = processes.group_members(process.pid)
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate()
    processes.await_exit(members + processes.group_members(process.pid), STOP_SECONDS)


def _pass(calls: int) -> dict:
    """The whole pass, in this process and one worker process per backend; what it did."""
    from dataclay._internal.cli.admin.model_files import read_python_model
    from dataclay._internal.config import Config
    from dataclay._internal.rpc import LogicModuleClient

    config = Config.load()
    if not (config.user and config.password):
        raise InvalidArgumentError("the warm-up needs the cluster's client configuration (its account and password)")
    began = time.monotonic()
    lm = LogicModuleClient(config.lm_address, tls=config.tls)
    try:
        lm.token = lm.new_session(config.user, config.password, "").token
        namespace = f"dataclay_warm_up_{secrets.token_hex(6)}"
        with tempfile.TemporaryDirectory(prefix="dataclay-warm-up-") as root:  # 0700: only this user imports from it
            package = pathlib.Path(root, namespace)
            package.mkdir()
            (package / "__init__.py").write_text("")
            (package / "counter.py").write_text(MODEL)
            fresh = _holds_no_object(lm)
            lm.register_model(read_python_model(namespace, root))
            backends, collected, waited = [], 0, 0.0
            try:
                backends = [backend for backend in lm.get_backends() if backend.alive]
                _work_on([backend.id for backend in backends], calls, root, namespace)
                waited = _until_compiled(backends, lm.token, config.tls)
            finally:
                try:
                    # the workers' sessions have ended, so nothing holds their objects, and on a cluster
                    # that held no object before they are all there is to collect. A cluster with objects
                    # of its own may keep unreachable ones on purpose (DATACLAY_GC_INTERVAL=0): there,
                    # the warm-up's are left to the cluster's own collections
                    if fresh:
                        collected = lm.collect_garbage().collected
                finally:
                    left = lm.remove_model(namespace, force=True)
        lm.close_session()
    finally:
        lm.close()
    return {"seconds": time.monotonic() - began, "backends": len(backends), "collected": collected, "left": left,
            "compiling": waited}


def _holds_no_object(lm) -> bool:
    """Whether the cluster holds no object (False when this account may not know: not an administrator)."""
    try:
        return lm.get_stats().objects == 0
    except PermissionDeniedError:
        return False


def _until_compiled(backends: list, token: str, tls) -> float:
    """Waits until every backend's JIT has finished what the calls queued (it compiled for at most
    JIT_QUIET_MS in the last JIT_WINDOW seconds), JIT_WAIT_MAX seconds at most; returns the seconds
    waited. On two CPUs the compilers lag the calls: without this wait, a program's first thousands
    of calls would run beside them."""
    from dataclay._internal.rpc.dataservice import DataServiceClient

    began = time.monotonic()
    clients = [DataServiceClient(f"{b.host}:{b.port}", token, tls=tls) for b in backends]
    try:
        last = [client.get_status().jit_compile_ms for client in clients]
        while time.monotonic() - began < JIT_WAIT_MAX:
            time.sleep(JIT_WINDOW)
            now = [client.get_status().jit_compile_ms for client in clients]
            if all(n - l <= JIT_QUIET_MS for n, l in zip(now, last)):
                break
            last = now
    except PermissionDeniedError:
        pass  # GetStatus is for administrators: another account's pass does not wait
    finally:
        for client in clients:
            client.close()
    return time.monotonic() - began


def _work_on(backends: list[str], calls: int, root: str, namespace: str) -> None:
    """Runs one worker per backend, all at once; raises when one failed."""
    workers = {backend: subprocess.Popen([sys.executable, "-m", MODULE, "--worker", backend, "--calls", str(calls),
                                          "--root", root, "--namespace", namespace],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         text=True)
               for backend in backends}
    failures = []
    for backend, worker in workers.items():
        _, errors = worker.communicate()
        if worker.returncode != 0:
            failures.append(f"backend {backend}: " + " ".join(errors.strip().splitlines()[-3:]))
    if failures:
        raise WarmUpError("; ".join(failures))


def _work(backend: str, calls: int, root: str, namespace: str) -> None:
    """One backend's share: an object stored there, called `calls` times."""
    sys.path.insert(0, root)
    from dataclay import api
    api.init()
    try:
        counter = importlib.import_module(f"{namespace}.counter").WarmUpCounter()
        counter.make_persistent(backend_id=backend)
        for i in range(calls):
            if i % 4 < 3:
                counter.increment()
            elif i % 8 == 3:
                counter.get()
            else:
                counter.value
    finally:
        api.finish()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description="A cluster's warm-up pass.")
    parser.add_argument("--calls", type=calls_option, required=True)
    parser.add_argument("--worker", metavar="BACKEND_ID")
    parser.add_argument("--root")
    parser.add_argument("--namespace")
    args = parser.parse_args(argv)
    try:
        if args.worker:
            _work(args.worker, args.calls, args.root, args.namespace)
        else:
            print(json.dumps(_pass(args.calls)))
    except DataClayException as e:
        print(f"warm-up: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.umask(0o077)
    sys.exit(main(sys.argv[1:]))
