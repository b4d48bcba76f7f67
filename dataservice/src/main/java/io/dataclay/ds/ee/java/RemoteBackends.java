package io.dataclay.ds.ee.java;

import io.dataclay.api.DataClayObject;
import io.dataclay.api.ObjectState;
import io.dataclay.api.ObjectStates;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.ds.peers.BackendClients;
import io.dataclay.ds.service.Session;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.ObjectNotHereException;
import io.dataclay.serialization.ObjectCodec;
import io.dataclay.serialization.References;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Other backends, reached from model code running here: locations come from the Logic Module
 * (through this backend's administrator session), calls carry the caller's own session token, so
 * the other backend applies the caller's permissions. A stale location is looked up once more.
 */
final class RemoteBackends implements RemoteObjects {
  private static final ThreadLocal<String> CALLER_TOKEN = new ThreadLocal<>();

  private final Supplier<LogicModuleClient> lm;
  private final BackendClients clients;

  /** Backends located through {@code lm}, an administrator's Logic Module client. */
  RemoteBackends(Supplier<LogicModuleClient> lm) {
    this.lm = lm;
    this.clients = new BackendClients(() -> lm.get().getBackends(), CALLER_TOKEN::get);
  }

  @Override
  public Object callMethod(Session session, ObjectCodec codec, References refs, DataClayObject target,
      String method, Object[] args) {
    String id = target.getID();
    ObjectState state = ObjectStates.of(target);
    String backend = state.backend() != null ? state.backend().toString() : lm.get().getObjectInfo(id).getMasterBackendId();
    byte[] payload = codec.encode(args, refs).value();
    byte[] result;
    String outer = CALLER_TOKEN.get();
    CALLER_TOKEN.set(session.token());
    try {
      try {
        result = clients.call(backend, c -> c.callMethod(id, method, payload));
      } catch (ObjectNotHereException | BackendDoesNotExistException e) {
        String master = lm.get().getObjectInfo(id).getMasterBackendId();
        if (master.equals(backend)) {
          throw e;
        }
        ObjectStates.set(target, new ObjectState(target.getObjectId(), UUID.fromString(master), true));
        result = clients.call(master, c -> c.callMethod(id, method, payload));
      }
    } finally {
      if (outer == null) {
        CALLER_TOKEN.remove();
      } else {
        CALLER_TOKEN.set(outer);
      }
    }
    return codec.decode(result, refs, "result of " + target.getClass().getName() + "." + method);
  }

  @Override
  public void close() {
    clients.close();
  }
}
