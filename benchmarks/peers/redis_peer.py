"""Redis 7 (Debian's redis-server) as the peer a Python programmer would script: GET, unpickle,
and for an update +1, pickle, SET."""
from __future__ import annotations

import contextlib
import pickle
import shutil
import socket
import subprocess
import tempfile
import time

PROMISES = {"update": "fsync of the AOF before the reply (appendfsync always)",
            "read": "GET over TCP + unpickle", "field": "GET over TCP + unpickle (no fields: the read again)"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(durable: bool = True):
    """A redis-server on /dev/shm on a free port (`durable`: AOF with `appendfsync always`, else
    nothing on disk); yields (its port, its process)."""
    import redis

    directory = tempfile.mkdtemp(prefix="peers-redis-", dir="/dev/shm")
    port = free_port()
    persistence = ["--appendonly", "yes", "--appendfsync", "always"] if durable else ["--appendonly", "no"]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", directory,
                               *persistence, "--save", ""],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("redis-server did not start (is it installed? scripts/install-deps.sh)")
                time.sleep(0.01)
        client.close()
        yield port, server
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


def redis_operations(port: int, key: str) -> dict:
    """update / read / field on a pickled int under `key` (set to 0). Redis has no fields: the
    field read is the same GET + unpickle as the read. The update is not atomic between clients
    (WATCH/MULTI would make it so, and slower): each client here has a key of its own."""
    import redis

    client = redis.Redis(port=port)
    client.set(key, pickle.dumps(0))

    def update():
        value = pickle.loads(client.get(key)) + 1
        client.set(key, pickle.dumps(value))
        return value

    def read():
        return pickle.loads(client.get(key))

    return {"update": update, "read": read, "field": read}
