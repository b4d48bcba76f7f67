package io.dataclay.ds.store;

import io.dataclay.exceptions.InvalidArgumentException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A backend's object store engine: objects by ID, pmemkv-shaped (put, get, remove, count,
 * iterate) plus field-level updates. Only the Data Service calls it, and nothing outside this
 * package knows which engine runs. Unless {@link #stats()} says otherwise (memory, 2lm), every
 * mutating call is durable when it returns and atomic per object: a crash leaves the old or
 * the new state of an object, never a mix. Implementations are thread-safe.
 */
public interface ObjectStore extends AutoCloseable {

  /** Stores a new object or replaces a stored one whole; durable and atomic when it returns. */
  default void put(StoredObject object) {
    if (object == null) {
      throw new InvalidArgumentException("object to store is missing");
    }
    putAll(List.of(object));
  }

  /**
   * Stores several objects; each one is atomic and all are durable when it returns. On failure
   * (for example {@link io.dataclay.exceptions.StoreFullException}) none of them is stored.
   */
  void putAll(List<StoredObject> objects);

  /** The stored object, or empty when this store does not hold it. */
  Optional<StoredObject> get(UUID id);

  /**
   * The IDs the stored object's fields reference (each once, in field order), or empty when this
   * store does not hold it. Garbage collection reads this for every object: engines override it
   * to read the references without copying the values out.
   */
  default Optional<Set<UUID>> references(UUID id) {
    return get(id).map(o -> StoredObject.referencesOf(o.fields()));
  }

  /** The header of a stored object without its fields, or empty; cheap (used on every call). */
  Optional<ObjectHeader> header(UUID id);

  /**
   * Replaces the changed fields and drops the removed ones, leaving other fields as they are;
   * durable and atomic when it returns.
   *
   * @throws io.dataclay.exceptions.ObjectDoesNotExistException when the object is not stored
   */
  void applyDelta(ObjectDelta delta);

  /** Removes an object; durable when it returns. Returns whether it was stored. */
  boolean remove(UUID id);

  /** Number of stored objects. */
  long count();

  /** Calls {@code action} for the ID of every stored object (a consistent snapshot is not promised). */
  void forEachId(Consumer<UUID> action);

  /** Engine name, durability promise, pool path, capacity and use. */
  StoreStats stats();

  /** This engine's own figures, always the same names, for the backend's metrics; none by default. */
  default java.util.List<EngineFigure> figures() {
    return java.util.List.of();
  }

  /**
   * Whether a small write completes in microseconds without waiting on I/O, so that it may run
   * on a network thread (pmem and DRAM engines); engines that talk to a server say false.
   */
  default boolean writesWithoutWaiting() {
    return true;
  }

  /** Makes everything written so far durable (2lm writes its cache back); a no-op for engines durable at return. */
  default void checkpoint() {}

  /** Closes the store cleanly (2lm writes back); the pool can be reopened afterwards. */
  @Override
  void close();
}
