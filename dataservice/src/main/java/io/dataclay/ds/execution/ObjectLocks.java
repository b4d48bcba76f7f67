package io.dataclay.ds.execution;

import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/** Striped locks over object IDs: work on several objects takes their stripes in one order (no deadlock). */
final class ObjectLocks {
  private static final int STRIPES = 256;
  private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

  ObjectLocks() {
    for (int i = 0; i < STRIPES; i++) {
      stripes[i] = new ReentrantLock();
    }
  }

  /** Runs {@code work} holding the stripes of every object of {@code ids}. */
  <T> T withAll(Iterable<UUID> ids, Supplier<T> work) {
    TreeSet<Integer> taken = new TreeSet<>();
    for (UUID id : ids) {
      taken.add(Math.floorMod(id.hashCode(), STRIPES));
    }
    for (int i : taken) {
      stripes[i].lock();
    }
    try {
      return work.get();
    } finally {
      for (int i : taken.descendingSet()) {
        stripes[i].unlock();
      }
    }
  }
}
