"""A Java client's calls in the same traces as the servers' spans, with OpenTelemetry's Java agent,
the usual way to trace a Java program: the agent instruments grpc-java, which the client library
uses unshaded, so each call is a client span and its context reaches the Data Service, which
continues the trace into the execution environment. The agent also counts the client's calls
(rpc.client.* metrics)."""
import subprocess
import textwrap

import pytest

from harness.java_models import compile_example_client, otel_java_agent
from harness.otlp import OtlpReceiver
from test_java_cluster import CLASSES

pytestmark = pytest.mark.timeout(600)

SERVER, CLIENT = 2, 3   # OTLP span kinds

COUNTER = textwrap.dedent("""
    import io.dataclay.api.DataClay;
    import wordcount.model.Text;

    public final class TracedClient {
      public static void main(String[] args) {
        DataClay.init();
        try {
          Text t = new Text("a b a");
          t.makePersistent();
          System.out.println(t.wordCount().get("a"));
        } finally {
          DataClay.finish();
        }
      }
    }
""")


@pytest.fixture(scope="module")
def traced_client(tmp_path_factory):
    return compile_example_client(tmp_path_factory, "TracedClient", COUNTER), otel_java_agent(tmp_path_factory)


def test_a_java_clients_call_is_the_root_of_the_trace_the_servers_continue(make_cluster, traced_client):
    classpath, agent = traced_client
    with OtlpReceiver() as receiver:
        cluster = make_cluster(backends=1, extra_env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                                                      "OTEL_BSP_SCHEDULE_DELAY": "100"})
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(CLASSES), "java")
        # run: the client with the agent, exporting to the same receiver
        env = {**cluster.env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "java-client",
               "OTEL_LOGS_EXPORTER": "none", "OTEL_SEMCONV_STABILITY_OPT_IN": "rpc"}
        done = subprocess.run(["java", f"-javaagent:{agent}", "-cp", classpath, "TracedClient"], env=env,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip().splitlines()[-1] == "2"

        def continued(spans):
            for call in spans:
                if call.service == "java-client" and call.kind == CLIENT and "CallMethod" in call.name:
                    trace = [s for s in spans if s.trace_id == call.trace_id]
                    if any(s.name.startswith("ee.") for s in trace):
                        return True
            return False

        spans = receiver.wait_for(continued)
    (call,) = [s for s in spans if s.service == "java-client" and s.kind == CLIENT and "CallMethod" in s.name]
    trace = [s for s in spans if s.trace_id == call.trace_id]
    (served,) = [s for s in trace if s.service == "pmclay-dataservice" and s.kind == SERVER]
    assert served.parent_id == call.span_id
    # the current RPC conventions at both ends (the agent opted in like the servers)
    for span in (call, served):
        assert span.attributes.get("rpc.system.name") == "grpc", span.attributes
        assert span.attributes.get("rpc.method") == "dataclay.v1.DataService/CallMethod", span.attributes
    assert any(s.name.startswith("ee.call") and s.service == "pmclay-dataservice" for s in trace)
    # the agent counted the client's calls too, and sent the figures as the JVM ended
    counted = {name for service, name, point in receiver.metrics
               if service == "java-client" and point.get("rpc.method") == "dataclay.v1.DataService/CallMethod"}
    assert "rpc.client.call.duration" in counted, counted


def test_a_traced_java_client_keeps_its_calls_on_grpc_when_the_servers_are_not_traced(make_cluster,
                                                                                       traced_client):
    # The servers serve their call port (they do not trace), but the client's calls must stay gRPC calls
    # its agent can trace: frames on the call port would be invisible to it.
    classpath, agent = traced_client
    cluster = make_cluster(backends=1)
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(CLASSES), "java")
    with OtlpReceiver() as receiver:
        env = {**cluster.env, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "java-client",
               "OTEL_LOGS_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_SEMCONV_STABILITY_OPT_IN": "rpc",
               "OTEL_BSP_SCHEDULE_DELAY": "100"}
        env.pop("OTEL_SDK_DISABLED", None)
        done = subprocess.run(["java", f"-javaagent:{agent}", "-cp", classpath, "TracedClient"], env=env,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip().splitlines()[-1] == "2"
        spans = receiver.wait_for(lambda spans: any(
            s.service == "java-client" and s.kind == CLIENT and "CallMethod" in s.name for s in spans))
    assert not [s for s in spans if s.service == "pmclay-dataservice"]  # the servers really do not trace
