"""The Java client against a real cluster: the core acceptance scenarios from separate JVMs, restart
durability, `dataclay status`, and a Java and a Python client sharing one alias space. The Java
model is examples/java-wordcount (built and enhanced by its Maven project, registered with
`dataclaycmd NewModel ... java`); the client program below is compiled against it with javac."""
import json
import os
import pathlib
import signal
import subprocess
import textwrap

import pytest

from dataclay._internal.rpc import LogicModuleClient
from harness.java_models import compile_example_client
from harness.waiting import wait_until

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "java-wordcount"
CLASSES = EXAMPLE / "target" / "classes"

CLIENT = textwrap.dedent("""
    import io.dataclay.api.DataClay;
    import io.dataclay.api.DataClayObject;
    import io.dataclay.exceptions.DataClayException;
    import java.util.ArrayList;
    import java.util.List;
    import java.util.Map;
    import java.util.UUID;
    import wordcount.model.Text;
    import wordcount.model.TextCollection;
    import wordcount.model.TextStats;

    public final class JavaClient {
      public static void main(String[] args) {
        DataClay.init();
        String out;
        try {
          out = run(args);
        } catch (DataClayException e) {
          out = "{\\"error\\": \\"" + e.getClass().getSimpleName() + "\\", \\"message\\": \\"" + quote(e.getMessage()) + "\\"}";
        } catch (RuntimeException e) {
          out = "{\\"error\\": \\"" + e.getClass().getName() + "\\", \\"message\\": \\"" + quote(e.getMessage()) + "\\"}";
        } finally {
          DataClay.finish();
        }
        System.out.println(out);
      }

      static String run(String[] args) {
        switch (args[0]) {
          case "persist": {
            Text t = new Text(args[2]);
            t.makePersistent(args[1]);
            return "{\\"id\\": \\"" + t.getID() + "\\", \\"location\\": \\"" + t.getLocation() + "\\"}";
          }
          case "count": {
            Text t = Text.getByAlias(args[1]);
            Map<String, Integer> counts = t.wordCount();
            return "{\\"id\\": \\"" + t.getID() + "\\", \\"a\\": " + counts.getOrDefault("a", 0) + "}";
          }
          case "fail": {
            TextStats s = new TextStats();
            s.makePersistent();
            s.topWords(-1);
            return "{}";
          }
          case "spread": {
            List<UUID> backends = new ArrayList<>(DataClay.getBackends().keySet());
            TextCollection c = new TextCollection();
            c.makePersistent(args[1], backends.get(0));
            for (int i = 0; i < backends.size(); i++) {
              Text t = new Text("one two three " + i);
              t.makePersistent(backends.get(i));
              c.addText(t);
            }
            return "{\\"backends\\": " + backends.size() + "}";
          }
          case "total": {
            TextCollection c = DataClayObject.getByAlias(TextCollection.class, args[1]);
            return "{\\"total\\": " + c.totalWords() + "}";
          }
          case "merge-across": {
            List<UUID> backends = new ArrayList<>(DataClay.getBackends().keySet());
            TextStats here = new TextStats();
            here.mergeWordCounts(Map.of("a", 1));
            here.makePersistent(backends.get(0));
            TextStats there = new TextStats();
            there.mergeWordCounts(Map.of("a", 2, "b", 5));
            there.makePersistent(backends.get(1));
            here.mergeStats(there);
            return "{\\"top\\": \\"" + String.join(",", here.topWords(2)) + "\\", \\"backends\\": "
                + (here.getLocation().equals(there.getLocation()) ? 1 : 2) + "}";
          }
          case "delete": {
            DataClayObject.deleteAlias(args[1]);
            return "{}";
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
def java_client(tmp_path_factory):
    """The example model built (enhanced) and the client program compiled; returns its class path."""
    return compile_example_client(tmp_path_factory, "JavaClient", CLIENT)


@pytest.fixture(scope="module")
def jcluster(java_client):
    """A two-backend kv cluster with the Java wordcount model registered."""
    from conftest import started_cluster
    cluster = started_cluster()
    try:
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(CLASSES), "java")
        yield cluster
    finally:
        cluster.stop()


def java(cluster, classpath: str, *args: str) -> dict:
    """Runs the Java client in a fresh JVM; returns the JSON line it printed."""
    result = subprocess.run(["java", "-cp", classpath, "JavaClient", *args], env=cluster.env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"java client failed:\n{result.stdout}\n{result.stderr}\n{cluster.logs()}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_java_object_made_persistent_with_alias_runs_its_method_from_a_second_jvm(jcluster, java_client):
    # setup
    made = java(jcluster, java_client, "persist", "jtext-1", "a b a c a")
    # run
    seen = java(jcluster, java_client, "count", "jtext-1")
    # verify
    assert seen == {"id": made["id"], "a": 3}
    assert made["location"] in jcluster.status()


def test_java_remote_exception_reaches_the_caller_with_its_type_and_message(jcluster, java_client):
    # run
    failed = java(jcluster, java_client, "fail")
    # verify
    assert failed["error"] == "java.lang.IllegalArgumentException"
    assert "-1" in failed["message"]


def test_java_duplicate_and_missing_aliases_fail_with_their_errors(jcluster, java_client):
    # setup
    java(jcluster, java_client, "persist", "jtext-dup", "x")
    # run
    duplicate = java(jcluster, java_client, "persist", "jtext-dup", "y")
    missing = java(jcluster, java_client, "count", "jtext-nobody")
    # verify
    assert duplicate["error"] == "AliasAlreadyExistsException"
    assert missing["error"] == "AliasDoesNotExistException"
    assert "jtext-nobody" in missing["message"]


def test_java_and_python_clients_share_one_alias_space(jcluster, java_client):
    # setup: a Python object and a Java object, each under its own alias
    jcluster.run_client(textwrap.dedent("""
        from dataclay import api
        api.init()
        from people.model import Person
        Person("ada", 36).make_persistent(alias="mixed-py")
    """))
    java(jcluster, java_client, "persist", "mixed-java", "a a")
    # run
    java_takes_python_alias = java(jcluster, java_client, "persist", "mixed-py", "z")
    java_reads_python_object = java(jcluster, java_client, "count", "mixed-py")
    python_sees_java_alias = jcluster.run_client(textwrap.dedent("""
        import json
        from dataclay import api
        from dataclay.exceptions import DataClayException
        api.init()
        from people.model import Person
        try:
            Person.get_by_alias("mixed-java")
            print(json.dumps({"error": None}))
        except DataClayException as e:
            print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    """))
    # verify
    assert java_takes_python_alias["error"] == "AliasAlreadyExistsException"
    assert java_reads_python_object["error"] == "InvalidArgumentException"
    assert "PYTHON" in java_reads_python_object["message"]
    seen = json.loads(python_sees_java_alias.stdout.strip().splitlines()[-1])
    assert seen["error"] == "InvalidArgumentError"
    assert "java" in seen["message"].lower()
    assert java(jcluster, java_client, "count", "mixed-java")["a"] == 2


def test_a_java_method_calls_objects_stored_on_other_backends_as_the_caller(jcluster, java_client):
    # setup: the collection on one backend, one text on each backend
    spread = java(jcluster, java_client, "spread", "jcollection")
    # run
    total = java(jcluster, java_client, "total", "jcollection")
    # verify
    assert spread["backends"] == 2
    assert total == {"total": 8}


def test_a_java_method_reads_a_field_of_an_object_on_another_backend(jcluster, java_client):
    # setup + run: TextStats.mergeStats(other) reads other.counts, other stored on the other backend
    merged = java(jcluster, java_client, "merge-across")
    # verify: the stored counts of the other object, not a proxy's empty map
    assert merged == {"top": "b=5,a=3", "backends": 2}


def test_get_stubs_writes_the_registered_class_files(jcluster, tmp_path):
    # run
    jcluster.dataclaycmd("GetStubs", jcluster.admin_user(), "-", "jwordcount", str(tmp_path))
    # verify
    for name in ("Text", "TextCollection", "TextStats"):
        relative = f"wordcount/model/{name}.class"
        assert (tmp_path / relative).read_bytes() == (CLASSES / relative).read_bytes()


def test_status_shows_the_java_and_python_environment_of_every_backend(jcluster):
    # run
    status = jcluster.status()
    # verify
    assert status.count("execution environment java up") == 2, status
    assert status.count("execution environment python up") == 2, status


def test_java_objects_survive_a_cluster_restart(jcluster, java_client):
    # setup
    made = java(jcluster, java_client, "persist", "jtext-durable", "a a a a")
    # run
    jcluster.stop_processes()
    jcluster.start()
    jcluster.dataclaycmd("WaitForBackends", "java", "2")
    seen = java(jcluster, java_client, "count", "jtext-durable")
    # verify
    assert seen == {"id": made["id"], "a": 4}


def test_java_call_on_a_halted_backend_raises_backend_unavailable_naming_it(jcluster, java_client):
    # setup: a Java object, and the Data Service holding it
    made = java(jcluster, java_client, "persist", "jtext-halted", "a b")
    lm = LogicModuleClient(f"127.0.0.1:{jcluster.port}")
    lm.token = lm.new_session(jcluster.admin_user(), jcluster.admin_password(), "").token
    name = next(b.name for b in lm.get_backends() if b.id == made["location"])
    pid = jcluster.pids()[name]
    # run: the call while that Data Service is stopped (SIGSTOP: it neither answers nor closes)
    os.kill(pid, signal.SIGSTOP)
    try:
        seen = java(jcluster, java_client, "count", "jtext-halted")
    finally:
        os.kill(pid, signal.SIGCONT)
    # verify: BackendUnavailable naming the backend, not "does not exist"; it serves again once resumed
    assert seen.get("error") == "BackendUnavailableException", seen
    assert made["location"] in seen["message"], seen
    wait_until(lambda: all(b.alive for b in lm.get_backends()), 30, "every backend alive again", interval=0.2)
    assert java(jcluster, java_client, "count", "jtext-halted")["a"] == 1
    lm.close()
