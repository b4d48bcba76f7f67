package io.dataclay.ds.peers;

import io.dataclay.client.Channels;
import io.dataclay.client.Copies;
import io.dataclay.common.CallScoped;
import io.dataclay.ds.codec.Messages;
import io.dataclay.ds.lm.BackendSession;
import io.dataclay.ds.replication.CopyResult;
import io.dataclay.ds.replication.ObjectCopy;
import io.dataclay.ds.replication.PeerBackends;
import io.dataclay.ds.session.Session;
import io.dataclay.ds.store.ObjectDelta;
import io.dataclay.proto.CopiedObject;
import io.dataclay.rpc.TlsSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * Other Data Services reached with this backend's own session; replica and move requests carry
 * the session of the client they are made for instead.
 */
public final class RemotePeers implements PeerBackends, AutoCloseable {
  // set around a request made on a client's behalf; read by the interceptor on the calling thread
  private static final CallScoped<String> ON_BEHALF = new CallScoped<>();

  private final BackendClients clients;
  private final LongSupplier term;

  /**
   * Peers reached with {@code self}'s session, over channels secured as {@code tls} says; copies and
   * changes sent carry this backend's {@code term}.
   */
  public RemotePeers(BackendSession self, TlsSettings tls, LongSupplier term) {
    this.term = term;
    this.clients = new BackendClients(() -> self.client().getBackends(), tls, () -> {
      String caller = ON_BEHALF.get();
      return caller != null ? caller : self.token();
    });
  }

  @Override
  public long storeCopies(String backendId, List<ObjectCopy> copies) {
    List<CopiedObject> out = new ArrayList<>(copies.size());
    long bytes = 0;
    for (ObjectCopy c : copies) {
      CopiedObject copied = CopiedObject.newBuilder().setObject(Messages.objectData(c.object()))
          .addAllReplicaBackendIds(c.replicaBackendIds()).build();
      bytes += copied.getSerializedSize();
      out.add(copied);
    }
    clients.call(backendId, client -> {
      client.storeCopies(out, term.getAsLong());
      return null;
    });
    return bytes;
  }

  @Override
  public void applyDeltas(String backendId, List<ObjectDelta> deltas) {
    send(backendId, deltas.stream().map(Messages::objectDelta).toList());
  }

  @Override
  public boolean wentSilent(long nanos) {
    return Channels.wentSilent(nanos);
  }

  @Override
  public void replaceStates(String backendId, List<ObjectDelta> states) {
    send(backendId, states.stream().map(Messages::wholeState).toList());
  }

  private void send(String backendId, List<io.dataclay.proto.ObjectDelta> out) {
    clients.call(backendId, client -> {
      client.applyDeltas(out, term.getAsLong());
      return null;
    });
  }

  @Override
  public void deleteObjects(String backendId, List<UUID> ids) {
    clients.call(backendId, client -> {
      client.deleteObjects(texts(ids));
      return null;
    });
  }

  @Override
  public CopyResult newReplica(Session caller, String backendId, List<UUID> ids, String target, boolean recursive) {
    return ON_BEHALF.call(caller.token(),
        () -> result(clients.call(backendId, client -> client.newReplica(texts(ids), target, recursive))));
  }

  @Override
  public CopyResult move(Session caller, String backendId, List<UUID> ids, String target, boolean recursive) {
    return ON_BEHALF.call(caller.token(),
        () -> result(clients.call(backendId, client -> client.move(texts(ids), target, recursive))));
  }

  @Override
  public void close() {
    clients.close();
  }

  private static CopyResult result(Copies r) {
    return new CopyResult(r.objectIds(), r.backendId() == null ? "" : r.backendId().toString(), r.bytesSent());
  }

  private static List<String> texts(List<UUID> ids) {
    return ids.stream().map(UUID::toString).toList();
  }
}
