package io.dataclay.logic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dataclay.logic.metadata.MetadataSync;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LogicModuleConfigTest {
  @Test
  void absent_keys_take_their_defaults() {
    // run
    LogicModuleConfig c = new LogicModuleConfig(Map.of());
    // verify
    assertEquals(11034, c.port());
    assertEquals(Paths.get(System.getProperty("user.home"), ".dataclay"), c.home());
    assertEquals("jdbc:sqlite:" + c.home().resolve("lm/metadata.db").toAbsolutePath(), c.metadataUrl());
    assertNull(c.adminUser());
    assertEquals(Duration.ofHours(168), c.sessionTtl());
    assertEquals(5000, c.backendTimeoutMs());
    assertEquals(MetadataSync.NORMAL, c.metadataSync());
    assertEquals(Duration.ofSeconds(600), c.gcInterval());
  }

  @Test
  void given_keys_are_read() {
    // run
    LogicModuleConfig c = new LogicModuleConfig(Map.of(
        "DATACLAY_PORT", "0", "DATACLAY_HOME", "/srv/dc", "DATACLAY_METADATA_URL", "jdbc:postgresql://db/lm?user=u",
        "DATACLAY_USER", "root", "DATACLAY_PASSWORD", "pw", "DATACLAY_SESSION_TTL_HOURS", "2",
        "DATACLAY_BACKEND_TIMEOUT_MS", "900", "DATACLAY_METADATA_SYNC", "FULL", "DATACLAY_GC_INTERVAL", "0"));
    // verify
    assertEquals(0, c.port());
    assertEquals(Paths.get("/srv/dc"), c.home());
    assertEquals("jdbc:postgresql://db/lm?user=u", c.metadataUrl());
    assertEquals("root", c.adminUser());
    assertEquals("pw", c.adminPassword());
    assertEquals(Duration.ofHours(2), c.sessionTtl());
    assertEquals(900, c.backendTimeoutMs());
    assertEquals(MetadataSync.FULL, c.metadataSync());
    assertEquals(Duration.ZERO, c.gcInterval());
  }

  @Test
  void a_home_starting_with_a_tilde_is_under_the_users_home() {
    LogicModuleConfig c = new LogicModuleConfig(Map.of("DATACLAY_HOME", "~/cluster"));
    assertEquals(Paths.get(System.getProperty("user.home"), "cluster"), c.home());
  }

  @Test
  void malformed_values_are_refused_naming_their_key() {
    Map<String, Map<String, String>> bad = Map.of(
        "DATACLAY_PORT", Map.of("DATACLAY_PORT", "http"),
        "DATACLAY_SESSION_TTL_HOURS", Map.of("DATACLAY_SESSION_TTL_HOURS", "0"),
        "DATACLAY_BACKEND_TIMEOUT_MS", Map.of("DATACLAY_BACKEND_TIMEOUT_MS", "-5"),
        "DATACLAY_METADATA_SYNC", Map.of("DATACLAY_METADATA_SYNC", "sometimes"),
        "DATACLAY_GC_INTERVAL", Map.of("DATACLAY_GC_INTERVAL", "-1"),
        "DATACLAY_METADATA_URL", Map.of("DATACLAY_METADATA_URL", "jdbc:mysql://db/x?password=secret"),
        "DATACLAY_PASSWORD", Map.of("DATACLAY_USER", "root"));
    bad.forEach((key, env) -> {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LogicModuleConfig(env));
      assertTrue(e.getMessage().startsWith(key), e.getMessage());
      assertTrue(!e.getMessage().contains("secret"), e.getMessage());
    });
    assertThrows(IllegalArgumentException.class, () -> new LogicModuleConfig(Map.of("DATACLAY_PORT", "65536")));
  }

  @Test
  void the_logic_module_binds_its_advertised_host_unless_a_bind_host_is_given() {
    assertEquals("127.0.0.1", new LogicModuleConfig(Map.of()).bindHost());
    assertEquals("lm.example", new LogicModuleConfig(Map.of("DATACLAY_HOST", "lm.example")).bindHost());
    assertEquals("0.0.0.0",
        new LogicModuleConfig(Map.of("DATACLAY_HOST", "lm.example", "DATACLAY_BIND_HOST", "0.0.0.0")).bindHost());
  }

  @Test
  void tls_files_are_read_at_start_and_must_come_together() throws Exception {
    String ca = fixture("ca.pem");
    LogicModuleConfig tls = new LogicModuleConfig(Map.of("DATACLAY_TLS_CA", ca, "DATACLAY_TLS_CERT",
        fixture("server.pem"), "DATACLAY_TLS_KEY", fixture("server.key")));
    IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class,
        () -> new LogicModuleConfig(Map.of("DATACLAY_TLS_CA", ca, "DATACLAY_TLS_CERT", fixture("server.pem"))));
    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
        () -> new LogicModuleConfig(Map.of("DATACLAY_TLS_CA", "/nonexistent/ca.pem")));
    assertTrue(tls.tls().enabled() && tls.tls().presentsCertificate());
    assertTrue(noKey.getMessage().contains("DATACLAY_TLS_CERT=") && noKey.getMessage().contains("without its key"),
        noKey.getMessage());
    assertEquals("DATACLAY_TLS_CA=/nonexistent/ca.pem: no such file", missing.getMessage());
  }

  private static String fixture(String name) throws Exception {
    return java.nio.file.Path.of(LogicModuleConfigTest.class.getResource("/tls/" + name).toURI()).toString();
  }
}
