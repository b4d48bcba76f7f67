package io.dataclay.ds.ee;

import io.dataclay.common.Language;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.session.Permissions;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectStore;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.exceptions.DataClayException;
import io.dataclay.exceptions.InternalException;
import io.dataclay.exceptions.InvalidArgumentException;
import io.dataclay.exceptions.PermissionDeniedException;
import io.dataclay.proto.LoadReply;
import io.dataclay.proto.LoadRequest;
import io.dataclay.rpc.GrpcErrors;
import java.util.Optional;
import java.util.UUID;

/**
 * Answers an execution environment's {@code load}: the stored state of objects of this backend,
 * read in the session of the call the request names, for objects of the environment's language
 * only. The object is recorded as held by the process before its state is read, so a change
 * stored meanwhile is followed by an eviction (see {@link EnvironmentLink#holds}).
 */
public final class StateLoads {
  /** The most objects one load may ask for. */
  static final int MAX_IDS = 10_000;

  private final ObjectStore store;

  /** Loads from {@code store} (the Data Service's, as every component writes it). */
  public StateLoads(ObjectStore store) {
    this.store = store;
  }

  /** The reply to {@code request} from {@code link}, whose call (if still in flight) ran in {@code session}. */
  LoadReply serve(EnvironmentLink link, Session session, LoadRequest request) {
    LoadReply.Builder reply = LoadReply.newBuilder().setRequestId(request.getRequestId());
    try {
      if (session == null) {
        throw new PermissionDeniedException("load names call " + request.getCallId()
            + ", which is not in flight on this execution environment's link");
      }
      if (request.getIdsCount() > MAX_IDS) {
        throw new InvalidArgumentException("load.ids: at most " + MAX_IDS + " objects per load, not "
            + request.getIdsCount());
      }
      Language language = link.language();
      for (int i = 0; i < request.getIdsCount(); i++) {
        UUID id = Messages.uuid(request.getIds(i), "load.ids[" + i + "]");
        link.holds(id);
        Optional<StoredObject> found = store.get(id);
        if (found.isEmpty()) {
          continue;
        }
        StoredObject o = found.get();
        Permissions.check(session, id, o.header());
        if (o.header().language() != language) {
          throw new InvalidArgumentException("object " + id + " is a " + o.header().language() + " object; this "
              + language + " execution environment cannot load it");
        }
        reply.addObjects(Messages.objectData(o));
      }
    } catch (DataClayException e) {
      return reply.clearObjects().setError(GrpcErrors.info(e)).build();
    } catch (RuntimeException e) {
      return reply.clearObjects().setError(GrpcErrors.info(new InternalException("loading objects failed: " + e)))
          .build();
    }
    return reply.build();
  }
}
