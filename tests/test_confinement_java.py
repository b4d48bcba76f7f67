"""Issue 21 for Java models: by default they run in a confined Java environment process per account,
not in the Data Service's JVM. A tenant's Java model tries to read the cluster's files and pools,
reach the network and halt the JVM it runs in; each attempt is refused or stays in its own process,
and the Data Service and other accounts go on."""
import json
import os
import subprocess
import textwrap

import pytest

from conftest import started_cluster
from harness.java_models import build_java_model

AUTHOR, AUTHOR_PW = "ada", "ada-password-1234"
PLAIN, PLAIN_PW = "pat", "pat-password-1234"

SPY = textwrap.dedent("""
    package hostilej;

    import io.dataclay.api.DataClayObject;
    import java.net.InetSocketAddress;
    import java.net.Socket;
    import java.nio.file.Files;
    import java.nio.file.Path;
    import java.util.TreeSet;

    public class Spy extends DataClayObject {
      private String note = "";

      public Spy() {}

      public String read(String path) {
        try {
          return "done: " + Files.readAllBytes(Path.of(path)).length;
        } catch (Exception e) {
          return "refused: " + e.getClass().getSimpleName();
        }
      }

      public String connect(String host, int port) {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(host, port), 2000);
          return "done: connected";
        } catch (Exception e) {
          return "refused: " + e.getClass().getSimpleName();
        }
      }

      public String whoami() {
        return "pid=" + ProcessHandle.current().pid() + " env=" + new TreeSet<>(System.getenv().keySet())
            + " classes=" + (getClass().getClassLoader() == null ? "" : getClass().getClassLoader().getClass().getName());
      }

      public String halt() {
        Runtime.getRuntime().halt(7);
        return "still here";
      }

      public String ping() {
        note = note + ".";
        return "pong" + note.length();
      }
    }
""")

CLIENT = textwrap.dedent("""
    import hostilej.Spy;
    import io.dataclay.api.DataClay;
    import io.dataclay.api.DataClayObject;
    import io.dataclay.exceptions.DataClayException;

    public final class SpyClient {
      public static void main(String[] args) {
        DataClay.init();
        StringBuilder out = new StringBuilder("[");
        try {
          Spy spy;
          if (args[0].equals("new")) {
            spy = new Spy();
            spy.makePersistent();
            out.append('"').append(spy.getID()).append('"');
          } else {
            spy = (Spy) DataClay.getByID(java.util.UUID.fromString(args[0]));
            for (int i = 1; i < args.length; i++) {
              if (i > 1) out.append(", ");
              String[] call = args[i].split(" ", 3);
              String result;
              try {
                switch (call[0]) {
                  case "read": result = spy.read(call[1]); break;
                  case "connect": result = spy.connect(call[1], Integer.parseInt(call[2])); break;
                  case "whoami": result = spy.whoami(); break;
                  case "halt": result = spy.halt(); break;
                  default: result = spy.ping();
                }
              } catch (DataClayException e) {
                result = "error: " + e.getClass().getSimpleName();
              }
              out.append('"').append(result.replace("\\"", "'")).append('"');
            }
          }
        } finally {
          DataClay.finish();
        }
        System.out.println(out.append("]"));
      }
    }
""")


@pytest.fixture(scope="module")
def spy_build(tmp_path_factory):
    """The hostile model built and enhanced like the Java example, and the client compiled against it."""
    return build_java_model(tmp_path_factory, "hostile-spy", "hostilej.Spy", SPY, "SpyClient", CLIENT)


@pytest.fixture(scope="module")
def jcluster(spy_build):
    """One backend; the author registers and publishes the hostile Java model."""
    classes, _ = spy_build
    cluster = started_cluster(backends=1)
    try:
        for user, password in ((AUTHOR, AUTHOR_PW), (PLAIN, PLAIN_PW)):
            cluster.dataclaycmd("NewAccount", user, password)
        cluster.dataclaycmd("GrantModelRegistration", cluster.admin_user(), "-", AUTHOR)
        cluster.dataclaycmd("NewModel", AUTHOR, AUTHOR_PW, "hostilej", str(classes), "java")
        cluster.dataclaycmd("PublishModel", AUTHOR, AUTHOR_PW, "hostilej")
        yield cluster
    finally:
        cluster.stop()


def spy(cluster, classpath: str, *args: str) -> list:
    """Runs the client as the plain account; returns the JSON list it printed."""
    env = dict(cluster.env, DATACLAY_USER=PLAIN, DATACLAY_PASSWORD=PLAIN_PW)
    result = subprocess.run(["java", "-cp", classpath, "SpyClient", *args], env=env, capture_output=True,
                            text=True, timeout=180)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_java_model_runs_outside_the_data_service_and_cannot_read_its_files(jcluster, spy_build):
    # setup
    _, classpath = spy_build
    [oid] = spy(jcluster, classpath, "new")
    ds = jcluster.pids()["backend-1"]
    secrets = [str(p) for p in sorted(jcluster.home.rglob("*")) if p.is_file()]
    pools = [str(p) for p in sorted(jcluster.pools.rglob("*")) if p.is_file()]
    # run
    who, *reads = spy(jcluster, classpath, oid, "whoami", *(f"read {p}" for p in secrets + pools + [
        f"/proc/{ds}/environ", "/etc/shadow"]))
    [connected] = spy(jcluster, classpath, oid, f"connect 127.0.0.1 {jcluster.port}")
    # verify: another process than the Data Service's JVM, which sees none of the cluster's files
    assert f"pid={ds} " not in who and "PASSWORD" not in who and "TLS" not in who
    assert len(reads) > 5 and all(r.startswith("refused") for r in reads), list(zip(secrets + pools, reads))
    assert connected.startswith("refused")


def test_a_java_model_halting_its_jvm_stops_only_its_own_process(jcluster, spy_build):
    # setup
    _, classpath = spy_build
    [oid] = spy(jcluster, classpath, "new")
    ds = jcluster.pids()["backend-1"]
    # run
    [halted] = spy(jcluster, classpath, oid, "halt")
    after = spy(jcluster, classpath, oid, "ping", "ping")
    python = jcluster.run_client(textwrap.dedent("""
        from dataclay import api
        api.init()
        from people.model import Counter
        c = Counter(1); c.make_persistent(); print(c.get())
    """)).stdout.strip()
    # verify: the call failed, the Data Service lives on, the account's next calls run in a new process
    assert halted == "error: BackendUnavailableException"
    assert jcluster.pids()["backend-1"] == ds and os.path.exists(f"/proc/{ds}")
    assert after == ["pong1", "pong2"] and python.endswith("1")
