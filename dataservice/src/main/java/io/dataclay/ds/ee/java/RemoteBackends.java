package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.client.DataServiceClient;
import io.dataclay.common.CallScoped;
import io.dataclay.ds.session.Session;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.References;
import java.util.UUID;
import java.util.function.Function;

/**
 * Other backends, reached from model code running here: an object's backend is its hint, else
 * its master as the Logic Module knows it; calls are made in the caller's session, so the other
 * backend applies the caller's permissions. A stale location is looked up once more.
 */
final class RemoteBackends implements RemoteObjects {
  /** The caller's token while a call on another backend is made for it (in-process environments). */
  static final CallScoped<String> CALLER_TOKEN = new CallScoped<>();

  private final Function<String, String> masterOf;
  private final BackendCalls clients;

  /** Backends reached through {@code clients}; {@code masterOf} gives an object's master backend ID. */
  RemoteBackends(Function<String, String> masterOf, BackendCalls clients) {
    this.masterOf = masterOf;
    this.clients = clients;
  }

  @Override
  public Object callMethod(Session session, ObjectCodec codec, References refs, DataClayObject target,
      String method, Object[] args) {
    byte[] payload = codec.encode(args, refs).value();
    byte[] result = onObject(session, target, c -> c.callMethod(target.getID(), method, payload));
    return codec.decode(result, refs, "result of " + target.getClass().getName() + "." + method);
  }

  @Override
  public Object getField(Session session, ObjectCodec codec, References refs, DataClayObject target, String field) {
    byte[] value = onObject(session, target, c -> c.getField(target.getID(), field));
    return codec.decode(value, refs, "field " + target.getClass().getName() + "." + field);
  }

  @Override
  public void setField(Session session, ObjectCodec codec, References refs, DataClayObject target, String field,
      Object value) {
    byte[] encoded = codec.encode(value, refs).value();
    onObject(session, target, c -> {
      c.setField(target.getID(), field, encoded);
      return null;
    });
  }

  // Runs op on the backend of target (its hint, else its master), in the caller's session; a stale
  // hint is replaced by the master's location once.
  private <T> T onObject(Session session, DataClayObject target, Function<DataServiceClient, T> op) {
    String id = target.getID();
    ObjectState state = ObjectStates.of(target);
    String backend = state.backend() != null ? state.backend().toString() : masterOf.apply(id);
    return CALLER_TOKEN.call(session.token(), () -> {
      try {
        return clients.call(backend, op);
      } catch (ObjectNotHereException | BackendDoesNotExistException e) {
        String master = masterOf.apply(id);
        if (master.equals(backend)) {
          throw e;
        }
        ObjectStates.set(target, new ObjectState(target.getObjectId(), UUID.fromString(master), true));
        return clients.call(master, op);
      }
    });
  }

  @Override
  public void close() {
    clients.close();
  }
}
