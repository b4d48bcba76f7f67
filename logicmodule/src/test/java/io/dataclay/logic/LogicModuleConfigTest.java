package io.dataclay.logic;

import io.dataclay.logic.accounts.SessionLimits;
import io.dataclay.logic.metadata.MetadataSync;
import io.dataclay.testing.SecretFiles;
import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


class LogicModuleConfigTest {
  @TempDir
  Path dir;

  private Map<String, String> with(String... keysAndValues) {
    Map<String, String> env = new HashMap<>();
    env.put("DATACLAY_CLUSTER_SECRET_FILE", SecretFiles.write(dir).toString());
    for (int i = 0; i < keysAndValues.length; i += 2) {
      env.put(keysAndValues[i], keysAndValues[i + 1]);
    }
    return env;
  }

  @Test
  void absent_keys_take_their_defaults() {
    // run
    LogicModuleConfig c = new LogicModuleConfig(with());
    // verify
    assertEquals(11034, c.port());
    assertEquals(Paths.get(System.getProperty("user.home"), ".dataclay"), c.home());
    assertEquals("jdbc:sqlite:" + c.home().resolve("lm/metadata.db").toAbsolutePath(), c.metadataUrl());
    assertNull(c.adminUser());
    assertEquals(Duration.ofHours(168), c.sessionTtl());
    assertEquals(5000, c.backendTimeoutMs());
    assertEquals(MetadataSync.NORMAL, c.metadataSync());
    assertEquals(Duration.ofSeconds(600), c.gcInterval());
    assertEquals(16L << 20, c.maxModelBytes());
    assertEquals("127.0.0.1", c.host());
    assertEquals("127.0.0.1", c.bindHost());
    assertEquals(12, c.minPasswordLength());
    assertEquals(768 << 20, c.maxMessageBytes());
    assertEquals(6000, c.promoteAfterMs());
    assertEquals(1200, c.unreachableMs());
    assertEquals(new SessionLimits(500, 20, 200), c.sessionLimits());
  }

  @Test
  void the_settings_table_names_each_key_once_with_a_meaning() {
    // run
    Set<String> keys = new HashSet<>();
    for (LogicModuleConfig.Setting s : LogicModuleConfig.Setting.values()) {
      // verify
      assertTrue(keys.add(s.key()), s.key() + " listed twice");
      assertTrue(s.key().equals("DATACLAY_" + s.name()), s.key() + " is not named after its constant " + s.name());
      assertTrue(s.meaning().endsWith("."), s.key() + ": the meaning is a sentence");
    }
  }

  @Test
  void every_dataclay_name_in_the_logic_modules_code_is_in_the_settings_table() throws Exception {
    // setup
    Set<String> table = new HashSet<>();
    for (LogicModuleConfig.Setting s : LogicModuleConfig.Setting.values()) {
      table.add(s.key());
    }
    Pattern name = Pattern.compile("DATACLAY_[A-Z0-9_]*[A-Z0-9]");
    Set<String> unknown = new TreeSet<>();
    // run
    try (Stream<Path> files = Files.walk(Paths.get("src/main/java"))) {
      for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Matcher m = name.matcher(Files.readString(file));
        while (m.find()) {
          if (!table.contains(m.group())) {
            unknown.add(m.group() + " in " + file.getFileName());
          }
        }
      }
    }
    // verify
    assertEquals(Set.of(), unknown, "every DATACLAY_* name the Logic Module reads or names is in LogicModuleConfig.Setting");
    assertTrue(table.size() > 20, "the source tree was found");
  }

  @Test
  void settings_json_prints_key_default_and_meaning_of_every_setting() {
    // setup
    PrintStream saved = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    // run
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      LogicModuleMain.main(new String[] {"settings", "--json"});
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    } finally {
      System.setOut(saved);
    }
    // verify
    String json = out.toString(StandardCharsets.UTF_8).strip();
    // verify: a JSON list of {key, default, meaning}, every setting once, in the table's order
    List<Map<String, String>> rows = new Gson().fromJson(json, new TypeToken<List<Map<String, String>>>() {}.getType());
    assertEquals(Arrays.stream(LogicModuleConfig.Setting.values()).map(LogicModuleConfig.Setting::key).toList(),
        rows.stream().map(r -> r.get("key")).toList());
    assertTrue(rows.stream().allMatch(r -> r.keySet().equals(Set.of("key", "default", "meaning"))), json);
    assertEquals("11034", rows.get(0).get("default"));
    assertEquals("", rows.stream().filter(r -> r.get("key").equals("DATACLAY_METADATA_URL")).findFirst()
        .orElseThrow().get("default"));
    assertTrue(rows.stream().noneMatch(r -> r.get("meaning").isBlank()), json);
  }

  @Test
  void the_cluster_secret_file_is_required_and_must_be_private_and_long_enough() throws Exception {
    // setup
    Path open = dir.resolve("open.secret");
    Files.writeString(open, "0123456789abcdef0123456789abcdef0123");
    Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
    Path tiny = dir.resolve("tiny.secret");
    Files.writeString(tiny, "short");
    Files.setPosixFilePermissions(tiny, PosixFilePermissions.fromString("rw-------"));
    // run / verify
    for (Map<String, String> env : List.of(Map.<String, String>of(),
        Map.of("DATACLAY_CLUSTER_SECRET_FILE", open.toString()),
        Map.of("DATACLAY_CLUSTER_SECRET_FILE", tiny.toString()),
        Map.of("DATACLAY_CLUSTER_SECRET_FILE", dir.resolve("missing").toString()))) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LogicModuleConfig(env));
      assertTrue(e.getMessage().startsWith("DATACLAY_CLUSTER_SECRET_FILE"), e.getMessage());
      assertTrue(!e.getMessage().contains("0123456789abcdef"), "the secret appears in: " + e.getMessage());
    }
  }

  @Test
  void the_administrators_password_comes_from_standard_input_when_the_environment_has_none() {
    LogicModuleConfig c = new LogicModuleConfig(with("DATACLAY_USER", "root"), () -> "typed-password");
    assertEquals("typed-password", c.adminPassword());
  }

  @Test
  void given_keys_are_read() {
    // run
    LogicModuleConfig c = new LogicModuleConfig(with(
        "DATACLAY_PORT", "0", "DATACLAY_HOME", "/srv/dc", "DATACLAY_METADATA_URL", "jdbc:postgresql://db/lm?user=u",
        "DATACLAY_USER", "root", "DATACLAY_PASSWORD", "pw", "DATACLAY_SESSION_TTL_HOURS", "2",
        "DATACLAY_BACKEND_TIMEOUT_MS", "900", "DATACLAY_METADATA_SYNC", "FULL", "DATACLAY_GC_INTERVAL", "0",
        "DATACLAY_MODEL_MAX_BYTES", "1024"));
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
    assertEquals(1024, c.maxModelBytes());
  }

  @Test
  void a_home_starting_with_a_tilde_is_under_the_users_home() {
    LogicModuleConfig c = new LogicModuleConfig(with("DATACLAY_HOME", "~/cluster"));
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
        "DATACLAY_PASSWORD", Map.of("DATACLAY_USER", "root"),
        "DATACLAY_MODEL_MAX_BYTES", Map.of("DATACLAY_MODEL_MAX_BYTES", "0"));
    bad.forEach((key, given) -> {
      Map<String, String> env = with();
      env.putAll(given);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new LogicModuleConfig(env));
      assertTrue(e.getMessage().startsWith(key), e.getMessage());
      assertTrue(!e.getMessage().contains("secret"), e.getMessage());
    });
    assertThrows(IllegalArgumentException.class, () -> new LogicModuleConfig(with("DATACLAY_PORT", "65536")));
  }

  @Test
  void the_logic_module_binds_its_advertised_host_unless_a_bind_host_is_given() {
    assertEquals("127.0.0.1", new LogicModuleConfig(with()).bindHost());
    assertEquals("lm.example", new LogicModuleConfig(with("DATACLAY_HOST", "lm.example")).bindHost());
    assertEquals("0.0.0.0",
        new LogicModuleConfig(with("DATACLAY_HOST", "lm.example", "DATACLAY_BIND_HOST", "0.0.0.0")).bindHost());
  }

  @Test
  void tls_files_are_read_at_start_and_must_come_together() throws Exception {
    String ca = fixture("ca.pem");
    LogicModuleConfig tls = new LogicModuleConfig(with("DATACLAY_TLS_CA", ca, "DATACLAY_TLS_CERT",
        fixture("server.pem"), "DATACLAY_TLS_KEY", fixture("server.key")));
    IllegalArgumentException noKey = assertThrows(IllegalArgumentException.class,
        () -> new LogicModuleConfig(with("DATACLAY_TLS_CA", ca, "DATACLAY_TLS_CERT", fixture("server.pem"))));
    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
        () -> new LogicModuleConfig(with("DATACLAY_TLS_CA", "/nonexistent/ca.pem")));
    assertTrue(tls.tls().enabled() && tls.tls().presentsCertificate());
    assertTrue(noKey.getMessage().contains("DATACLAY_TLS_CERT=") && noKey.getMessage().contains("without its key"),
        noKey.getMessage());
    assertEquals("DATACLAY_TLS_CA=/nonexistent/ca.pem: no such file", missing.getMessage());
  }

  private static String fixture(String name) throws Exception {
    return java.nio.file.Path.of(LogicModuleConfigTest.class.getResource("/tls/" + name).toURI()).toString();
  }
}
