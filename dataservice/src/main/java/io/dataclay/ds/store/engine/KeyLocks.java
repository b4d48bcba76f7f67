package io.dataclay.ds.store.engine;

import java.util.Arrays;
import java.util.Collection;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.concurrent.locks.StampedLock;

/**
 * Striped per-object locks: writers of one object take its stripe's write lock; readers validate
 * an optimistic stamp (no shared-memory write on the fast path) and fall back to the read lock.
 * Several objects are locked in ascending stripe order, so two multi-object writers never
 * deadlock.
 */
public final class KeyLocks {
  private final StampedLock[] stripes;
  private final int mask;

  /** At least {@code minStripes} stripes (rounded up to a power of two). */
  public KeyLocks(int minStripes) {
    int n = Integer.highestOneBit(Math.max(1, minStripes - 1)) << 1;
    stripes = new StampedLock[n];
    for (int i = 0; i < n; i++) {
      stripes[i] = new StampedLock();
    }
    mask = n - 1;
  }

  /** The lock guarding {@code id}. */
  public StampedLock of(UUID id) {
    return stripes[index(id)];
  }

  /** Runs {@code work} under the write lock of {@code id} and returns what it returns. */
  public <T> T writing(UUID id, Supplier<T> work) {
    StampedLock lock = of(id);
    long stamp = lock.writeLock();
    try {
      return work.get();
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /** Runs {@code work} under the write lock of {@code id}. */
  public void writing(UUID id, Runnable work) {
    writing(id, () -> {
      work.run();
      return null;
    });
  }

  /** Write-locks the stripes of all {@code ids} (each once, in ascending order) until released. */
  public Held writeLockAll(Collection<UUID> ids) {
    int[] order = new int[ids.size()];
    int n = distinctStripes(ids, order);
    long[] stamps = new long[n];
    for (int i = 0; i < n; i++) {
      stamps[i] = stripes[order[i]].writeLock();
    }
    return new Held(Arrays.copyOf(order, n), stamps);
  }

  /**
   * Write-locks, without waiting, those stripes of {@code ids} that are free; {@link Held#covers}
   * says which IDs they guard. Never waits, so it may be called in any order with other locks.
   */
  public Held tryWriteLockAll(Collection<UUID> ids) {
    int[] order = new int[ids.size()];
    int n = distinctStripes(ids, order);
    int[] taken = new int[n];
    long[] stamps = new long[n];
    int k = 0;
    for (int i = 0; i < n; i++) {
      long stamp = stripes[order[i]].tryWriteLock();
      if (stamp != 0) {
        taken[k] = order[i];
        stamps[k++] = stamp;
      }
    }
    return new Held(Arrays.copyOf(taken, k), Arrays.copyOf(stamps, k));
  }

  /** Write locks taken together by {@link #writeLockAll} or {@link #tryWriteLockAll}. */
  public final class Held implements AutoCloseable {
    private final int[] order;
    private final long[] stamps;

    private Held(int[] order, long[] stamps) {
      this.order = order;
      this.stamps = stamps;
    }

    /** Whether the locks held include the one guarding {@code id}. */
    public boolean covers(UUID id) {
      return Arrays.binarySearch(order, index(id)) >= 0;
    }

    /** Releases every lock taken. */
    @Override
    public void close() {
      for (int i = stamps.length - 1; i >= 0; i--) {
        stripes[order[i]].unlockWrite(stamps[i]);
      }
    }
  }

  private int distinctStripes(Collection<UUID> ids, int[] out) {
    int n = 0;
    for (UUID id : ids) {
      out[n++] = index(id);
    }
    Arrays.sort(out, 0, n);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
      if (distinct == 0 || out[distinct - 1] != out[i]) {
        out[distinct++] = out[i];
      }
    }
    return distinct;
  }

  private int index(UUID id) {
    long h = id.getMostSignificantBits() ^ id.getLeastSignificantBits();
    int x = (int) (h ^ (h >>> 32));
    return (x ^ (x >>> 16)) & mask;
  }
}
