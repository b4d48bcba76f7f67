package io.dataclay.benchmarks.engines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class EncryptionReportTest {
  @Test
  void eachEncryptedFigureIsSetAgainstTheSameEnginePlainInTheSameRun() {
    // arrange: kv measured both ways, heap only plain
    List<Measurement> results = List.of(
        measured("kv", "put", 200_000, 4_000, 8_000), measured("kv+enc", "put", 100_000, 6_000, 20_000),
        measured("heap", "put", 150_000, 5_000, 9_000));

    // act
    String text = print(results);

    // assert: one row, ratios of time per op, p50 and p99
    List<String> rows = text.lines().filter(l -> l.startsWith("kv+enc") || l.startsWith("heap")).toList();
    assertEquals(1, rows.size(), text);
    assertTrue(rows.get(0).matches("kv\\+enc\\s+put\\s+100 B\\s+200,000\\s+100,000\\s+2\\.00\\s+4\\.00\\s+6\\.00\\s+1\\.50"
        + "\\s+8\\.00\\s+20\\.0\\s+2\\.50"), rows.get(0));
  }

  @Test
  void nothingIsPrintedWhenNoEngineRanBothWays() {
    assertEquals("", print(List.of(measured("kv", "put", 1, 1, 1))));
  }

  private static String print(List<Measurement> results) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    EncryptionReport.print(new PrintStream(bytes, true, StandardCharsets.UTF_8), results);
    return bytes.toString(StandardCharsets.UTF_8);
  }

  private static Measurement measured(String engine, String op, long opsPerSecond, long p50, long p99) {
    return new Measurement(engine, op, "100 B", opsPerSecond, opsPerSecond, p50, p99, opsPerSecond, opsPerSecond, 0, 1.0);
  }
}
