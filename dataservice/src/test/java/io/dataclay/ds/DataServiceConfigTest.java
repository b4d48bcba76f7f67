package io.dataclay.ds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.ds.ee.EnvironmentSettings;
import io.dataclay.exceptions.InvalidArgumentException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataServiceConfigTest {
  @TempDir
  static Path dir;

  private static Map<String, String> minimal() {
    Map<String, String> env = new HashMap<>();
    try {
      env.put("DATACLAY_CLUSTER_SECRET_FILE", TestLogicModule.secretFile(dir).toString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    env.put("DATACLAY_BACKEND_NAME", "b1");
    env.put("USER", "alice");
    env.put("DATACLAY_HOME", "/tmp/dc-home");
    return env;
  }

  @Test
  void defaults_follow_the_documented_values() {
    // run
    DataServiceConfig c = DataServiceConfig.from(minimal());
    // verify
    assertEquals("127.0.0.1", c.lmHost());
    assertEquals(11034, c.lmPort());
    assertEquals("127.0.0.1", c.backendHost());
    assertEquals(0, c.backendPort());
    assertEquals(Path.of("/tmp/dc-home/backends/b1"), c.backendDir());
    assertEquals(Path.of("/tmp/dc-home/backends/b1/models/python"), c.pythonModelsDir());
    assertEquals("kv", c.storeEngine());
    assertEquals(Path.of("/dev/shm/dataclay-alice/b1"), c.storePath());
    assertEquals("1G", c.storeSize());
    assertEquals("python3", c.python());
    assertEquals(1000, c.heartbeatMs());
    assertEquals(10000, c.eeWaitMs());
    assertEquals(Path.of("/tmp/dc-home/backends/b1/ee"), c.environmentsDir());
  }

  @Test
  void python_none_runs_no_python_environment() {
    Map<String, String> env = minimal();
    env.put("DATACLAY_PYTHON", "none");
    assertNull(DataServiceConfig.from(env).python());
    assertEquals("python3", DataServiceConfig.from(env).launcherPython(), "the Java environment's launcher still runs");
  }

  @Test
  void a_missing_cluster_secret_is_refused_naming_the_key() {
    Map<String, String> env = minimal();
    env.remove("DATACLAY_CLUSTER_SECRET_FILE");
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> DataServiceConfig.from(env));
    assertTrue(e.getMessage().startsWith("DATACLAY_CLUSTER_SECRET_FILE"), e.getMessage());
  }

  @Test
  void environment_processes_inherit_only_harmless_keys_and_their_own_settings() throws Exception {
    // setup: every kind of credential a Data Service may hold in its environment
    Map<String, String> env = minimal();
    env.put("DATACLAY_PASSWORD", "leaked-admin-password");
    env.put("DATACLAY_USER", "admin");
    env.put("DATACLAY_TOKEN", "leaked-token");
    env.put("AWS_SECRET_ACCESS_KEY", "leaked");
    env.put("DATACLAY_STORE_KEY_FILE", "/keys/store.key");
    env.put("DATACLAY_STORE_URL", "jdbc:postgresql://h/db?user=u&password=leaked");
    env.put("DATACLAY_TLS_CA", fixture("ca.pem"));
    env.put("DATACLAY_TLS_CERT", fixture("server.pem"));
    env.put("DATACLAY_TLS_KEY", fixture("server.key"));
    env.put("PATH", "/usr/bin");
    env.put("DATACLAY_PICKLE_ALLOW", "numpy.dtype");
    env.put("DATACLAY_EE_THREADS", "3");
    // run
    Map<String, String> passed = DataServiceConfig.from(env).environmentProcessSettings();
    // verify: the harmless keys and the environment's own settings, nothing else
    assertEquals(Map.of("PATH", "/usr/bin", "DATACLAY_EE_PICKLE_ALLOW", "numpy.dtype", "DATACLAY_EE_THREADS", "3",
        "DATACLAY_EE_RESIDENT_MB", "1024"), passed);
    String secretFile = env.get("DATACLAY_CLUSTER_SECRET_FILE");
    for (String value : passed.values()) {
      assertFalse(value.contains("leaked") || value.contains(secretFile) || value.contains(".pem")
          || value.contains(".key"), value);
    }
  }

  @Test
  void no_opentelemetry_variable_reaches_an_execution_environment() {
    // setup: tracing on, with an exporter credential in its headers
    Map<String, String> env = minimal();
    env.put("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318");
    env.put("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer leaked");
    env.put("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://collector:4318/v1/traces");
    env.put("OTEL_SERVICE_NAME", "ds1");
    env.put("OTEL_RESOURCE_ATTRIBUTES", "deployment=leaked");
    env.put("PATH", "/usr/bin");
    // run
    Map<String, String> passed = DataServiceConfig.from(env).environmentProcessSettings();
    // verify: no OTEL_* key and no value of one
    assertTrue(passed.keySet().stream().noneMatch(k -> k.startsWith("OTEL_")), passed.toString());
    assertTrue(passed.values().stream().noneMatch(v -> v.contains("leaked") || v.contains("collector")),
        passed.toString());
    assertEquals("/usr/bin", passed.get("PATH"));
  }

  @Test
  void execution_environment_settings_follow_the_documented_defaults() {
    // run
    EnvironmentSettings s = DataServiceConfig.from(minimal()).environments();
    // verify
    assertEquals("auto", s.confinement());
    assertFalse(s.javaInProcess());
    assertEquals(4096, s.memoryMb());
    assertEquals(512, s.maxTasks());
    assertEquals(16, s.threads());
    assertEquals(1024, s.maxQueued());
    assertEquals(64, s.maxProcesses());
    assertEquals(600_000, s.idleMs());
    assertEquals(1_800_000, s.callTimeoutMs());
    assertNull(s.launcher());
    assertEquals(1024, s.residentMb());
  }

  @Test
  void execution_environment_settings_take_explicit_values() {
    // setup
    Map<String, String> env = minimal();
    env.put(EnvironmentSettings.CONFINEMENT, "none");
    env.put(EnvironmentSettings.JAVA, "in-process");
    env.put(EnvironmentSettings.THREADS, "2");
    env.put(EnvironmentSettings.MAX_QUEUED, "0");
    env.put(EnvironmentSettings.MAX_PROCESSES, "3");
    env.put(EnvironmentSettings.IDLE_S, "5");
    env.put(EnvironmentSettings.CALL_TIMEOUT_S, "0");
    env.put(EnvironmentSettings.MEMORY_MB, "128");
    // run
    EnvironmentSettings s = DataServiceConfig.from(env).environments();
    // verify: 0 s is no deadline at all, and the resident budget is a quarter of the memory
    assertEquals(new EnvironmentSettings("none", true, 128, 512, 2, 0, 3, 5000, 0, null, 1, 16384, 32), s);
  }

  @Test
  void an_explicit_resident_budget_is_kept_and_a_negative_one_refused() {
    // setup
    Map<String, String> env = minimal();
    env.put(EnvironmentSettings.RESIDENT_MB, "300");
    // run
    EnvironmentSettings s = DataServiceConfig.from(env).environments();
    // verify
    assertEquals(300, s.residentMb());
    env.put(EnvironmentSettings.RESIDENT_MB, "-1");
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> DataServiceConfig.from(env));
    assertTrue(e.getMessage().contains("DATACLAY_EE_RESIDENT_MB must be a whole number"), e.getMessage());
  }

  @Test
  void bad_execution_environment_settings_are_refused_naming_the_key() {
    for (String[] bad : new String[][] {
        {EnvironmentSettings.CONFINEMENT, "sometimes"}, {EnvironmentSettings.JAVA, "maybe"},
        {EnvironmentSettings.MEMORY_MB, "10"}, {EnvironmentSettings.MAX_TASKS, "0"},
        {EnvironmentSettings.THREADS, "0"}, {EnvironmentSettings.THREADS, "many"},
        {EnvironmentSettings.MAX_QUEUED, "-1"}, {EnvironmentSettings.MAX_PROCESSES, "0"},
        {EnvironmentSettings.IDLE_S, "0"}, {EnvironmentSettings.CALL_TIMEOUT_S, "-5"},
        {EnvironmentSettings.CALL_TIMEOUT_S, "1.5"}}) {
      // setup
      Map<String, String> env = minimal();
      env.put(bad[0], bad[1]);
      // run
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> DataServiceConfig.from(env));
      // verify
      assertTrue(e.getMessage().startsWith(bad[0]) && e.getMessage().contains(bad[1]), e.getMessage());
    }
  }

  @Test
  void malformed_numbers_are_refused_naming_the_key() {
    for (String[] bad : new String[][] {
        {"DATACLAY_PORT", "0"}, {"DATACLAY_BACKEND_PORT", "70000"}, {"DATACLAY_HEARTBEAT_MS", "soon"},
        {"DATACLAY_EE_WAIT_MS", "-1"}, {"DATACLAY_BACKEND_NAME", "../x"}}) {
      Map<String, String> env = minimal();
      env.put(bad[0], bad[1]);
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> DataServiceConfig.from(env));
      assertTrue(e.getMessage().contains(bad[0]), e.getMessage());
    }
  }

  @Test
  void explicit_values_override_the_defaults() {
    Map<String, String> env = minimal();
    env.put("DATACLAY_BACKEND_DIR", "/srv/b");
    env.put("DATACLAY_STORE_PATH", "/mnt/pmem/b");
    env.put("DATACLAY_BACKEND_PORT", "7000");
    assertEquals(Path.of("/srv/b/models/python"), DataServiceConfig.from(env).pythonModelsDir());
    assertEquals(Path.of("/mnt/pmem/b"), DataServiceConfig.from(env).storePath());
    assertEquals(7000, DataServiceConfig.from(env).backendPort());
  }

  @Test
  void the_server_binds_the_advertised_host_unless_a_bind_host_is_given() {
    Map<String, String> env = minimal();
    env.put("DATACLAY_BACKEND_HOST", "10.1.2.3");
    assertEquals("10.1.2.3", DataServiceConfig.from(env).bindHost());
    assertEquals("127.0.0.1", DataServiceConfig.from(minimal()).bindHost());
    env.put("DATACLAY_BIND_HOST", "0.0.0.0");
    assertEquals("0.0.0.0", DataServiceConfig.from(env).bindHost());
  }

  @Test
  void tls_needs_the_ca_certificate_and_key_and_environment_processes_get_none_of_them() throws Exception {
    // setup
    Map<String, String> env = minimal();
    env.put("DATACLAY_TLS_CA", fixture("ca.pem"));
    // run
    InvalidArgumentException caOnly = assertThrows(InvalidArgumentException.class, () -> DataServiceConfig.from(env));
    env.put("DATACLAY_TLS_CERT", fixture("server.pem"));
    env.put("DATACLAY_TLS_KEY", fixture("server.key"));
    DataServiceConfig c = DataServiceConfig.from(env);
    // verify: an environment has no network, so not even the CA reaches it
    assertTrue(caOnly.getMessage().startsWith("DATACLAY_TLS_CA=") && caOnly.getMessage().contains("certificate"),
        caOnly.getMessage());
    assertTrue(c.tls().enabled() && c.tls().presentsCertificate());
    assertTrue(c.environmentProcessSettings().keySet().stream().noneMatch(k -> k.contains("TLS")),
        c.environmentProcessSettings().toString());
    assertFalse(DataServiceConfig.from(minimal()).tls().enabled());
  }

  @Test
  void an_unreadable_tls_file_is_refused_naming_its_key() {
    Map<String, String> env = minimal();
    env.put("DATACLAY_TLS_CA", "/nonexistent/ca.pem");
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> DataServiceConfig.from(env));
    assertEquals("DATACLAY_TLS_CA=/nonexistent/ca.pem: no such file", e.getMessage());
  }

  private static String fixture(String name) throws Exception {
    return Path.of(DataServiceConfigTest.class.getResource("/tls/" + name).toURI()).toString();
  }

  @Test
  void the_store_key_file_reaches_the_store_configuration_as_an_absolute_path_and_is_optional() {
    Map<String, String> env = minimal();
    assertNull(DataServiceConfig.from(env).storeConfig().keyFile());

    env.put(DataServiceConfig.STORE_KEY_FILE, "keys/store.key");

    assertEquals(Path.of("keys/store.key").toAbsolutePath(), DataServiceConfig.from(env).storeConfig().keyFile());
  }

  @Test
  void a_store_to_erase_needs_no_account_and_no_key() {
    Map<String, String> env = Map.of("DATACLAY_STORE", "postgres", "DATACLAY_STORE_URL", "jdbc:postgresql://h/db",
        DataServiceConfig.STORE_KEY_FILE, "/k");

    var config = DataServiceConfig.storeToErase(env, "backend-2", Path.of("/dev/shm/p/backend-2"));

    assertEquals("postgres", config.engine());
    assertEquals("backend-2", config.backendName());
    assertEquals("jdbc:postgresql://h/db", config.databaseUrl());
    assertEquals(Path.of("/dev/shm/p/backend-2"), config.path());
    assertNull(config.keyFile());
  }
}
