package io.dataclay.serialization;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * References that give objects without an ID a fresh one and resolve IDs to the objects they were
 * given to; an ID never given out resolves to what {@code unknown} makes of it (by default nothing).
 * Used by the Data Service's tests too (through the test-jar).
 */
public class TestReferences implements References {
  private final Map<UUID, DataClayObject> byId = new HashMap<>();
  private final Function<UUID, ObjectState> newState;
  private final Unknown unknown;

  /** What an ID never given out resolves to (null: nothing). */
  @FunctionalInterface
  public interface Unknown {
    DataClayObject resolve(Class<? extends DataClayObject> type, UUID id, UUID backend);
  }

  /** References giving volatile objects IDs on a backend of their own; unknown IDs resolve to null. */
  public TestReferences() {
    this(backendStates(UUID.randomUUID()), (type, id, backend) -> null);
  }

  /**
   * References giving an object without an ID the state {@code newState} makes for a fresh ID, and
   * resolving an ID never given out with {@code unknown}; what that resolves is kept.
   */
  public TestReferences(Function<UUID, ObjectState> newState, Unknown unknown) {
    this.newState = newState;
    this.unknown = unknown;
  }

  private static Function<UUID, ObjectState> backendStates(UUID backend) {
    return id -> new ObjectState(id, backend, false);
  }

  @Override
  public UUID encode(DataClayObject obj) {
    ObjectState s = ObjectStates.of(obj);
    if (s == null) {
      s = newState.apply(UUID.randomUUID());
      ObjectStates.set(obj, s);
    }
    byId.put(s.id(), obj);
    return s.id();
  }

  @Override
  public DataClayObject decode(Class<? extends DataClayObject> type, UUID id, UUID hint) {
    return byId.computeIfAbsent(id, k -> unknown.resolve(type, k, hint));
  }
}
