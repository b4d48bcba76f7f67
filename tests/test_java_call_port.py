"""A Java client's method calls and field reads and writes go through the Data Service's call port
(dataservice.proto: GetCallPort, CallFrame, CallReply), as a Python client's do, and answer as over
gRPC: values, a model's exception with its type and message, and a call slower than the silence
bound, kept alive by the server; over TLS too. With the call port off, the same client falls back to gRPC."""
import json
import socket
import subprocess
import textwrap

import pytest

from conftest import started_cluster
from harness.java_models import build_java_model

pytestmark = pytest.mark.timeout(600)

MODEL = textwrap.dedent("""
    package portj;

    import io.dataclay.api.DataClayObject;

    public class Tally extends DataClayObject {
      private long value;

      public long add(long n) {
        value += n;
        return value;
      }

      public long after(long millis) {
        try {
          Thread.sleep(millis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return value;
      }

      public long refuse(String why) {
        throw new IllegalStateException(why);
      }
    }
""")

CLIENT = textwrap.dedent("""
    import io.dataclay.api.DataClay;
    import java.io.BufferedReader;
    import java.io.InputStreamReader;
    import portj.Tally;

    /** Calls, reads and writes one Tally, prints what it saw, then waits for a line on stdin. */
    public final class PortClient {
      public static void main(String[] args) throws Exception {
        DataClay.init();
        try {
          Tally t = new Tally();
          t.makePersistent();
          long first = t.add(1);
          long second = t.add(2);
          Object read = t.$dc$get$value();
          t.$dc$set$value(40L);
          long third = t.add(1);
          String refused;
          try {
            t.refuse("no, says the model");
            refused = "nothing";
          } catch (RuntimeException e) {
            refused = e.getClass().getSimpleName() + ": " + e.getMessage();
          }
          long started = System.nanoTime();
          long slow = t.after(Long.parseLong(args[0]));
          double seconds = (System.nanoTime() - started) / 1e9;
          System.out.println("{\\"values\\": [" + first + ", " + second + ", " + read + ", " + third + ", " + slow
              + "], \\"refused\\": \\"" + refused.replace("\\"", "'") + "\\", \\"seconds\\": " + seconds + "}");
          System.out.flush();
          new BufferedReader(new InputStreamReader(System.in)).readLine();
        } finally {
          DataClay.finish();
        }
      }
    }
""")


@pytest.fixture(scope="module")
def port_build(tmp_path_factory):
    return build_java_model(tmp_path_factory, "port-tally", "portj.Tally", MODEL, "PortClient", CLIENT)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connections_of(pid: int, port: int) -> int:
    """TCP connections process `pid` has established to local port `port` (ss; the tests run as root)."""
    out = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{port} )"], capture_output=True,
                         text=True, check=True).stdout
    return sum(1 for line in out.splitlines() if f"pid={pid}," in line)


@pytest.mark.parametrize("call_port", ["served", "served over TLS", "off"])
def test_a_java_clients_calls_go_through_the_call_port_and_answer_as_over_grpc(port_build, call_port):
    classes, classpath = port_build
    # a waiting call hears from the server every 333 ms; the call port fixed, as behind a firewall
    port = free_port()
    env = {"DATACLAY_UNREACHABLE_MS": "1000", "DATACLAY_CALL_PORT": "off" if call_port == "off" else str(port)}
    # over TLS, a connection stays open only if the handshake (the cluster CA, the backend's host
    # name) succeeded: a client that fell back to gRPC would have none
    cluster = started_cluster(backends=1, tls=call_port.endswith("TLS"), extra_env=env)
    try:
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "portj", str(classes), "java")
        # run: a call of 3 s, three times the silence bound, among the others
        client = subprocess.Popen(["java", "-cp", classpath, "PortClient", "3000"], env={**cluster.env, **env},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = client.stdout.readline()
            assert line, client.stderr.read() if client.poll() is not None else "no output"
            seen = json.loads(line)
            through_port = connections_of(client.pid, port)
            client.stdin.write("done\n")
            client.stdin.flush()
            assert client.wait(timeout=60) == 0, client.stderr.read()
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    finally:
        cluster.stop()
    # check: the answers are those of gRPC calls, whichever way they went
    assert seen["values"] == [1, 3, 3, 41, 41]
    assert seen["refused"] == "IllegalStateException: no, says the model"
    assert seen["seconds"] >= 3.0
    assert through_port == (0 if call_port == "off" else 1)
