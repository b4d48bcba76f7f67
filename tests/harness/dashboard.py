"""`dataclay dashboard` started for a test cluster, and a small HTTP client of it that keeps its
session cookie as a browser would."""
from __future__ import annotations

import http.client
import json
import select
import signal
import socket
import ssl
import subprocess
import time
import urllib.parse

from harness.cluster import _command

# Every URL of the dashboard that shows a page or data (what an unauthenticated request must not get).
PRIVATE_URLS = ("/", "/index.html", "/app.js", "/vendor/chart.umd.min.js", "/api/v1/whoami", "/api/v1/overview",
                "/api/v1/calls", "/api/v1/backends/x", "/api/v1/models", "/api/v1/datasets", "/api/v1/sessions",
                "/api/v1/events", "/api/v1/locate?q=anything", "/api/v1/nonexistent", "/nonexistent")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Dashboard:
    """A `dataclay dashboard` process for `cluster`; use as a context manager (stopped with SIGTERM)."""

    def __init__(self, cluster, *args: str, env: dict | None = None):
        self.port = _free_port()
        self.args = ["--port", str(self.port), "--sample-seconds", "1", *args]
        self.env = dict(cluster.env if env is None else env)
        self.tls = bool(getattr(cluster, "tls", False))
        self.ca = str(cluster.home / "tls" / "ca.pem") if self.tls else None
        self.process: subprocess.Popen | None = None
        self.banner = ""

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://localhost:{self.port}"

    def __enter__(self) -> "Dashboard":
        self.process = subprocess.Popen([_command("dataclay"), "dashboard", *self.args], env=self.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                self.banner = self.process.stdout.readline()
                if "dashboard on" in self.banner:
                    return self
            if self.process.poll() is not None:
                raise RuntimeError(f"dataclay dashboard exited {self.process.returncode}: "
                                   f"{self.process.stdout.read()}{self.process.stderr.read()}")
        self.stop()
        raise RuntimeError("dataclay dashboard did not start within 30 s")

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> str:
        """Stops the process; returns what it wrote on standard error."""
        if self.process is None or self.process.poll() is not None:
            return ""
        self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err

    def client(self) -> "WebClient":
        return WebClient(self.port, self.ca)


class Answer:
    """One HTTP answer: status, headers (lower-case names) and body."""

    def __init__(self, status: int, headers: dict, body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


class WebClient:
    """An HTTP(S) client of the dashboard that keeps the session cookie it is given."""

    def __init__(self, port: int, ca: str | None):
        self.port = port
        self.context = ssl.create_default_context(cafile=ca) if ca else None
        self.cookie: str | None = None

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None,
                host: str | None = None) -> Answer:
        """One request to localhost; `host`: the Host header to send instead of localhost's."""
        if self.context is not None:
            connection = http.client.HTTPSConnection("localhost", self.port, timeout=30, context=self.context)
        else:
            connection = http.client.HTTPConnection("localhost", self.port, timeout=30)
        sent = dict(headers or {})
        if host is not None:
            sent["Host"] = host
        if self.cookie:
            sent["Cookie"] = self.cookie
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            answer = Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()
        cookie = answer.headers.get("set-cookie")
        if cookie:
            pair = cookie.split(";")[0]
            self.cookie = None if "Max-Age=0" in cookie else pair
        return answer

    def get(self, path: str, **kw) -> Answer:
        return self.request("GET", path, **kw)

    def post(self, path: str, document: dict, **kw) -> Answer:
        headers = {"Content-Type": "application/json", **kw.pop("headers", {})}
        return self.request("POST", path, json.dumps(document).encode(), headers=headers, **kw)

    def login(self, user: str, password: str) -> Answer:
        return self.post("/api/v1/login", {"user": user, "password": password})

    def api(self, name: str, **query) -> Answer:
        suffix = f"?{urllib.parse.urlencode(query)}" if query else ""
        return self.get(f"/api/v1/{name}{suffix}")

