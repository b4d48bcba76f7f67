"""ZODB as a peer: FileStorage in the client's own process, and ZEO, a storage server over TCP.

A counter is a Persistent object; an update is load, +1, `commit()`. FileStorage flushes and
fsyncs its file in the commit's last phase, so the promise is "fsync at commit" (ZEO: at the
server, before the commit returns to the client). A read is the attribute in a new transaction:
ZODB serves it from the connection's object cache unless another connection's commit invalidated
the object, so a warm read costs no I/O and no round trip, on FileStorage and on ZEO alike."""
from __future__ import annotations

import contextlib
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import persistent

FILESTORAGE_PROMISES = {"update": "fsync at commit; in-process, one client only",
                        "read": "the connection's object cache: no I/O",
                        "field": "the connection's object cache (no fields: the read again)"}
ZEO_PROMISES = {"update": "fsync at commit, in the server, before the reply",
                "read": "client's object cache: no round trip unless invalidated",
                "field": "client's object cache (no fields: the read again)"}


class Counter(persistent.Persistent):
    """The stored counter; its module is importable wherever a ZODB client runs."""

    def __init__(self):
        self.value = 0


def counter_operations(connection, key: str) -> dict:
    """update / read / field on the Counter under `key` in the root, made here if absent. Read and
    field are the same: ZODB has no remote method, a read is the attribute."""
    manager = connection.transaction_manager
    # clients that start together all add their counter to the root: ZODB's answer to the
    # ConflictError that some of them get is to retry (one more succeeds in every round)
    for attempt in manager.attempts(64):
        with attempt:
            if key not in connection.root():
                connection.root()[key] = Counter()
    counter = connection.root()[key]

    def update():
        manager.begin()
        counter.value += 1
        manager.commit()
        return counter.value

    def read():
        manager.begin()  # sees other connections' commits, as a fresh read must
        return counter.value

    return {"update": update, "read": read, "field": read}


def open_connection(storage):
    """A connection of a new DB on `storage`, with a transaction manager of its own."""
    import transaction
    import ZODB

    return ZODB.DB(storage).open(transaction_manager=transaction.TransactionManager())


@contextlib.contextmanager
def file_storage():
    """A FileStorage on /dev/shm, opened in this process; yields a connection."""
    from ZODB.FileStorage import FileStorage

    directory = tempfile.mkdtemp(prefix="peers-zodb-", dir="/dev/shm")
    connection = open_connection(FileStorage(str(pathlib.Path(directory) / "Data.fs")))
    try:
        yield connection
    finally:
        connection.db().close()
        shutil.rmtree(directory, ignore_errors=True)


def zeo_connection(port: int):
    """A connection to the ZEO server on `port`."""
    import ZEO

    return open_connection(ZEO.client(("127.0.0.1", port), wait_timeout=30))


@contextlib.contextmanager
def zeo_server():
    """`runzeo` serving a FileStorage on /dev/shm on a free port; yields (port, process)."""
    directory = tempfile.mkdtemp(prefix="peers-zeo-", dir="/dev/shm")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runzeo = pathlib.Path(sys.executable).with_name("runzeo")
    server = subprocess.Popen([str(runzeo), "-a", f"127.0.0.1:{port}", "-f", str(pathlib.Path(directory) / "Data.fs")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("runzeo did not start (pip install ZEO: requirements-dev.txt)")
            time.sleep(0.01)
        yield port, server
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)
