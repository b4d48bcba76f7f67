package io.dataclay.logic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.PrivatePaths;
import io.dataclay.proto.BackendInfo;
import io.dataclay.proto.Language;
import io.dataclay.proto.ObjectInfo;
import io.dataclay.rpc.TlsSettings;
import io.dataclay.server.testing.Eventually;
import io.dataclay.server.testing.JavaProcesses;
import io.dataclay.testing.LogicModuleFixture;
import io.dataclay.testing.SecretFiles;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The Logic Module as a process: environment in, one line out, durable across kill -9, clear failures. */
@Timeout(120)
class LogicModuleMainTest {
  private static final Pattern LISTENING = Pattern.compile("logic module listening on port (\\d+)");

  @TempDir
  Path dir;
  @RegisterExtension
  final JavaProcesses processes = new JavaProcesses();

  private Process launch(Map<String, String> env, Path stderr) throws IOException {
    ProcessBuilder pb = processes.builder(LogicModuleMain.class);
    pb.environment().keySet().removeIf(k -> k.startsWith("DATACLAY_"));
    pb.environment().putAll(env);
    pb.redirectErrorStream(true).redirectOutput(stderr.toFile());
    return processes.start(pb);
  }

  private Map<String, String> env(Path home, int port) {
    Map<String, String> env = new HashMap<>();
    env.put("DATACLAY_HOME", home.toString());
    env.put("DATACLAY_PORT", Integer.toString(port));
    env.put("DATACLAY_USER", "admin");
    env.put("DATACLAY_PASSWORD", "main-test-password");
    env.put("DATACLAY_CLUSTER_SECRET_FILE", SecretFiles.write(home.resolveSibling(home.getFileName() + "-secret"))
        .toString());
    return env;
  }

  private static int awaitPort(Process p, Path stderr) throws Exception {
    return Eventually.await(Duration.ofSeconds(60), () -> {
      Matcher m = LISTENING.matcher(Files.readString(stderr, StandardCharsets.UTF_8));
      if (m.find()) {
        return Optional.of(Integer.parseInt(m.group(1)));
      }
      if (!p.isAlive()) {
        throw new AssertionError("the logic module exited with " + p.exitValue() + ":\n" + Files.readString(stderr));
      }
      return Optional.empty();
    }, () -> "the logic module to report its port:\n" + readQuietly(stderr));
  }

  private static String readQuietly(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  @Test
  void metadata_written_before_kill_9_is_served_after_a_restart_and_sigterm_stops_it() throws Exception {
    // setup
    Path home = dir.resolve("home");
    Path log1 = dir.resolve("lm1.log");
    Map<String, String> noPassword = env(home, 0);
    noPassword.remove("DATACLAY_PASSWORD");
    Process first = launch(noPassword, log1);
    try (var stdin = first.getOutputStream()) {
      stdin.write("main-test-password\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)); // as `dataclay start` does
    }
    int port = awaitPort(first, log1);
    String token;
    String backendToken;
    String backendId = UUID.randomUUID().toString();
    String objectId = UUID.randomUUID().toString();
    try (LogicModuleClient anonymous = new LogicModuleClient("127.0.0.1", port, TlsSettings.plaintext(), () -> null)) {
      token = anonymous.newSession("admin", "main-test-password", "").token();
      long now = System.currentTimeMillis();
      backendToken = anonymous.newBackendSession(backendId, now, "nonce-1",
          LogicModuleFixture.SECRET.proof(backendId, now, "nonce-1")).getToken();
    }
    try (LogicModuleClient backend = new LogicModuleClient("127.0.0.1", port, TlsSettings.plaintext(),
        () -> backendToken)) {
      backend.registerBackend(BackendInfo.newBuilder().setId(backendId).setName("b1").setHost("127.0.0.1")
          .setPort(7001).addLanguages(Language.PYTHON).setStoreEngine("kv").build());
      backend.registerObjects(List.of(ObjectInfo.newBuilder().setId(objectId).setClassName("app.Person")
          .setLanguage(Language.PYTHON).setDataset("admin").setMasterBackendId(backendId).build()), "kept", objectId);
    }
    // run: kill -9, then start again on the same home
    first.destroyForcibly();
    assertTrue(first.waitFor(10, TimeUnit.SECONDS));
    Path log2 = dir.resolve("lm2.log");
    Process second = launch(env(home, 0), log2);
    int port2 = awaitPort(second, log2);
    // verify: the old session, the backend, the object and its alias are all there
    try (LogicModuleClient admin = new LogicModuleClient("127.0.0.1", port2, TlsSettings.plaintext(), () -> token)) {
      assertEquals(objectId, admin.getObjectByAlias("kept", "").id().toString());
      assertEquals(backendId, admin.getBackends().get(0).getId());
    }
    try (LogicModuleClient backend = new LogicModuleClient("127.0.0.1", port2, TlsSettings.plaintext(), () -> backendToken)) {
      assertEquals("admin", backend.validateSession(token).getUsername()); // backend sessions survive too
    }
    assertTrue(Files.exists(home.resolve("lm").resolve("metadata.db")));
    second.destroy();
    assertTrue(second.waitFor(15, TimeUnit.SECONDS), "SIGTERM did not stop the logic module");
    assertEquals(143, second.exitValue());
  }

  @Test
  void a_taken_port_exits_non_zero_with_a_clear_message() throws Exception {
    // setup
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(0));
      Path log = dir.resolve("lm.log");
      // run
      Process p = launch(env(dir.resolve("home"), taken.getLocalPort()), log);
      // verify
      assertTrue(p.waitFor(60, TimeUnit.SECONDS));
      assertEquals(4, p.exitValue());
      String out = Files.readString(log);
      assertTrue(out.contains("cannot listen on port " + taken.getLocalPort()), out);
    }
  }

  @Test
  void an_unopenable_database_exits_non_zero_with_a_clear_message() throws Exception {
    // setup: lm/ in the home is a regular file, so the database's directory cannot be created
    Path home = Files.createDirectory(dir.resolve("home-with-a-file"), PrivatePaths.DIRECTORY);
    Files.writeString(home.resolve("lm"), "x");
    Path log = dir.resolve("lm.log");
    // run
    Process p = launch(env(home, 0), log);
    // verify
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(3, p.exitValue());
    String out = Files.readString(log);
    assertTrue(out.contains("cannot open the metadata database"), out);
  }
}
