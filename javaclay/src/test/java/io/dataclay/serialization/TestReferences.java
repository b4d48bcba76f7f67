package io.dataclay.serialization;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/** References that give volatile objects IDs and resolve IDs to the objects they were given to. */
final class TestReferences implements References {
  final Map<UUID, DataClayObject> byId = new HashMap<>();
  private final UUID backend = UUID.randomUUID();

  @Override
  public UUID encode(DataClayObject obj) {
    ObjectState s = ObjectStates.of(obj);
    if (s == null) {
      s = new ObjectState(UUID.randomUUID(), backend, false);
      ObjectStates.set(obj, s);
    }
    byId.put(s.id(), obj);
    return s.id();
  }

  @Override
  public DataClayObject decode(Class<? extends DataClayObject> type, UUID id, UUID hint) {
    return byId.get(id);
  }
}
