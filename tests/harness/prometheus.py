"""A real Prometheus server for tests: Debian's binary (unpacked into .deps/ by
scripts/install-deps.sh), its own configuration, data directory and free port, scraping the
targets it is given every 2 seconds. `query(promql)` asks its HTTP API."""
from __future__ import annotations

import json
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = REPO / ".deps" / "prometheus" / "usr" / "bin" / "prometheus"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    """Starts on `start()` with `jobs` (Prometheus scrape_config entries, as dicts), removes
    everything on `stop()`."""

    def __init__(self, jobs: list[dict]):
        if not BINARY.exists():
            raise RuntimeError(f"{BINARY} is missing: run `make deps` (scripts/install-deps.sh)")
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="dataclay-prometheus-"))
        self.port = _free_port()
        self.jobs = jobs
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> "PrometheusServer":
        config = {"global": {"scrape_interval": "2s", "scrape_timeout": "2s", "evaluation_interval": "2s"},
                  "scrape_configs": self.jobs}
        (self.root / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
        self.log = open(self.root / "prometheus.log", "w")
        self.process = subprocess.Popen(
            [str(BINARY), f"--config.file={self.root / 'prometheus.yml'}", f"--storage.tsdb.path={self.root / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1h"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Prometheus did not start:\n{self.logs()}")
            time.sleep(0.2)

    def query(self, promql: str) -> list[dict]:
        """The result vector of an instant query; AssertionError with Prometheus' message when it fails."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.loads(r.read())
        except urllib.error.HTTPError as e:
            body = json.loads(e.read())
        assert body["status"] == "success", f"{promql}: {body.get('errorType')}: {body.get('error')}"
        return body["data"]["result"]

    def targets(self) -> list[dict]:
        """The active targets, with their health and last error."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v1/targets", timeout=10) as r:
            return json.loads(r.read())["data"]["activeTargets"]

    def logs(self) -> str:
        path = self.root / "prometheus.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "log", None):
            self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)
