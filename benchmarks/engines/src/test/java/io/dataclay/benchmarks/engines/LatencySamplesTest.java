package io.dataclay.benchmarks.engines;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class LatencySamplesTest {
  @Test
  void percentilesAreNearestRankOfTheRecordedSamplesInAnyOrder() {
    // arrange: 1..100 recorded backwards
    LatencySamples samples = new LatencySamples(100);
    for (int i = 100; i >= 1; i--) {
      samples.add(i);
    }

    // act / assert
    assertEquals(50, samples.percentile(50));
    assertEquals(99, samples.percentile(99));
    assertEquals(100, samples.percentile(100));
    assertEquals(1, samples.percentile(0.5));
  }

  @Test
  void oneSlowSampleInAHundredIsTheP100NotTheP99() {
    LatencySamples samples = new LatencySamples(100);
    for (int i = 0; i < 99; i++) {
      samples.add(10);
    }
    samples.add(1_000_000);

    assertEquals(10, samples.percentile(99));
    assertEquals(1_000_000, samples.percentile(100));
  }

  @Test
  void aPercentileOfNothingOrOutOfRangeIsRefused() {
    LatencySamples empty = new LatencySamples(4);

    assertThrows(IllegalStateException.class, () -> empty.percentile(50));
    assertThrows(IllegalArgumentException.class, () -> empty.percentile(0));
    assertThrows(IllegalArgumentException.class, () -> empty.percentile(101));
  }
}
