package io.dataclay.runtime;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.client.NewObject;
import io.dataclay.common.Language;
import io.dataclay.exceptions.ObjectNotPersistentException;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.References;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Names and encodes a graph of volatile model objects for one make persistent: each volatile
 * object met gets an ID and is queued (unless recursion is off, which refuses it); persistent
 * ones are written as references. Until {@link #commit} the objects stay volatile.
 */
final class GraphWriter implements References {
  private final ObjectCodec codec;
  private final UUID backend;
  private final boolean recursive;
  private final Map<DataClayObject, UUID> assigned = new IdentityHashMap<>();
  private final ArrayDeque<DataClayObject> queue = new ArrayDeque<>();
  private final References decoder;

  GraphWriter(ObjectCodec codec, UUID backend, boolean recursive, References decoder) {
    this.codec = codec;
    this.backend = backend;
    this.recursive = recursive;
    this.decoder = decoder;
  }

  /** Names {@code root} and everything it reaches; returns their stored forms, root first. */
  List<NewObject> write(DataClayObject root) {
    assign(root);
    return drain();
  }

  /** The stored forms of the objects named so far (while encoding other values) and of all they reach. */
  List<NewObject> drain() {
    List<NewObject> out = new ArrayList<>();
    while (!queue.isEmpty()) {
      DataClayObject obj = queue.poll();
      out.add(new NewObject(assigned.get(obj), obj.getClass().getName(), Language.JAVA,
          codec.encodeFields(obj, this)));
    }
    return out;
  }

  /** Whether the graph had volatile objects to store. */
  boolean isEmpty() {
    return assigned.isEmpty();
  }

  /** The stored objects become proxies living on the backend. */
  void commit() {
    assigned.forEach((obj, id) -> ObjectStates.set(obj, new ObjectState(id, backend, true)));
  }

  @Override
  public UUID encode(DataClayObject obj) {
    ObjectState s = ObjectStates.of(obj);
    if (s != null) {
      return s.id();
    }
    UUID id = assigned.get(obj);
    if (id != null) {
      return id;
    }
    if (!recursive) {
      throw new ObjectNotPersistentException("a " + obj.getClass().getName() + " reached from the object is not "
          + "persistent and recursive is false: make it persistent first or pass recursive=true");
    }
    return assign(obj);
  }

  private UUID assign(DataClayObject obj) {
    UUID id = UUID.randomUUID();
    assigned.put(obj, id);
    queue.add(obj);
    return id;
  }

  @Override
  public DataClayObject decode(Class<? extends DataClayObject> type, UUID id, UUID hint) {
    return decoder.decode(type, id, hint);
  }
}
