package io.dataclay.ds.lm;

import io.dataclay.client.LogicModuleClient;
import io.dataclay.proto.SessionInfo;
import io.dataclay.rpc.TlsSettings;
import io.grpc.Channel;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The Data Service's own administrator session with the Logic Module, and the client that uses
 * it. Logs in again when the session nears its expiry or when told the Logic Module forgot it.
 */
public final class AdminSession implements AutoCloseable {
  private static final long RENEW_BEFORE_MS = 60_000;

  private final String user;
  private final String password;
  private final LogicModuleClient client;
  private volatile String token;
  private volatile long expiresAtMs;

  /** A session of {@code user} over a client built by {@code clients} (given the token supplier). */
  public AdminSession(String user, String password, Function<Supplier<String>, LogicModuleClient> clients) {
    this.user = user;
    this.password = password;
    this.client = clients.apply(() -> token);
  }

  /** A session to the Logic Module at {@code host:port}, over a channel secured as {@code tls} says. */
  public static AdminSession connect(String host, int port, TlsSettings tls, String user, String password) {
    return new AdminSession(user, password, token -> new LogicModuleClient(host, port, tls, token));
  }

  /** A session over a channel owned by the caller (tests). */
  public static AdminSession over(Channel channel, String user, String password) {
    return new AdminSession(user, password, token -> new LogicModuleClient(channel, token));
  }

  /** Opens a new session (replacing any previous one). */
  public synchronized void login() {
    SessionInfo info = client.newSession(user, password, "");
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
