package io.dataclay.ds.lm;

import io.dataclay.client.LogicModuleClient;
import io.dataclay.common.ClusterSecret;
import io.dataclay.proto.SessionInfo;
import io.dataclay.rpc.TlsSettings;
import io.grpc.Channel;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The Data Service's own session with the Logic Module, and the client that uses it. It logs in
 * as backend {@code backendId} by proving it knows the cluster secret (no user's password is
 * involved), again when the session nears its expiry or when told the Logic Module forgot it.
 * Other backends accept its token as a backend's.
 */
public final class BackendSession implements AutoCloseable {
  private static final long RENEW_BEFORE_MS = 60_000;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ClusterSecret secret;
  private final String backendId;
  private final LogicModuleClient client;
  private volatile String token;
  private volatile long expiresAtMs;

  /** A session of backend {@code backendId} over a client built by {@code clients} (given the token supplier). */
  public BackendSession(ClusterSecret secret, UUID backendId, Function<Supplier<String>, LogicModuleClient> clients) {
    this.secret = secret;
    this.backendId = backendId.toString();
    this.client = clients.apply(() -> token);
  }

  /** A session to the Logic Module at {@code host:port}, over a channel secured as {@code tls} says. */
  public static BackendSession connect(String host, int port, TlsSettings tls, ClusterSecret secret, UUID backendId) {
    return new BackendSession(secret, backendId, token -> new LogicModuleClient(host, port, tls, token));
  }

  /** A session over a channel owned by the caller (tests). */
  public static BackendSession over(Channel channel, ClusterSecret secret, UUID backendId) {
    return new BackendSession(secret, backendId, token -> new LogicModuleClient(channel, token));
  }

  /** Opens a new session (replacing any previous one). */
  public synchronized void login() {
    byte[] bits = new byte[18];
    RANDOM.nextBytes(bits);
    String nonce = Base64.getUrlEncoder().withoutPadding().encodeToString(bits);
    long now = System.currentTimeMillis();
    SessionInfo info = client.newBackendSession(backendId, now, nonce, secret.proof(backendId, now, nonce));
    token = info.getToken();
    expiresAtMs = info.getExpiresAtMs();
  }

  /** The client, logged in and with a session that is not about to expire. */
  public LogicModuleClient client() {
    if (token == null || System.currentTimeMillis() > expiresAtMs - RENEW_BEFORE_MS) {
      synchronized (this) {
        if (token == null || System.currentTimeMillis() > expiresAtMs - RENEW_BEFORE_MS) {
          login();
        }
      }
    }
    return client;
  }

  /** The session's token, logged in and not about to expire (other backends accept it too). */
  public String token() {
    client();
    return token;
  }

  @Override
  public void close() {
    client.close();
  }
}
