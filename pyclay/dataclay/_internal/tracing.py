"""OpenTelemetry traces of the client's calls, off unless the standard OTEL_EXPORTER_OTLP_ENDPOINT
(or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, as for the servers (docs/tracing.md). The OTEL_*
keys are OpenTelemetry's, read by its SDK with its meanings; they are not DATACLAY_* settings.

On, every channel the client opens gets OpenTelemetry's gRPC client interceptor: each call is a
client span, and its context travels to the servers in the call's metadata (W3C traceparent), so
the Data Service's, the execution environment's and the Logic Module's spans join the same trace.
An application that set up OpenTelemetry itself (a global TracerProvider) gets pmclay's spans
through its own provider and exporter, and its spans around pmclay calls become their parents;
otherwise pmclay builds one from the OTEL_* variables (service name "pmclay-client" unless
OTEL_SERVICE_NAME says otherwise, sampler OTEL_TRACES_SAMPLER, protocol OTEL_EXPORTER_OTLP_PROTOCOL,
by default http/protobuf) and flushes it when the process exits. Off, nothing is imported and a
channel is opened exactly as before.

With the optional grpcio-observability package (`pip install pmclay[metrics]`), gRPC's own
OpenTelemetry plugin also counts the calls under gRFC A66's client names (grpc.client.attempt.started,
grpc.client.attempt.duration and the message sizes; it records no grpc.client.call.duration),
exported over OTLP to the same endpoint unless OTEL_METRICS_EXPORTER=none, through the
application's MeterProvider if it set one."""
from __future__ import annotations

import atexit
import importlib
import logging
import os
import threading

from dataclay.exceptions import InvalidArgumentError

_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_log = logging.getLogger(__name__)
_lock = threading.Lock()
_state: tuple | None = None      # (channel wrapper or None, aio interceptors), decided once per process


def wanted(env=None) -> bool:
    """Whether the environment asks for traces: an OTLP endpoint set, and the SDK not disabled."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(env.get(key, "").strip() for key in _ENDPOINTS)


def interceptors() -> tuple:
    """(a function that returns a channel traced, the interceptors for grpc.aio channels); (None, [])
    when tracing is off. The first call in a process decides."""
    global _state
    if _state is None:
        with _lock:
            if _state is None:
                _state = _set_up() if wanted() else (None, [])
    return _state


def _set_up() -> tuple:
    from opentelemetry import trace
    from opentelemetry.instrumentation.grpc import aio_client_interceptors, client_interceptor, grpcext

    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider):       # the application set up none: ours
        provider = _own_tracer_provider()
    _start_metrics()
    interceptor = client_interceptor(tracer_provider=provider)
    return (lambda channel: grpcext.intercept_channel(channel, interceptor)), \
        aio_client_interceptors(tracer_provider=provider)


def _protocol(signal: str) -> str:
    protocol = (os.environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip()
    if protocol not in ("http/protobuf", "grpc"):
        raise InvalidArgumentError(f"OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or grpc, not {protocol!r}")
    return protocol


def _exporter(signal: str, module: str):
    """The OTLP exporter module for `signal` (TRACES, METRICS) in its configured protocol."""
    if _protocol(signal) == "http/protobuf":
        return importlib.import_module(f"opentelemetry.exporter.otlp.proto.http.{module}")
    try:
        return importlib.import_module(f"opentelemetry.exporter.otlp.proto.grpc.{module}")
    except ImportError:
        raise _grpc_exporter_missing() from None


def _grpc_exporter_missing() -> InvalidArgumentError:
    return InvalidArgumentError("OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the package opentelemetry-exporter-otlp-proto-grpc "
                                "(pip install it), or use http/protobuf, which pmclay installs")


def _resource():
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    return Resource.create({} if named else {SERVICE_NAME: "pmclay-client"})


def _own_tracer_provider():
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    exporter = _exporter("TRACES", "trace_exporter").OTLPSpanExporter()
    provider = TracerProvider(resource=_resource())  # its sampler: OTEL_TRACES_SAMPLER (default parentbased_always_on)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    atexit.register(provider.shutdown)              # sends what is still queued
    return provider


def _start_metrics() -> None:
    """gRPC's OpenTelemetry plugin (A66's grpc.client.* metrics) for every channel opened from now on,
    if grpcio-observability is installed and OTEL_METRICS_EXPORTER is not none."""
    if os.environ.get("OTEL_METRICS_EXPORTER", "otlp").strip().lower() == "none":
        return
    try:
        import grpc_observability
    except ImportError:
        _log.debug("grpcio-observability is not installed: no grpc.client.* metrics (pip install pmclay[metrics])")
        return
    from opentelemetry import metrics

    provider = metrics.get_meter_provider()
    if type(provider).__name__ in ("_ProxyMeterProvider", "NoOpMeterProvider"):   # the application set up none
        provider = _own_meter_provider()
    plugin = grpc_observability.OpenTelemetryPlugin(meter_provider=provider)
    try:
        plugin.register_global()
    except RuntimeError:            # the application registered its own: its plugin counts pmclay's calls
        _log.debug("a gRPC OpenTelemetry plugin is already registered: pmclay's calls are counted by it")
        return
    # the plugin's export thread is not a daemon, and the interpreter joins such threads before it
    # runs atexit functions, so a process that does not deregister never exits (grpc/grpc#38500).
    # threading's own exit hook runs before that join (concurrent.futures uses it the same way); it
    # also runs before the provider's atexit shutdown, so the last figures are still exported
    getattr(threading, "_register_atexit", atexit.register)(plugin.deregister_global)


def _own_meter_provider():
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    exporter = _exporter("METRICS", "metric_exporter").OTLPMetricExporter()
    provider = MeterProvider(resource=_resource(), metric_readers=[PeriodicExportingMetricReader(exporter)])
    atexit.register(provider.shutdown)              # exports the last figures
    return provider
