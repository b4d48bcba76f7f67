package io.dataclay.serialization;

/**
 * Which classes a codec may write and read: anything else fails with a
 * {@link io.dataclay.exceptions.SerializationException} and nothing of it is loaded or created.
 */
public interface ClassPolicy {
  /** Whether values of {@code type} may be encoded and decoded. */
  boolean allows(Class<?> type);

  /**
   * The class a payload names, when allowed. Must decide from the name before loading anything,
   * and return null for a name it refuses.
   */
  Class<?> resolve(String name);
}
