package io.dataclay.benchmarks.engines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoundRunnerTest {
  @Test
  void warmUpRoundsRunButOnlyTimedRoundsAreCounted() {
    // arrange
    RoundRunner runner = new RoundRunner(2, 3, TimeUnit.SECONDS.toNanos(10));
    List<Integer> finished = new ArrayList<>();
    int[] calls = {0};

    // act
    Measurement m = runner.measure("memory", "get", "100 B", 1000, (round, ops) -> new RoundRunner.Round() {
      @Override
      public void run(int i) {
        calls[0]++;
      }

      @Override
      public void finished(int done) {
        finished.add(done);
      }
    });

    // assert
    assertEquals(5 * 1000, calls[0]);
    assertEquals(List.of(1000, 1000, 1000, 1000, 1000), finished);
    assertEquals(3 * 1000, m.ops());
    assertTrue(m.p50Nanos() > 0 && m.p50Nanos() <= m.p99Nanos(), m.toString());
    assertTrue(m.slowestRound() <= m.opsPerSecond() && m.opsPerSecond() <= m.fastestRound(), m.toString());
  }

  @Test
  void aRoundStopsOnceItsTimeBudgetIsSpentAndSaysHowManyOpsRan() {
    // arrange: 2 ms operations, a 20 ms budget, 1000 asked
    RoundRunner runner = new RoundRunner(0, 2, TimeUnit.MILLISECONDS.toNanos(20));
    List<Integer> finished = new ArrayList<>();

    // act
    Measurement m = runner.measure("postgres", "put", "1 MiB", 1000, (round, ops) -> new RoundRunner.Round() {
      @Override
      public void run(int i) {
        sleepMillis(2);
      }

      @Override
      public void finished(int done) {
        finished.add(done);
      }
    });

    // assert
    assertEquals(2, finished.size());
    for (int done : finished) {
      assertTrue(done >= 1 && done <= 11, "ops in a 20 ms round of 2 ms ops: " + done);
    }
    assertEquals(finished.get(0) + finished.get(1), m.ops());
    assertTrue(m.p50Nanos() >= TimeUnit.MILLISECONDS.toNanos(2), m.toString());
    assertTrue(m.opsPerSecond() <= 500, m.toString());
    assertTrue(m.cpuShare() < 0.5, "a sleeping thread uses little CPU: " + m);
  }

  private static void sleepMillis(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
