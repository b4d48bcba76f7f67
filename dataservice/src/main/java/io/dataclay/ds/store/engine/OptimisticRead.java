package io.dataclay.ds.store.engine;

import java.util.Optional;
import java.util.concurrent.locks.StampedLock;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Reads an object's state under its {@link StampedLock} (see {@link KeyLocks}): first without
 * writing the lock (an optimistic read, cheap under concurrent readers), then, when a writer
 * interfered or the state is too large to copy twice, under the read lock. Writers change or free
 * an object's storage only under its write lock, so a copy made while the optimistic stamp stays
 * valid is of one committed state.
 */
public final class OptimisticRead {
  private OptimisticRead() {}

  /**
   * The object's state, or empty when {@code find} finds no entry for it.
   *
   * @param find the object's entry (where its state lies), null when it is not stored
   * @param copy copies the state out of an entry without a lock; null when the entry is too large
   *     to try. It may see bytes a writer is changing: whatever it throws then is taken as "retry
   *     under the lock", and what it returns is used only once the stamp validates
   * @param finish turns a validated copy into the result (e.g. decodes it)
   * @param locked reads an entry's state under the read lock
   */
  public static <E, C, T> Optional<T> read(StampedLock lock, Supplier<E> find, Function<E, C> copy,
      BiFunction<E, C, T> finish, Function<E, T> locked) {
    long stamp = lock.tryOptimisticRead();
    if (stamp != 0) {
      E entry = find.get();
      if (entry == null) {
        if (lock.validate(stamp)) {
          return Optional.empty();
        }
      } else {
        C copied = tryCopy(copy, entry);
        if (copied != null && lock.validate(stamp)) {
          return Optional.of(finish.apply(entry, copied));
        }
      }
    }
    return locked(lock, find, locked);
  }

  /** {@code read} applied to the object's entry under its read lock; empty when it is not stored. */
  public static <E, T> Optional<T> locked(StampedLock lock, Supplier<E> find, Function<E, T> read) {
    long stamp = lock.readLock();
    try {
      E entry = find.get();
      return entry == null ? Optional.empty() : Optional.of(read.apply(entry));
    } finally {
      lock.unlockRead(stamp);
    }
  }

  private static <E, C> C tryCopy(Function<E, C> copy, E entry) {
    try {
      return copy.apply(entry);
    } catch (RuntimeException e) {
      return null; // a racing writer changed the storage; the caller retries under the read lock
    }
  }
}
