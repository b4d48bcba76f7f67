package io.dataclay.ds;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.Channels;
import io.dataclay.client.DataServiceClient;
import io.dataclay.ds.store.ObjectStores;
import io.dataclay.ds.store.StoreConfig;
import io.dataclay.ds.store.TestKeys;
import io.dataclay.proto.BackendInfo;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.testing.JavaProcesses;
import io.grpc.ManagedChannel;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The Data Service as a process: its exit codes, its start line, and a clean SIGTERM. */
@Timeout(90)
class DataServiceMainTest {
  @TempDir Path tmp;
  @RegisterExtension
  final JavaProcesses processes = new JavaProcesses();

  private Process launch(Map<String, String> env) throws Exception {
    ProcessBuilder pb = processes.builder(DataServiceMain.class).redirectErrorStream(true);
    pb.environment().clear();
    pb.environment().put("PATH", System.getenv("PATH"));
    pb.environment().put("PMEM_IS_PMEM_FORCE", "1");
    pb.environment().putAll(env);
    return processes.start(pb);
  }

  private static String output(Process p) throws Exception {
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the process did not exit");
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }

  private Map<String, String> base(String engine, Path storePath) throws java.io.IOException {
    return Map.of("DATACLAY_CLUSTER_SECRET_FILE", TestLogicModule.secretFile(tmp.resolve("secret")).toString(),
        "DATACLAY_BACKEND_NAME", "b1",
        "DATACLAY_HOME", tmp.resolve("home").toString(), "DATACLAY_STORE", engine,
        "DATACLAY_STORE_PATH", storePath.toString(), "DATACLAY_STORE_SIZE", "64M", "DATACLAY_PYTHON", "none");
  }

  @Test
  void a_pool_that_cannot_be_opened_exits_2_with_one_line_and_overwrites_nothing() throws Exception {
    // setup: the pool path is an ordinary file with content of its own
    Path notAPool = tmp.resolve("not-a-pool");
    byte[] content = "precious bytes".getBytes(StandardCharsets.UTF_8);
    Files.write(notAPool, content);
    // run
    Process p = launch(base("kv", notAPool));
    String out = output(p);
    // verify
    assertEquals(2, p.exitValue(), out);
    assertEquals(1, out.strip().lines().count(), out);
    assertTrue(out.startsWith("data service: cannot open the kv store at " + notAPool), out);
    assertArrayEquals(content, Files.readAllBytes(notAPool));
  }

  @Test
  void a_store_key_that_is_not_the_pools_or_none_exits_2_naming_the_cause_and_overwrites_nothing() throws Exception {
    // setup: a kv pool made with one key, holding an object
    Path pool = tmp.resolve("pool");
    Path key = TestKeys.newKeyFile();
    Path otherKey = TestKeys.newKeyFile();
    try {
      var made = new StoreConfig("kv", pool, 64L << 20).withKeyFile(key);
      try (var store = ObjectStores.open(made)) {
        store.put(io.dataclay.ds.store.TestObjects.object(UUID.randomUUID(), "a", "1"));
      }
      byte[] before = Files.readAllBytes(pool.resolve("kv.pool"));
      Map<String, String> wrongKey = new java.util.HashMap<>(base("kv", pool));
      wrongKey.put("DATACLAY_STORE_KEY_FILE", otherKey.toString());
      // run
      Process wrong = launch(wrongKey);
      String wrongOut = output(wrong);
      Process none = launch(base("kv", pool));
      String noneOut = output(none);
      // verify
      assertEquals(2, wrong.exitValue(), wrongOut);
      assertEquals(2, none.exitValue(), noneOut);
      assertTrue(wrongOut.startsWith("data service: cannot open the kv store at " + pool + ": the key in " + otherKey
          + " is not the key"), wrongOut);
      assertTrue(noneOut.contains("is encrypted and no key was given"), noneOut);
      assertArrayEquals(before, Files.readAllBytes(pool.resolve("kv.pool")));
    } finally {
      TestKeys.delete(key);
      TestKeys.delete(otherKey);
    }
  }

  @Test
  void bad_configuration_exits_2_naming_the_key() throws Exception {
    Map<String, String> env = new java.util.HashMap<>(base("memory", tmp.resolve("pool")));
    env.remove("DATACLAY_CLUSTER_SECRET_FILE");
    Process p = launch(env);
    String out = output(p);
    assertEquals(2, p.exitValue(), out);
    assertTrue(out.contains("DATACLAY_CLUSTER_SECRET_FILE"), out);
  }

  @Test
  void the_process_registers_prints_its_start_line_and_on_sigterm_stops_its_environments_and_removes_their_directory()
      throws Exception {
    // setup: a stand-in environment process that records its pid and command line, and sleeps
    Path pidFile = tmp.resolve("ee.pid");
    Path argsFile = tmp.resolve("ee.args");
    Path fakePython = tmp.resolve("fake-python");
    Files.writeString(fakePython, "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\necho $$ > "
        + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 600\n");
    Files.setPosixFilePermissions(fakePython, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    try (TestLogicModule lm = TestLogicModule.start(tmp.resolve("lm"), "admin", "admin-password");
        var anonymous = new io.dataclay.client.LogicModuleClient(lm.channel(), () -> null)) {
      String token = anonymous.newSession("admin", "admin-password", "").token();
      try (var admin = new io.dataclay.client.LogicModuleClient(lm.channel(), () -> token)) {
        admin.registerModel(TestObjects.shapesModel("class Point:\n    x: str\n"));
        Map<String, String> env = new java.util.HashMap<>(base("memory", tmp.resolve("pool")));
        env.put("DATACLAY_PORT", Integer.toString(lm.port()));
        env.put("DATACLAY_PYTHON", fakePython.toString());
        // run
        Process p = launch(env);
        BufferedReader lines = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        String startLine = null;
        while ((line = lines.readLine()) != null) {
          if (line.startsWith("data service b1 (")) {
            startLine = line;
            break;
          }
        }
        // verify: the announced port is the registered one
        assertTrue(startLine != null && startLine.contains("store memory at " + tmp.resolve("pool")), startLine);
        int port = Integer.parseInt(startLine.replaceAll(".* listening on port (\\d+),.*", "$1"));
        BackendInfo b = admin.getBackends().get(0);
        assertEquals(port, b.getPort());
        assertEquals("b1", b.getName());
        // a first call starts the administrator's environment process
        ManagedChannel channel = Channels.forAddress("127.0.0.1", port, TlsSettings.plaintext());
        try {
          DataServiceClient ds = new DataServiceClient(channel, () -> token);
          UUID id = UUID.randomUUID();
          ds.makePersistent(List.of(TestObjects.point(id, "0")), null);
          CompletableFuture.runAsync(() -> ds.callMethod(id.toString(), "m", new byte[0]));
          while (!Files.exists(pidFile)) {
            Thread.sleep(10);
          }
          long eePid = Long.parseLong(Files.readString(pidFile).trim());
          List<String> args = Files.readAllLines(argsFile);
          Path eeDir = Path.of(args.get(args.indexOf("--tmp") + 1)).getParent();
          boolean eeDirExisted = Files.isDirectory(eeDir);
          // SIGTERM ends the Data Service, its environment process and the environments' directory
          p.destroy();
          assertTrue(p.waitFor(20, TimeUnit.SECONDS), "SIGTERM did not stop the Data Service");
          assertEquals(143, p.exitValue());
          assertFalse(ProcessHandle.of(eePid).map(ProcessHandle::isAlive).orElse(false),
              "the environment outlived its DS");
          assertTrue(eeDirExisted);
          assertEquals(tmp.resolve("home").resolve("backends").resolve("b1").resolve("ee"), eeDir);
          assertFalse(Files.exists(eeDir), "the environments' directory outlived its Data Service");
        } finally {
          Channels.close(channel);
        }
      }
    }
  }
}
