"""The Python client's own gRPC metrics (gRFC A66's grpc.client.attempt.*), from gRPC's OpenTelemetry
plugin: counted on the channels pmclay opens once tracing is on, through the application's own
MeterProvider, and the program still exits. Each case runs in a process of its own, since the plugin
and the tracing decision are process-wide."""
import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("grpc_observability")

PROGRAM = textwrap.dedent("""
    import json
    import sys
    from concurrent import futures
    import grpc
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))   # the application's own
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    trace.set_tracer_provider(TracerProvider())         # and its spans go nowhere
    from dataclay._internal.rpc.channels import open_channel

    echo = grpc.method_handlers_generic_handler(
        "dataclay.v1.Echo", {"Say": grpc.unary_unary_rpc_method_handler(lambda request, context: request)})
    server = grpc.server(futures.ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers((echo,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    say = open_channel(f"127.0.0.1:{port}").unary_unary("/dataclay.v1.Echo/Say", _registered_method=True)
    for _ in range(3):
        say(b"hello")
    import time
    time.sleep(1.5)                         # the plugin hands its figures over every 0.5 s
    points = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    if point.attributes.get("grpc.method") == "dataclay.v1.Echo/Say":
                        points[metric.name] = getattr(point, "value", None) or getattr(point, "count", None)
    print(json.dumps(points, sort_keys=True))
    print("modules", "grpc_observability" in sys.modules)
    # no deregistration here: pmclay does it as the interpreter shuts down, or this would never exit
""")


def run(env_extra: dict) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", **env_extra}
    return subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=60)


def test_the_clients_calls_are_counted_under_a66_names_and_the_program_exits():
    done = run({})
    assert done.returncode == 0, done.stderr
    counted = json.loads(done.stdout.splitlines()[0])
    assert counted["grpc.client.attempt.started"] == 3
    assert counted["grpc.client.attempt.duration"] == 3
    assert "grpc.client.attempt.sent_total_compressed_message_size" in counted


def test_metrics_exporter_none_keeps_the_plugin_out():
    done = run({"OTEL_METRICS_EXPORTER": "none"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["{}", "modules False"]
