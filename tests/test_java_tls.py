"""The Java client on a real TLS cluster (`dataclay start --tls`): make persistent, method calls,
get by alias from a second JVM, a replica on the other backend and a method whose object reads
one on another backend (Data Service to Data Service, with the backends' own certificates); and
the same refusals as the Python client, each naming its cause."""
import json
import pathlib
import shutil
import subprocess
import textwrap

import pytest
from cryptography.hazmat.primitives import serialization

from conftest import started_cluster
from dataclay._internal.cli.local.certificates import make_ca
from test_java_cluster import EXAMPLE
from test_tls import expired_logic_module

pytestmark = pytest.mark.timeout(900)
ROOT = pathlib.Path(__file__).resolve().parent.parent

CLIENT = textwrap.dedent("""
    import io.dataclay.api.DataClay;
    import io.dataclay.exceptions.DataClayException;
    import java.util.ArrayList;
    import java.util.Comparator;
    import java.util.List;
    import java.util.Map;
    import java.util.UUID;
    import wordcount.model.Text;
    import wordcount.model.TextStats;

    public final class JavaTlsClient {
      public static void main(String[] args) {
        String out;
        try {
          DataClay.init();
          try {
            out = run(args);
          } finally {
            DataClay.finish();
          }
        } catch (DataClayException e) {
          out = "{\\"error\\": \\"" + e.getClass().getSimpleName() + "\\", \\"message\\": \\"" + quote(e.getMessage())
              + "\\"}";
        }
        System.out.println(out);
      }

      static String run(String[] args) {
        List<UUID> backends = new ArrayList<>(DataClay.getBackends().keySet());
        backends.sort(Comparator.comparing(UUID::toString));
        switch (args[0]) {
          case "init":
            return "{\\"error\\": null}";
          case "persist": {
            Text t = new Text(args[2]);
            t.makePersistent(args[1], backends.get(0));
            return "{\\"id\\": \\"" + t.getID() + "\\", \\"a\\": " + t.wordCount().getOrDefault("a", 0) + "}";
          }
          case "replicate": {
            Text t = Text.getByAlias(args[1]);
            Map<String, Integer> counts = t.wordCount();
            t.newReplica(backends.get(1));
            TextStats here = new TextStats();
            here.makePersistent(backends.get(1));
            TextStats there = new TextStats();
            there.mergeWordCounts(Map.of("z", 9));
            there.makePersistent(backends.get(0));
            here.mergeWordCounts(counts);
            here.mergeStats(there);
            return "{\\"id\\": \\"" + t.getID() + "\\", \\"a\\": " + counts.getOrDefault("a", 0) + ", \\"locations\\": "
                + t.getAllLocations().size() + ", \\"top\\": \\"" + String.join(",", here.topWords(2)) + "\\"}";
          }
          default:
            throw new IllegalArgumentException("unknown command " + args[0]);
        }
      }

      static String quote(String s) {
        return s == null ? "" : s.replace("\\\\", "\\\\\\\\").replace("\\"", "'").replace("\\n", " ");
      }
    }
""")


@pytest.fixture(scope="module")
def classpath(tmp_path_factory) -> str:
    """The example model built in a directory of its own, and the client compiled against it; the
    work tree's javaclay classes come first, whatever version the local repository holds."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        pytest.fail("the Java integration tests need mvn and javac on PATH")
    out = tmp_path_factory.mktemp("java-tls")
    project = out / "model"
    shutil.copytree(EXAMPLE / "src", project / "src")
    shutil.copy(EXAMPLE / "pom.xml", project / "pom.xml")
    subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(project / "pom.xml"), "package"],
                   check=True, timeout=600)
    path = f"{ROOT / 'javaclay' / 'target' / 'classes'}:{project / 'target' / 'classes'}:{project / 'target' / 'lib'}/*"
    (out / "JavaTlsClient.java").write_text(CLIENT)
    subprocess.run(["javac", "-d", str(out), "-cp", path, str(out / "JavaTlsClient.java")], check=True, timeout=120)
    return f"{out}:{path}"


@pytest.fixture(scope="module")
def jtls_cluster(classpath):
    """A two-backend cluster started with --tls, the Java wordcount model registered."""
    cluster = started_cluster(tls=True)
    try:
        classes = classpath.split(":")[2]
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", classes, "java")
        yield cluster
    finally:
        cluster.stop()


def java(cluster, classpath: str, *args: str, **env: str) -> dict:
    """Runs the client in a fresh JVM with the cluster's environment plus `env`; returns its JSON line."""
    result = subprocess.run(["java", "-cp", classpath, "JavaTlsClient", *args], env={**cluster.env, **env},
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"java client failed:\n{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_java_clients_use_a_tls_cluster_end_to_end(jtls_cluster, classpath):
    # run
    made = java(jtls_cluster, classpath, "persist", "jtls-text", "a b a c a")
    seen = java(jtls_cluster, classpath, "replicate", "jtls-text")
    # verify
    assert made["a"] == 3
    assert seen == {"id": made["id"], "a": 3, "locations": 2, "top": "z=9,a=3"}


def test_java_client_refusals_name_their_cause(jtls_cluster, classpath, tmp_path):
    # setup: a client file without the CA, another CA, a missing CA file, an expired server certificate
    lines = (jtls_cluster.home / "client.properties").read_text().splitlines()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "client.properties").write_text("\n".join(l for l in lines if "TLS" not in l) + "\n")
    other, _ = make_ca("not the cluster's CA")
    (tmp_path / "other-ca.pem").write_bytes(other.public_bytes(serialization.Encoding.PEM))
    missing = tmp_path / "gone" / "ca.pem"
    # run
    plaintext = java(jtls_cluster, classpath, "init", DATACLAY_HOME=str(plain))
    unknown = java(jtls_cluster, classpath, "init", DATACLAY_TLS_CA=str(tmp_path / "other-ca.pem"))
    absent = java(jtls_cluster, classpath, "init", DATACLAY_TLS_CA=str(missing))
    with expired_logic_module(jtls_cluster, tmp_path / "expired") as port:
        expired = java(jtls_cluster, classpath, "init", DATACLAY_PORT=str(port))
    # verify
    assert plaintext["error"] == "BackendUnavailableException"
    assert f"127.0.0.1:{jtls_cluster.port} requires TLS" in plaintext["message"], plaintext
    assert unknown["error"] == "BackendUnavailableException"
    assert "unknown CA" in unknown["message"] and str(tmp_path / "other-ca.pem") in unknown["message"], unknown
    assert absent["error"] == "InvalidArgumentException"
    assert absent["message"].startswith(f"DATACLAY_TLS_CA={missing}: no such file"), absent
    assert expired["error"] == "BackendUnavailableException"
    assert "that expired on 2001-01-31T00:00:00Z: certificate expired" in expired["message"], expired
