package io.dataclay.ds.ee;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class EnvironmentOutputTest {
  private final AtomicLong nanos = new AtomicLong();

  private List<String> copy(byte[] written, long bytesPerSecond) {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    new EnvironmentOutput(new ByteArrayInputStream(written), "python", () -> "alice", 42,
        new PrintStream(log, true, StandardCharsets.UTF_8), bytesPerSecond, nanos::get).run();
    return log.toString(StandardCharsets.UTF_8).lines().toList();
  }

  @Test
  void every_line_is_led_by_the_account_and_pid_the_data_service_knows() {
    List<String> lines = copy("one\ntwo\n".getBytes(StandardCharsets.UTF_8), 1000);
    assertEquals(2, lines.size());
    assertTrue(lines.get(0).endsWith(" python-ee alice (pid 42): one"), lines.get(0));
    assertTrue(lines.get(1).endsWith(" python-ee alice (pid 42): two"), lines.get(1));
  }

  @Test
  void control_characters_cannot_start_a_line_or_drive_a_terminal() {
    byte[] hostile = "ok\r2026-01-01 00:00:00 python-ee bob (pid 1): forged\u001b[2J\u2028x\n"
        .getBytes(StandardCharsets.UTF_8);
    List<String> lines = copy(hostile, 1000);
    assertEquals(1, lines.size(), lines.toString());
    assertTrue(lines.get(0).contains("alice (pid 42): ok\\x0d2026-01-01"), lines.get(0));
    assertTrue(lines.get(0).endsWith("forged\\x1b[2J\\u2028x"), lines.get(0));
  }

  @Test
  void a_long_line_is_cut_into_marked_pieces() {
    byte[] longLine = ("a".repeat(EnvironmentOutput.MAX_LINE + 10) + "\n").getBytes(StandardCharsets.UTF_8);
    List<String> lines = copy(longLine, 1 << 20);
    assertEquals(2, lines.size());
    assertTrue(lines.get(0).endsWith("(cut at " + EnvironmentOutput.MAX_LINE + " bytes)"));
    assertTrue(lines.get(1).endsWith("(continued) aaaaaaaaaa"), lines.get(1));
  }

  @Test
  void a_sustained_flood_is_counted_in_at_most_one_line_per_ten_seconds() {
    // 100 bytes/s, burst 6400; a line of 100 bytes every 0.1 s for 60 s: one in ten passes
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    byte[] line = ("x".repeat(99) + "\n").getBytes(StandardCharsets.UTF_8);
    StringBuilder all = new StringBuilder();
    for (int i = 0; i < 600 + 64; i++) {
      all.append(new String(line, StandardCharsets.UTF_8));
    }
    long[] step = {0};
    byte[] bytes = all.toString().getBytes(StandardCharsets.UTF_8);
    // the clock advances 0.1 s each time it is read once the burst is spent
    java.util.function.LongSupplier clock = () -> step[0]++ < 64 ? 0 : (step[0] - 64) * 100_000_000L;
    new EnvironmentOutput(new ByteArrayInputStream(bytes), "python", () -> "alice", 42,
        new PrintStream(log, true, StandardCharsets.UTF_8), 100, clock).run();
    List<String> lines = log.toString(StandardCharsets.UTF_8).lines().toList();
    long notes = lines.stream().filter(l -> l.contains("left out")).count();
    assertTrue(notes >= 5 && notes <= 8, notes + " notes in " + lines.size() + " lines");
    assertTrue(lines.size() < 64 + 70 + 8, lines.size() + " lines");
  }

  @Test
  void output_over_the_rate_is_left_out_and_counted_in_one_line() {
    // 10 bytes/s: a burst of 640 bytes; a loop of prints writes 100,000 lines of 10 bytes at once
    byte[] flood = "123456789\n".repeat(100_000).getBytes(StandardCharsets.UTF_8);
    List<String> lines = copy(flood, 10);
    assertEquals(64 + 1, lines.size());
    assertTrue(lines.get(64).contains("left out 99936 line(s), 999360 bytes"), lines.get(64));
    assertTrue(lines.get(64).contains(EnvironmentSettings.OUTPUT_BYTES_S), lines.get(64));
  }
}
