"""A local OTLP/HTTP trace receiver, as a collector would be: it takes the spans the servers and the
clients export (POST /v1/traces, protobuf, OpenTelemetry's own message types) and keeps them."""
from __future__ import annotations

import gzip
import http.server
import threading
import time
from dataclasses import dataclass, field

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (ExportMetricsServiceRequest,
                                                                         ExportMetricsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (ExportTraceServiceRequest,
                                                                     ExportTraceServiceResponse)


@dataclass(frozen=True)
class Span:
    """One received span, with the service.name of the process that sent it."""

    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    start: int
    end: int
    attributes: dict = field(default_factory=dict)
    links: tuple = ()
    status_code: int = 0


def _value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class OtlpReceiver:
    """Listens on 127.0.0.1:<port>; `endpoint` is what OTEL_EXPORTER_OTLP_ENDPOINT should say."""

    def __init__(self, keep: bool = True):
        self.spans: list[Span] = []
        self.metrics: list[tuple] = []   # (service, metric name, data point attributes) of every point received
        self.received = 0            # spans received, kept or not
        self._keep = keep            # False: only count them (a benchmark's thousands of traces)
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    receiver._take(ExportTraceServiceRequest.FromString(body))
                    answer = ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    receiver._take_metrics(ExportMetricsServiceRequest.FromString(body))
                    answer = ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "OtlpReceiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _take(self, request: ExportTraceServiceRequest) -> None:
        if not self._keep:
            count = sum(len(scope.spans) for r in request.resource_spans for scope in r.scope_spans)
            with self._lock:
                self.received += count
            return
        received = []
        for resource_spans in request.resource_spans:
            attributes = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            service = attributes.get("service.name", "")
            for scope in resource_spans.scope_spans:
                for s in scope.spans:
                    received.append(Span(
                        service, s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(), s.kind,
                        s.start_time_unix_nano, s.end_time_unix_nano, {a.key: _value(a.value) for a in s.attributes},
                        tuple((link.trace_id.hex(), link.span_id.hex()) for link in s.links), s.status.code))
        with self._lock:
            self.spans.extend(received)
            self.received += len(received)

    def _take_metrics(self, request: ExportMetricsServiceRequest) -> None:
        points = []
        for resource_metrics in request.resource_metrics:
            attributes = {a.key: _value(a.value) for a in resource_metrics.resource.attributes}
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    data = getattr(metric, metric.WhichOneof("data"))
                    for point in data.data_points:
                        points.append((attributes.get("service.name", ""), metric.name,
                                       {a.key: _value(a.value) for a in point.attributes}))
        with self._lock:
            self.metrics.extend(points)

    def wait_for(self, condition, timeout: float = 30.0) -> list[Span]:
        """Waits until `condition(spans)` is true; returns the spans (AssertionError with them if never)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                spans = list(self.spans)
            if condition(spans):
                return spans
            if time.monotonic() > deadline:
                names = sorted({(s.service, s.name) for s in spans})
                raise AssertionError(f"the spans awaited did not arrive within {timeout} s; got {names}")
            time.sleep(0.2)
