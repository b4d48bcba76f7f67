package io.dataclay.serialization;

import java.util.concurrent.atomic.AtomicInteger;

/** Classes that record whether they were initialised or instantiated, for the refused-class tests. */
final class Canaries {
  static final AtomicInteger INITIALISED = new AtomicInteger();
  static final AtomicInteger CREATED = new AtomicInteger();

  private Canaries() {}

  /** A class a permissive codec may encode. */
  static final class CanaryA {
    int payload = 7;
  }

  /** A class named like CanaryA that a crafted payload names; it must never be initialised nor created. */
  static final class CanaryB {
    static {
      INITIALISED.incrementAndGet();
    }

    int payload = 7;

    CanaryB() {
      CREATED.incrementAndGet();
    }
  }
}
