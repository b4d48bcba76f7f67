package io.dataclay.ds.peers;

import io.dataclay.client.DataServiceClient;
import io.dataclay.exceptions.BackendDoesNotExistException;
import io.dataclay.exceptions.BackendUnavailableException;
import io.dataclay.proto.BackendInfo;
import io.dataclay.rpc.TlsSettings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One open client per other Data Service, found by ID in the Logic Module's backend list. A
 * backend that fails to answer is forgotten, so the next call looks it up again: it may have
 * restarted on another port.
 */
public final class BackendClients implements AutoCloseable {
  private final Supplier<List<BackendInfo>> backends;
  private final Supplier<String> token;
  private final TlsSettings tls;
  private final Map<String, DataServiceClient> clients = new ConcurrentHashMap<>();

  /**
   * Clients of the backends {@code backends} lists, whose calls carry {@code token}'s session, over
   * channels secured as {@code tls} says (a server's settings: it presents its certificate).
   */
  public BackendClients(Supplier<List<BackendInfo>> backends, TlsSettings tls, Supplier<String> token) {
    this.backends = backends;
    this.tls = tls;
    this.token = token;
  }

  /**
   * {@code rpc} on the client of {@code backendId}.
   *
   * @throws BackendDoesNotExistException when no such backend is registered
   * @throws BackendUnavailableException when it does not answer (its client is forgotten)
   */
  public <T> T call(String backendId, Function<DataServiceClient, T> rpc) {
    DataServiceClient client = client(backendId);
    try {
      return rpc.apply(client);
    } catch (BackendUnavailableException e) {
      if (clients.remove(backendId, client)) {
        client.close();
      }
      throw e;
    }
  }

  @Override
  public void close() {
    clients.values().forEach(DataServiceClient::close);
    clients.clear();
  }

  private DataServiceClient client(String backendId) {
    DataServiceClient known = clients.get(backendId);
    if (known != null) {
      return known;
    }
    BackendInfo b = backends.get().stream().filter(x -> x.getId().equals(backendId)).findFirst()
        .orElseThrow(() -> new BackendDoesNotExistException("no backend " + backendId + " is registered"));
    return clients.computeIfAbsent(backendId, k -> new DataServiceClient(b.getHost(), b.getPort(), tls, token));
  }
}
