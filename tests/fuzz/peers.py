"""Other loopback source addresses for the fuzzer's identities. The servers throttle failed
log-ins and unknown tokens per peer address, and a local cluster's own servers talk to each other
from 127.0.0.1: fuzzing from there would lock the cluster out of itself (and the oracle's
known-good calls with it). So each identity's traffic goes through a small TCP relay that dials
the server from an address of its own (127.0.0.2, 127.0.0.3, ...; Linux routes all of 127/8 to
loopback), the way a client on another host would arrive."""
from __future__ import annotations

import selectors
import socket
import threading


class Relay:
    """Listens on 127.0.0.1:<free port> and forwards each connection to `target` ("host:port"),
    dialling from `source_ip`. Stops with close()."""

    def __init__(self, target: str, source_ip: str):
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.source_ip = source_ip
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._listener.getsockname()[1]}"
        self._closed = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, name=f"relay-{source_ip}", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                upstream.bind((self.source_ip, 0))
                upstream.connect(self.target)
            except OSError:
                client.close()
                continue
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._sockets.update((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        """Copies bytes both ways until either side closes."""
        sel = selectors.DefaultSelector()
        sel.register(a, selectors.EVENT_READ, b)
        sel.register(b, selectors.EVENT_READ, a)
        try:
            while not self._closed.is_set():
                for key, _ in sel.select(timeout=0.5):
                    data = key.fileobj.recv(1 << 16)
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            sel.close()
            for s in (a, b):
                s.close()
            with self._lock:
                self._sockets.difference_update((a, b))

    def close(self) -> None:
        """Stops accepting and cuts every relayed connection."""
        self._closed.set()
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
