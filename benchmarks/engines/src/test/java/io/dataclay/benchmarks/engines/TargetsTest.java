package io.dataclay.benchmarks.engines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class TargetsTest {
  @Test
  void eachTargetIsJudgedOnItsOwnFigure() {
    // arrange: kv get and heap put meet their targets, the others do not
    List<Measurement> results = List.of(
        rate("kv", "get", "100 B", 1_200_000), rate("heap", "get", "100 B", 900_000),
        rate("kv", "put", "100 B", 150_000), rate("heap", "put", "100 B", 250_000),
        rate("heap", EngineRun.COUNTER_UPDATE, EngineRun.COUNTER_SIZE, 400_000),
        rate("kv", EngineRun.COUNTER_UPDATE, EngineRun.COUNTER_SIZE, 200_000),
        rate("kv", EngineRun.COUNTER_REWRITE, EngineRun.COUNTER_SIZE, 1_000));

    // act
    List<String> lines = Targets.judge(results);

    // assert
    assertEquals(6, lines.size());
    assertTrue(lines.get(0).startsWith("kv   get 100 B") && lines.get(0).contains(": 1,200,000 ops/s (p50 1.00 us)")
        && lines.get(0).endsWith("-> MET"), lines.get(0));
    assertTrue(lines.get(1).startsWith("heap get 100 B") && lines.get(1).endsWith("-> NOT MET"), lines.get(1));
    assertTrue(lines.get(2).startsWith("kv   durable put") && lines.get(2).endsWith("-> NOT MET"), lines.get(2));
    assertTrue(lines.get(3).startsWith("heap durable put") && lines.get(3).endsWith("-> MET"), lines.get(3));
    assertTrue(lines.get(4).contains("= 2.0x (p50") && lines.get(4).endsWith("-> NOT MET"), lines.get(4));
    assertTrue(lines.get(5).contains("= 400.0x (p50") && lines.get(5).endsWith("-> MET"), lines.get(5));
  }

  @Test
  void aTargetWhoseEnginesDidNotRunSaysSo() {
    List<String> lines = Targets.judge(List.of(rate("memory", "get", "100 B", 5_000_000)));

    assertEquals(6, lines.size());
    for (String line : lines) {
      assertTrue(line.endsWith(": not measured"), line);
    }
  }

  private static Measurement rate(String engine, String op, String size, long opsPerSecond) {
    return new Measurement(engine, op, size, opsPerSecond, opsPerSecond, 1000, 2000, opsPerSecond, opsPerSecond, 0, 1.0);
  }
}
