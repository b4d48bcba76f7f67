package io.dataclay.ds.ee.java;

import io.dataclay.client.DataServiceClient;
import io.dataclay.client.LogicModuleClient;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.store.StoredObject;
import io.dataclay.proto.LoadReply;
import io.dataclay.rpc.GrpcErrors;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * Where one call runs in a confined Java environment: objects of this backend come over the link
 * (read by the Data Service in the caller's session, each once per call), and other backends and
 * the Logic Module are reached through relayed calls for this call.
 */
final class LinkedHost implements CallHost {
  private static final String RELAYED = "relayed";

  private final LinkEndpoint link;
  private final long callId;
  private final UUID backendId;
  private final Map<UUID, Optional<StoredObject>> seen = new HashMap<>();
  private final RemoteObjects remote;

  /** The host of call {@code callId} on backend {@code backendId}. */
  LinkedHost(LinkEndpoint link, long callId, UUID backendId) {
    this.link = link;
    this.callId = callId;
    this.backendId = backendId;
    LogicModuleClient lm = new LogicModuleClient(new RelayChannel(link, callId, ""), () -> RELAYED);
    this.remote = new RemoteBackends(id -> lm.getObjectInfo(id).backendId().toString(), new BackendCalls() {
      @Override
      public <T> T call(String target, Function<DataServiceClient, T> rpc) {
        return rpc.apply(new DataServiceClient(new RelayChannel(link, callId, target), () -> RELAYED));
      }

      @Override
      public void close() {}
    });
  }

  @Override
  public UUID backendId() {
    return backendId;
  }

  @Override
  public Optional<StoredObject> stored(UUID id) {
    Optional<StoredObject> known = seen.get(id);
    if (known != null) {
      return known;
    }
    LoadReply reply = link.load(callId, List.of(id.toString()));
    if (reply.hasError() && reply.getError().getCodeValue() != 0) {
      throw GrpcErrors.fromInfo(reply.getError());
    }
    Optional<StoredObject> found = reply.getObjectsList().stream()
        .filter(o -> o.getId().equals(id.toString())).findFirst()
        .map(o -> Messages.storedObject(o, "loaded object"));
    seen.put(id, found);
    return found;
  }

  @Override
  public boolean storedHere(UUID id) {
    return stored(id).isPresent();
  }

  @Override
  public RemoteObjects remote() {
    return remote;
  }
}
