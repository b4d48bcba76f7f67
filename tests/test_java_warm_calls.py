"""A warm Java client's method calls go to the backend alone: the Java twin of
test_sessions_and_safety.py::test_warm_method_calls_make_no_logic_module_call (issue 25). The client
is a separate JVM compiled against the Java wordcount example (examples/java-wordcount)."""
import subprocess

from harness.java_models import compile_example_client
from test_java_cluster import CLASSES
from harness.warm_clients import logic_module_calls_while_it_runs

WARM_CLIENT = r"""
import io.dataclay.api.DataClay;
import io.dataclay.api.DataClayObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Map;
import wordcount.model.TextStats;

/** Warms up on one object, then on "go" makes 200 method calls, checking each read. */
public final class WarmClient {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    DataClay.init();
    try {
      new TextStats().makePersistent(args[0]);
      TextStats stats = DataClayObject.getByAlias(TextStats.class, args[0]);
      stats.mergeWordCounts(Map.of("w", 1));
      System.out.println("warm");
      System.out.flush();
      in.readLine();
      int wrong = 0;
      String last = "";
      for (int i = 0; i < 100; i++) {
        stats.mergeWordCounts(Map.of("w", 1));
        last = String.join(",", stats.topWords(1));
        if (!last.equals("w=" + (i + 2))) {
          wrong++;
        }
      }
      System.out.println("{\"calls\": 200, \"wrong\": " + wrong + ", \"last\": \"" + last + "\"}");
      System.out.flush();
      in.readLine();  // stay until killed: finishing would close the session while the test counts
    } finally {
      DataClay.finish();
    }
  }
}
"""


def test_warm_java_method_calls_make_no_logic_module_call(make_cluster, tmp_path_factory):
    # setup: a warm Java client (object located, session validated by the backend), alone on its cluster
    classpath = compile_example_client(tmp_path_factory, "WarmClient", WARM_CLIENT)
    cluster = make_cluster(backends=1)
    cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(CLASSES), "java")
    proc = subprocess.Popen(["java", "-cp", classpath, "WarmClient", "jwarm"], env=cluster.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        warm = proc.stdout.readline().strip()
        assert warm == "warm", f"{warm}\n{proc.stderr.read() if proc.poll() is not None else ''}"
        # run
        result, moved = logic_module_calls_while_it_runs(cluster, proc)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    # verify: every read right, and nothing moved at the LM but our own GetStats and the heartbeats
    assert result == {"calls": 200, "wrong": 0, "last": "w=101"}
    assert moved == {}
