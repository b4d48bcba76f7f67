package io.dataclay.benchmarks.engines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchmarkSettingsTest {
  @TempDir
  Path dir;

  @Test
  void defaultsRunEveryEngineWithTheMemoryBaselineFirst() {
    BenchmarkSettings s = BenchmarkSettings.parse("--pool-dir=" + dir, "--postgres-url=jdbc:postgresql://h/db");

    assertEquals(List.of("memory", "kv", "heap", "2lm", "postgres"), s.engines());
    assertEquals(2L << 30, s.poolBytes());
    assertEquals(1, s.warmupRounds());
    assertEquals(5, s.rounds());
    assertEquals(1_000_000_000L, s.roundBudgetNanos());
  }

  @Test
  void postgresNeedsAUrlButOtherEnginesDoNot() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BenchmarkSettings.parse("--pool-dir=" + dir));

    assertTrue(e.getMessage().contains("--postgres-url"), e.getMessage());
    assertEquals(List.of("kv", "heap"), BenchmarkSettings.parse("--pool-dir=" + dir, "--engines=kv,heap").engines());
  }

  @Test
  void anEngineWithTheEncryptedSuffixRunsThatEngineWithAKeyButMemoryHasNone() {
    BenchmarkSettings s = BenchmarkSettings.parse("--pool-dir=" + dir, "--engines=kv,kv+enc,postgres+enc",
        "--postgres-url=jdbc:postgresql://h/db");

    assertEquals(List.of("kv", "kv+enc", "postgres+enc"), s.engines());
    assertEquals("kv", BenchmarkSettings.baseEngine("kv+enc"));
    assertTrue(BenchmarkSettings.encrypted("kv+enc"));
    assertMessage("--engines", () -> BenchmarkSettings.parse("--pool-dir=" + dir, "--engines=memory+enc"));
    assertMessage("--postgres-url", () -> BenchmarkSettings.parse("--pool-dir=" + dir, "--engines=postgres+enc"));
  }

  @Test
  void badArgumentsAreRefusedNamingTheArgument() {
    String pool = "--pool-dir=" + dir;
    assertMessage("--engines", () -> BenchmarkSettings.parse(pool, "--engines=kv,rocks"));
    assertMessage("twice", () -> BenchmarkSettings.parse(pool, "--engines=kv,kv"));
    assertMessage("--scale", () -> BenchmarkSettings.parse(pool, "--engines=kv", "--scale=-1"));
    assertMessage("--rounds", () -> BenchmarkSettings.parse(pool, "--engines=kv", "--rounds=0"));
    assertMessage("--pool-size", () -> BenchmarkSettings.parse(pool, "--engines=kv", "--pool-size=lots"));
    assertMessage("--colour", () -> BenchmarkSettings.parse(pool, "--colour=red"));
    assertMessage("--key=value", () -> BenchmarkSettings.parse(pool, "kv"));
    assertMessage("--pool-dir", () -> BenchmarkSettings.parse("--engines=kv"));
    assertMessage("not an existing", () -> BenchmarkSettings.parse("--pool-dir=" + dir.resolve("missing"), "--engines=kv"));
  }

  private static void assertMessage(String part, org.junit.jupiter.api.function.Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), "expected '" + part + "' in: " + e.getMessage());
  }
}
