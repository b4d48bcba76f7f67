package io.dataclay.ds.ee.java;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dataclay.client.Channels;
import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.ds.DataServiceMain;
import io.dataclay.ds.RealPython;
import io.dataclay.ds.TestLogicModule;
import io.dataclay.ds.ee.java.models.Counter;
import io.dataclay.proto.EnvironmentProcess;
import io.dataclay.proto.ExecutionEnvironmentStatus;
import io.dataclay.proto.Language;
import io.dataclay.proto.ObjectData;
import io.dataclay.rpc.TlsSettings;
import io.grpc.ManagedChannel;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Java model methods in a real confined Java execution environment: a Data Service process with
 * the default DATACLAY_JAVA_EE (confined), whose class path its Java environments run on (skipped
 * when no interpreter with pyclay, which runs the sandbox launcher, is built).
 */
@Timeout(120)
class ConfinedJavaEnvironmentTest {
  @TempDir Path tmp;
  private Process dataService;
  private final JavaModels models = new JavaModels(Set.of(Counter.class));

  @AfterEach
  void stop() throws Exception {
    if (dataService != null) {
      dataService.destroy();
      if (!dataService.waitFor(20, TimeUnit.SECONDS)) {
        dataService.destroyForcibly();
      }
    }
  }

  /** Starts a Data Service process on {@code lm}; returns its port once it announced it. */
  private int startDataService(TestLogicModule lm, Path python) throws Exception {
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", classpath, DataServiceMain.class.getName()).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.clear();
    env.put("PATH", System.getenv("PATH"));
    env.put("DATACLAY_CLUSTER_SECRET_FILE", TestLogicModule.secretFile(tmp.resolve("secret")).toString());
    env.put("DATACLAY_PORT", Integer.toString(lm.port()));
    env.put("DATACLAY_BACKEND_NAME", "b1");
    env.put("DATACLAY_HOME", tmp.resolve("home").toString());
    env.put("DATACLAY_STORE", "memory");
    env.put("DATACLAY_STORE_PATH", tmp.resolve("pool").toString());
    env.put("DATACLAY_STORE_SIZE", "64M");
    env.put("DATACLAY_PYTHON", python.toString());
    env.put("DATACLAY_EE_CONFINEMENT", "auto");
    env.put("DATACLAY_EE_WAIT_MS", "60000");
    dataService = pb.start();
    BufferedReader lines = new BufferedReader(new InputStreamReader(dataService.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = lines.readLine()) != null) {
      System.err.println("[data service] " + line);
      if (line.startsWith("data service b1 (")) {
        int port = Integer.parseInt(line.replaceAll(".* listening on port (\\d+),.*", "$1"));
        Thread echo = new Thread(() -> lines.lines().forEach(l -> System.err.println("[data service] " + l)));
        echo.setDaemon(true);
        echo.start();
        return port;
      }
    }
    throw new AssertionError("the Data Service exited with " + dataService.waitFor() + " before it listened");
  }

  @Test
  void a_java_method_runs_in_a_confined_java_process_of_its_caller_and_its_change_is_stored() throws Exception {
    // setup
    Optional<Path> python = RealPython.find();
    assumeTrue(python.isPresent(), RealPython.missing());
    try (TestLogicModule lm = TestLogicModule.start(tmp.resolve("lm"), "admin", "admin-password");
        LogicModuleClient anonymous = new LogicModuleClient(lm.channel(), () -> null)) {
      String adminToken = anonymous.newSession("admin", "admin-password", "").token();
      String annToken;
      try (LogicModuleClient admin = new LogicModuleClient(lm.channel(), () -> adminToken)) {
        admin.registerModel(JavaModels.model("counters", Counter.class));
        admin.newAccount("ann", "ann-password", false);
        annToken = anonymous.newSession("ann", "ann-password", "").token();
      }
      int port = startDataService(lm, python.get());
      ManagedChannel channel = Channels.forAddress("127.0.0.1", port, TlsSettings.plaintext());
      try {
        DataServiceClient ann = new DataServiceClient(channel, () -> annToken);
        ObjectData data = models.objectData(new Counter("c", 5));
        ann.makePersistent(List.of(data), null);
        // run
        Object sum = models.decode(ann.callMethod(data.getId(), "add(I)I", models.args(3)));
        Object label = models.decode(ann.getField(data.getId(), "label"));
        // verify: the value, the stored state, and the process that ran it
        assertEquals(8, sum);
        assertEquals("c", label);
        ObjectData stored = ann.getObjects(List.of(data.getId())).get(0);
        Object value = stored.getFieldsList().stream().filter(f -> f.getName().equals("value"))
            .map(f -> models.decode(f.getValue().toByteArray())).findFirst().orElseThrow();
        assertEquals(8, value);
        ExecutionEnvironmentStatus java = new DataServiceClient(channel, () -> adminToken).getStatus(5000)
            .getEnvironmentsList().stream().filter(e -> e.getLanguage() == Language.JAVA).findFirst().orElseThrow();
        assertEquals("auto", java.getConfinement());
        EnvironmentProcess process = java.getProcessesList().stream().filter(p -> p.getAccount().equals("ann"))
            .findFirst().orElseThrow();
        assertTrue(process.getAlive());
        assertTrue(process.getPid() > 0);
        assertNotEquals(dataService.pid(), (long) process.getPid(), "the method ran in the Data Service's JVM");
        assertFalse(process.getConfinement().isEmpty(), "the process said nothing of its confinement");
        assertEquals(2, process.getCalls());
      } finally {
        Channels.close(channel);
      }
    }
  }
}
