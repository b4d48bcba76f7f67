"""Replicas, versions and moves from the Java client, and COMPSs' Java storage interface
(storage.StorageItf), against a real three-backend cluster. The Java wordcount model
(examples/java-wordcount) is built in a private directory and registered; the client program
below runs each scenario in a fresh JVM and prints one JSON line. The test that kills a master
runs last and restarts it.

`python tests/test_java_replicas.py --bench [N]` measures newReplica and newVersion of a 1 MiB
object instead (benchmarks/java/README.md)."""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

from test_java_cluster import EXAMPLE, java

pytestmark = pytest.mark.xdist_group("java-replicas")

CLIENT = r"""
import io.dataclay.api.DataClay;
import io.dataclay.api.DataClayObject;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.runtime.ClientConfig;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import storage.CallbackEvent;
import storage.CallbackHandler;
import storage.StorageException;
import storage.StorageItf;
import wordcount.model.Text;
import wordcount.model.TextCollection;
import wordcount.model.TextStats;

public final class JavaClient {
  static final String TOP = "topWords(I)Ljava/util/ArrayList;";
  static final String MERGE = "mergeWordCounts(Ljava/util/Map;)V";

  public static void main(String[] args) throws Exception {
    String out;
    if (args[0].equals("fields")) {
      out = json(fields(args[1], args[2]));
    } else if (args[0].equals("compss")) {
      out = json(compss(args[1]));
    } else {
      DataClay.init();
      try {
        out = json(run(args));
      } catch (DataClayException e) {
        out = json(map("error", e.getClass().getSimpleName(), "message", e.getMessage()));
      } finally {
        DataClay.finish();
      }
    }
    System.out.println(out);
  }

  static Object run(String[] a) throws Exception {
    List<UUID> b = backends();
    switch (a[0]) {
      case "backends": {
        Map<String, Object> names = new LinkedHashMap<>();
        DataClay.getBackends().forEach((id, info) -> names.put(id.toString(), info.name()));
        return names;
      }
      case "replicate-all": {
        TextStats s = stats("a", 1);
        s.makePersistent(a[1], b.get(0));
        UUID any = s.newReplica();
        UUID rest = b.stream().filter(x -> !x.equals(b.get(0)) && !x.equals(any)).findFirst().orElseThrow();
        UUID named = s.newReplica(rest);
        UUID again = s.newReplica(rest, false);
        return map("id", s.getID(), "master", b.get(0), "any", any, "named", named, "again", again,
            "locations", s.getAllLocations(), "location", s.getLocation());
      }
      case "write": {
        TextStats s = DataClayObject.getByAlias(TextStats.class, a[1]);
        s.mergeWordCounts(counts(a[2], Integer.parseInt(a[3])));
        return map("top", s.topWords(10));
      }
      case "read": {
        TextStats s = DataClayObject.getByAlias(TextStats.class, a[1]);
        return map("top", s.topWords(10), "location", s.getLocation(), "locations", s.getAllLocations(),
            "write", attempt(() -> s.mergeWordCounts(counts("z", 1))));
      }
      case "graph": {
        TextCollection c = new TextCollection();
        Text t = new Text("one two three");
        c.addText(t);
        c.makePersistent(b.get(0));
        UUID to = c.newReplica(b.get(1), Boolean.parseBoolean(a[1]));
        return map("to", to, "collection", c.getAllLocations(), "text", t.getAllLocations(),
            "textId", t.getID(), "total", c.totalWords());
      }
      case "versions": {
        TextStats s = stats("a", 1);
        s.makePersistent(a[1]);
        TextStats v = s.newVersion();
        v.mergeWordCounts(counts("b", 5));
        Map<String, Object> first = map("sameClass", v.getClass() == TextStats.class,
            "ownId", !v.getID().equals(s.getID()), "original", s.topWords(5), "version", v.topWords(5),
            "notAVersion", attempt(s::consolidateVersion));
        v.consolidateVersion();
        first.put("consolidated", s.topWords(5));
        first.put("retired", attempt(() -> v.topWords(5)));
        UUID elsewhere = b.stream().filter(x -> !x.equals(s.getLocation())).findFirst().orElseThrow();
        TextStats v1 = s.newVersion(elsewhere);
        v1.mergeWordCounts(counts("c", 2));
        TextStats v2 = v1.newVersion();
        v2.mergeWordCounts(counts("d", 3));
        Map<String, Object> chain = map("elsewhere", elsewhere, "v1Location", v1.getLocation(), "v1", v1.topWords(5),
            "originalBefore", s.topWords(5));
        v2.consolidateVersion();
        chain.put("originalAfter", DataClayObject.getByAlias(TextStats.class, a[1]).topWords(5));
        chain.put("v1After", v1.topWords(5));
        return map("first", first, "chain", chain);
      }
      case "move": {
        TextCollection c = new TextCollection();
        c.makePersistent(a[1], b.get(0));
        Text t = new Text("one two three");
        t.makePersistent(b.get(0));
        c.addText(t);
        c.move(b.get(1));
        Map<String, Object> flat = map("collection", c.getLocation(), "text", t.getLocation(), "total", c.totalWords());
        c.move(b.get(2), true);
        Map<String, Object> deep = map("collection", c.getLocation(), "text", t.getLocation(), "total", c.totalWords());
        return map("flat", flat, "deep", deep, "unknown", attempt(() -> c.move(UUID.randomUUID())),
            "nullBackend", attempt(() -> c.move(null)), "backends", b);
      }
      case "locate": {
        TextCollection c = DataClayObject.getByAlias(TextCollection.class, a[1]);
        return map("collection", c.getLocation(), "text", c.getTexts().get(0).getLocation(), "total", c.totalWords());
      }
      case "bench":
        return bench(b, Integer.parseInt(a[1]));
      default:
        throw new IllegalArgumentException("unknown command " + a[0]);
    }
  }

  // What every backend answers to GetField(id, field), read with raw clients: a digest of the
  // field's bytes, or the error's type.
  static Map<String, Object> fields(String id, String field) throws Exception {
    ClientConfig c = ClientConfig.load(null, System.getenv());
    String[] token = new String[1];
    Map<String, Object> out = new LinkedHashMap<>();
    try (LogicModuleClient lm = new LogicModuleClient(c.host(), c.port(), c.tls(), () -> token[0])) {
      token[0] = lm.newSession(c.user(), c.password(), c.dataset()).token();
      for (io.dataclay.proto.BackendInfo info : lm.getBackends()) {
        try (DataServiceClient ds = new DataServiceClient(info.getHost(), info.getPort(), c.tls(), () -> token[0])) {
          byte[] value = ds.getField(id, field);
          out.put(info.getName(), HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(value)));
        } catch (DataClayException e) {
          out.put(info.getName(), e.getClass().getSimpleName());
        }
      }
      lm.closeSession();
    }
    return out;
  }

  // The calls a COMPSs runtime makes, in its order: init, getByID, newReplica, getLocations,
  // newVersion, executeTask (tasks on versions), newVersion of a version, consolidateVersion, finish.
  static Map<String, Object> compss(String conf) throws Exception {
    StorageItf.init(conf);
    Map<String, Object> out = new LinkedHashMap<>();
    try {
      List<UUID> b = backends();
      Map<UUID, String> names = new HashMap<>();
      DataClay.getBackends().forEach((id, info) -> names.put(id, info.name()));
      TextStats s = stats("a", 1);
      s.makePersistent(b.get(0));
      String id = s.getID().toString();
      out.put("byId", ((TextStats) StorageItf.getByID(id)).getID().toString().equals(id));
      StorageItf.newReplica(id, names.get(b.get(1)));
      out.put("locations", StorageItf.getLocations(id));
      out.put("copies", s.getAllLocations());
      String v1 = StorageItf.newVersion(id, false, "localhost");
      out.put("v1Location", DataClay.getByID(UUID.fromString(v1)).getLocation());
      out.put("mergeV1", task(v1, MERGE, counts("b", 2)));
      String v2 = StorageItf.newVersion(v1, false, names.get(b.get(2)));
      out.put("v2Location", DataClay.getByID(UUID.fromString(v2)).getLocation());
      out.put("mergeV2", task(v2, MERGE, counts("c", 3)));
      out.put("originalBefore", task(id, TOP, 10));
      StorageItf.consolidateVersion(v2);
      out.put("originalAfter", task(id, TOP, 10));
      out.put("failedTask", taskFailure(id, TOP, -1));
      out.put("retired", storageFailure(() -> StorageItf.getByID(v2)));
      out.put("unknownHost", storageFailure(() -> StorageItf.newReplica(id, "node-that-is-not-there")));
      out.put("ids", List.of(id, v1, v2));
    } finally {
      StorageItf.finish();
    }
    out.put("afterFinish", storageFailure(() -> StorageItf.getByID(UUID.randomUUID().toString())));
    return out;
  }

  static Object task(String id, String descriptor, Object... args) throws Exception {
    CallbackEvent e = event(id, descriptor, args);
    return StorageItf.getResult(e);
  }

  static String taskFailure(String id, String descriptor, Object... args) throws Exception {
    CallbackEvent e = event(id, descriptor, args);
    try {
      StorageItf.getResult(e);
      return e.getType() + ": no error";
    } catch (StorageException failure) {
      return e.getType() + ": " + failure.getCause().getClass().getName();
    }
  }

  static CallbackEvent event(String id, String descriptor, Object[] args) throws Exception {
    CompletableFuture<CallbackEvent> done = new CompletableFuture<>();
    String request = StorageItf.executeTask(id, descriptor, args, "localhost", new CallbackHandler() {
      @Override
      protected void eventListener(CallbackEvent e) {
        done.complete(e);
      }
    });
    CallbackEvent e = done.get(60, TimeUnit.SECONDS);
    if (!e.getRequestID().equals(request)) {
      throw new IllegalStateException("event of request " + e.getRequestID() + ", expected " + request);
    }
    return e;
  }

  interface StorageCall {
    void run() throws Exception;
  }

  static String storageFailure(StorageCall call) {
    try {
      call.run();
      return "ok";
    } catch (StorageException e) {
      return e.getCause() == null ? e.getMessage() : e.getCause().getClass().getSimpleName();
    } catch (Exception e) {
      return "unexpected " + e;
    }
  }

  // newReplica and newVersion of a 1 MiB object against makePersistent of the same object (the
  // baseline, measured in the same run): p50 and p99 in ms over n objects each.
  static Map<String, Object> bench(List<UUID> b, int n) {
    String content = "x".repeat(1 << 20);
    List<Double> persist = new ArrayList<>();
    List<Double> replica = new ArrayList<>();
    List<Double> localVersion = new ArrayList<>();
    List<Double> remoteVersion = new ArrayList<>();
    for (int i = 0; i < n + n / 4; i++) {
      Text t = new Text(content);
      long t0 = System.nanoTime();
      t.makePersistent(b.get(0));
      long t1 = System.nanoTime();
      t.newReplica(b.get(1), false);
      long t2 = System.nanoTime();
      t.newVersion();
      long t3 = System.nanoTime();
      t.newVersion(b.get(2));
      long t4 = System.nanoTime();
      if (i >= n / 4) {
        persist.add((t1 - t0) / 1e6);
        replica.add((t2 - t1) / 1e6);
        localVersion.add((t3 - t2) / 1e6);
        remoteVersion.add((t4 - t3) / 1e6);
      }
    }
    return map("n", n, "makePersistent", stats(persist), "newReplica", stats(replica),
        "newVersionHere", stats(localVersion), "newVersionElsewhere", stats(remoteVersion));
  }

  static Map<String, Object> stats(List<Double> ms) {
    double[] sorted = ms.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int p99 = Math.min(sorted.length - 1, (int) (sorted.length * 0.99));
    return map("p50", sorted[sorted.length / 2], "p99", sorted[p99]);
  }

  static TextStats stats(String word, int n) {
    TextStats s = new TextStats();
    s.mergeWordCounts(counts(word, n));
    return s;
  }

  static HashMap<String, Integer> counts(String word, int n) {
    HashMap<String, Integer> m = new HashMap<>();
    m.put(word, n);
    return m;
  }

  static List<UUID> backends() {
    List<UUID> ids = new ArrayList<>(DataClay.getBackends().keySet());
    ids.sort((x, y) -> DataClay.getBackends().get(x).name().compareTo(DataClay.getBackends().get(y).name()));
    return ids;
  }

  static String attempt(Runnable r) {
    try {
      r.run();
      return "ok";
    } catch (DataClayException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  static String json(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof Map<?, ?> m) {
      StringJoiner j = new StringJoiner(", ", "{", "}");
      m.forEach((k, x) -> j.add(json(String.valueOf(k)) + ": " + json(x)));
      return j.toString();
    }
    if (v instanceof Collection<?> c) {
      StringJoiner j = new StringJoiner(", ", "[", "]");
      c.forEach(x -> j.add(json(x)));
      return j.toString();
    }
    if (v instanceof Number || v instanceof Boolean) {
      return v.toString();
    }
    StringBuilder s = new StringBuilder("\"");
    for (char ch : v.toString().toCharArray()) {
      if (ch == '"' || ch == '\\') {
        s.append('\\').append(ch);
      } else if (ch < 0x20) {
        s.append(String.format("\\u%04x", (int) ch));
      } else {
        s.append(ch);
      }
    }
    return s.append('"').toString();
  }
}
"""


def build_client(out: pathlib.Path) -> tuple[str, pathlib.Path]:
    """Builds the example model in `out` (not in the shared example directory) and compiles the
    client program against it; returns the class path and the model's class directory."""
    if shutil.which("mvn") is None or shutil.which("javac") is None:
        pytest.fail("the Java integration tests need mvn and javac on PATH")
    project = out / "model"
    shutil.copytree(EXAMPLE / "src", project / "src")
    shutil.copy(EXAMPLE / "pom.xml", project / "pom.xml")
    subprocess.run(["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(project / "pom.xml"), "package"],
                   check=True, timeout=600)
    classes = project / "target" / "classes"
    classpath = f"{classes}:{project / 'target' / 'lib'}/*"
    (out / "JavaClient.java").write_text(CLIENT)
    subprocess.run(["javac", "-d", str(out), "-cp", classpath, str(out / "JavaClient.java")], check=True,
                   timeout=120)
    return f"{out}:{classpath}", classes


def start_cluster(classes: pathlib.Path):
    """A three-backend kv cluster with the Java wordcount model (`classes`) registered."""
    from conftest import started_cluster
    cluster = started_cluster(backends=3)
    try:
        cluster.dataclaycmd("NewModel", cluster.admin_user(), "-", "jwordcount", str(classes), "java")
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[str, pathlib.Path]:
    """The client program's class path and the model's class directory."""
    return build_client(tmp_path_factory.mktemp("java-replicas"))


@pytest.fixture(scope="module")
def client(built) -> str:
    """The class path to run the client program with."""
    return built[0]


@pytest.fixture(scope="module")
def rcluster(built):
    """The module's cluster; the last test kills and restarts one of its backends."""
    cluster = start_cluster(built[1])
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def names(rcluster, client) -> dict:
    """Backend ID -> name (backend-1 ... backend-3)."""
    return java(rcluster, client, "backends")


def test_java_replicas_reach_every_backend_and_a_write_reaches_every_copy(rcluster, client, names):
    # setup: master on backend-1, one replica where the Data Service chooses, one named
    made = java(rcluster, client, "replicate-all", "jrep-stats")
    before = java(rcluster, client, "fields", made["id"], "counts")
    # run
    written = java(rcluster, client, "write", "jrep-stats", "b", "7")
    after = java(rcluster, client, "fields", made["id"], "counts")
    # verify
    others = set(names) - {made["master"]}
    assert names[made["master"]] == "backend-1"
    assert {made["any"], made["named"]} == others and made["again"] == made["named"]
    assert made["locations"][0] == made["master"] and set(made["locations"]) == set(names)
    assert made["location"] in set(names)
    assert set(before) == set(after) == {"backend-1", "backend-2", "backend-3"}
    assert len(set(before.values())) == 1 and len(set(after.values())) == 1, (before, after)
    assert set(before.values()) != set(after.values())
    assert written["top"] == ["b=7", "a=1"]


def test_java_replica_without_recursion_leaves_referenced_objects_where_they_are(rcluster, client, names):
    # run
    flat = java(rcluster, client, "graph", "false")
    deep = java(rcluster, client, "graph", "true")
    # verify
    for result in (flat, deep):
        assert names[result["to"]] == "backend-2"
        assert [names[b] for b in result["collection"]] == ["backend-1", "backend-2"]
        assert result["total"] == 3
    assert [names[b] for b in flat["text"]] == ["backend-1"]
    assert [names[b] for b in deep["text"]] == ["backend-1", "backend-2"]
    held = java(rcluster, client, "fields", deep["textId"], "content")
    assert held["backend-1"] == held["backend-2"] and held["backend-3"] == "ObjectNotHereException"


def test_java_version_leaves_the_original_unchanged_until_consolidated(rcluster, client, names):
    # run
    result = java(rcluster, client, "versions", "jver-stats")
    # verify: a version, changed, then consolidated
    first = result["first"]
    assert first["sameClass"] and first["ownId"]
    assert first["original"] == ["a=1"]
    assert first["version"] == ["b=5", "a=1"]
    assert first["notAVersion"].startswith("NotAVersionException")
    assert first["consolidated"] == ["b=5", "a=1"]
    assert first["retired"].startswith("ObjectDoesNotExistException"), first["retired"]
    # verify: a version of a version, on another backend, consolidates into the original
    chain = result["chain"]
    assert chain["v1Location"] == chain["elsewhere"]
    assert chain["v1"] == ["b=5", "c=2", "a=1"]
    assert chain["originalBefore"] == ["b=5", "a=1"]
    assert chain["originalAfter"] == ["b=5", "d=3", "c=2", "a=1"]
    assert chain["v1After"] == ["b=5", "c=2", "a=1"]


def test_java_move_keeps_aliases_and_references(rcluster, client, names):
    # run
    moved = java(rcluster, client, "move", "jmove-collection")
    seen = java(rcluster, client, "locate", "jmove-collection")
    # verify
    b1, b2, b3 = moved["backends"]
    assert moved["flat"] == {"collection": b2, "text": b1, "total": 3}
    assert moved["deep"] == {"collection": b3, "text": b3, "total": 3}
    assert seen == {"collection": b3, "text": b3, "total": 3}
    assert moved["unknown"].startswith("BackendDoesNotExistException"), moved["unknown"]
    assert moved["nullBackend"].startswith("InvalidArgumentException"), moved["nullBackend"]


def test_storageitf_runs_compss_calls_in_compss_order(rcluster, client, names):
    # run
    result = java(rcluster, client, "compss", str(rcluster.home / "client.properties"))
    # verify
    by_name = {n: i for i, n in names.items()}
    assert result["byId"] is True
    assert result["locations"] == ["127.0.0.1"]
    assert result["copies"] == [by_name["backend-1"], by_name["backend-2"]]
    assert result["v1Location"] in (by_name["backend-1"], by_name["backend-2"])
    assert result["v2Location"] == by_name["backend-3"]
    assert result["mergeV1"] is None and result["mergeV2"] is None
    assert result["originalBefore"] == ["a=1"]
    assert result["originalAfter"] == ["c=3", "b=2", "a=1"]
    assert result["failedTask"] == "FAIL: java.lang.IllegalArgumentException"
    assert result["retired"] == "ObjectDoesNotExistException"
    assert "names no dataClay backend" in result["unknownHost"]
    assert len(set(result["ids"])) == 3
    assert "not initialised" in result["afterFinish"]


def test_java_reads_fail_over_to_a_replica_when_the_master_is_killed(rcluster, client, names):
    # setup: master on backend-1 with replicas on the others, one acknowledged write
    made = java(rcluster, client, "replicate-all", "jfail-stats")
    java(rcluster, client, "write", "jfail-stats", "b", "2")
    # run
    rcluster.kill("backend-1")
    try:
        failed_over = java(rcluster, client, "read", "jfail-stats")
    finally:
        rcluster.start()
    rcluster.dataclaycmd("WaitForBackends", "java", "3")
    restarted = java(rcluster, client, "read", "jfail-stats")
    # verify: reads served by a replica; writes refused there; nothing acknowledged lost
    assert failed_over["top"] == ["b=2", "a=1"]
    assert failed_over["location"] in set(names) - {made["master"]}
    assert failed_over["write"].startswith("BackendUnavailableException"), failed_over["write"]
    assert restarted["top"] == ["b=2", "a=1"]
    assert restarted["location"] in set(names) and restarted["write"] == "ok"


def _bench(n: int) -> None:
    """Builds, starts a fresh cluster, runs the client's bench scenario and prints its figures."""
    out = pathlib.Path(tempfile.mkdtemp(prefix="java-replicas-bench-"))
    try:
        classpath, classes = build_client(out)
        cluster = start_cluster(classes)
        try:
            done = subprocess.run(["java", "-cp", classpath, "JavaClient", "bench", str(n)], env=cluster.env,
                                  capture_output=True, text=True, timeout=60 * n, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(out, ignore_errors=True)
    base = result["makePersistent"]["p50"]
    print(f"1 MiB object, n={n} each, engine kv, 3 backends")
    for key in ("makePersistent", "newReplica", "newVersionHere", "newVersionElsewhere"):
        s = result[key]
        print(f"{key:22s} p50 {s['p50']:8.2f} ms  p99 {s['p99']:8.2f} ms  ratio p50 / makePersistent p50 "
              f"{s['p50'] / base:.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "--bench":
        sys.exit("usage: python tests/test_java_replicas.py --bench [N]")
    _bench(int(sys.argv[2]) if len(sys.argv) > 2 else 20)
