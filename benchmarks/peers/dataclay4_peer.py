"""dataClay 4.3.1 from PyPI as a peer: its metadata service and one backend started as processes,
with a Redis for its metadata, and its client in a virtualenv of its own (its package is also
named `dataclay`), made on first use in benchmarks/.venv-dataclay4."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from redis_peer import free_port, redis_server

PROMISES = {"update": "in memory; pickled to disk on flush or shutdown: not durable at return",
            "read": "active method, run in the backend", "field": "attribute read, a request to the backend"}
HERE = pathlib.Path(__file__).resolve().parent
VENV = HERE.parent / ".venv-dataclay4"


def dataclay4_python() -> pathlib.Path:
    """dataClay 4.3.1's own interpreter, its virtualenv made on first use."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "dataclay==4.3.1"], check=True)
    return python


def wait_for_port(port: int, process: subprocess.Popen, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start")
        time.sleep(0.05)


def dataclay4_samples(n: int, warmup: int, rounds: int, just_started: int) -> dict:
    """What peers/dataclay4_client.py reports (samples per operation, the first calls, the
    start-up time), against services started here and stopped before returning."""
    python = dataclay4_python()
    storage = tempfile.mkdtemp(prefix="peers-dataclay4-", dir="/dev/shm")
    metadata_port, backend_port = free_port(), free_port()
    launched = time.time()
    with redis_server(durable=False) as (kv_port, _):
        # dataClay 4 reads every DATACLAY_* variable as its own setting: pmclay's must not reach it
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATACLAY_", "DC_"))}
        env.update({"DATACLAY_KV_HOST": "127.0.0.1", "DATACLAY_KV_PORT": str(kv_port),
                    "DATACLAY_STORAGE_PATH": storage, "DATACLAY_LOGLEVEL": "WARNING",
                    "DATACLAY_METADATA_HOST": "127.0.0.1", "DATACLAY_METADATA_PORT": str(metadata_port),
                    "DATACLAY_BACKEND_HOST": "127.0.0.1", "DATACLAY_BACKEND_PORT": str(backend_port),
                    "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])})
        servers = [subprocess.Popen([str(python), "-m", "dataclay.metadata"], env=env, cwd=storage,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            wait_for_port(metadata_port, servers[0], "dataClay 4's metadata service")
            servers.append(subprocess.Popen([str(python), "-m", "dataclay.backend"], env=env, cwd=storage,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for_port(backend_port, servers[1], "dataClay 4's backend")
            time.sleep(2)  # the backend registers itself with the metadata service after it listens
            worker = subprocess.run([str(python), str(HERE / "dataclay4_client.py"), str(metadata_port), str(n),
                                     str(warmup), str(rounds), str(just_started), repr(launched)],
                                    env=env, capture_output=True, text=True, check=True)
            return json.loads(worker.stdout.strip().splitlines()[-1])
        finally:
            for server in servers:
                server.terminate()
            for server in servers:
                server.wait(timeout=30)
            shutil.rmtree(storage, ignore_errors=True)
